import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../shared/config/schema.ts";
import { CompactGraph, compactFromSnapshot } from "../../../shared/graph/compact.ts";
import {
  analyzeCompact,
  asGraphAnalysis,
  renderCompactScan,
  scanCompact,
} from "../../../shared/graph/compact-analysis.ts";
import type { ScanOptions } from "../../../shared/graph/options.ts";
import { parseSnapshot, type Snapshot } from "../../../shared/graph/snapshot.ts";
import { planFromAnalysis } from "../../../shared/producer/plan.ts";
import { impactLookup, impactScores } from "../../../shared/queue/impact.ts";
import { queueItems } from "../../../shared/queue/queue.ts";
import {
  applyToCompact,
  type CompactOp,
  compactOpArbitrary,
  NOW_MS,
  REPO,
  RowModel,
} from "../../support/compact-model.ts";
import { snapshotArbitrary } from "../../support/graph-arbitraries.ts";
import { loadGraphFixtures } from "../../support/graph-fixtures.ts";
import { analyzeGraph } from "../../support/oracle/analyze.ts";
import { oracleImpact } from "../../support/oracle/impact.ts";
import { oracleScan } from "../../support/oracle/scan.ts";

const fixtures = await loadGraphFixtures();
const labelsOf = (options: ScanOptions) => (options.config ?? DEFAULT_CONFIG).labels;
/** The compact graph does not keep the snapshot's `now`: the caller passes it. */
const withNow = (snapshot: Snapshot, options: ScanOptions): ScanOptions =>
  snapshot.now !== undefined && options.now === undefined
    ? { ...options, now: snapshot.now }
    : options;

/** Every answer the Worker reads, from the compact analysis and from the oracle (test/support). */
function expectSameAnswers(snapshot: Snapshot, options: ScanOptions, compact: CompactGraph) {
  const opts = withNow(snapshot, options);
  const plain = analyzeGraph(snapshot, options);
  const analysis = analyzeCompact(compact, opts);
  expect(renderCompactScan(analysis)).toEqual(oracleScan(snapshot, options));
  const adapted = asGraphAnalysis(analysis);
  expect(adapted.open).toEqual(plain.open);
  expect(planFromAnalysis(adapted, options)).toEqual(planFromAnalysis(plain, options));
  expect(adapted.readyFacts()).toEqual(plain.readyFacts());
  const impact = oracleImpact(snapshot);
  expect(impactScores(adapted)).toEqual(impact);
  // The queue view's lookup (a score per slot) answers what the Map does, absent numbers too.
  const lookup = impactLookup(adapted);
  for (const issue of snapshot.issues)
    expect(lookup.get(issue.number)).toBe(impact.get(issue.number));
  expect(lookup.get(1_000_000)).toBeUndefined();
  const inputs = { reasons: new Map(), requires: () => [], impact: new Map() };
  expect(queueItems(adapted, inputs)).toEqual(queueItems(plain, inputs));
  for (const facts of plain.open) expect(adapted.factsOf(facts.number)).toEqual(facts);
  for (const issue of snapshot.issues) {
    const n = issue.number;
    expect(adapted.graph.childrenOf(n)).toEqual(plain.graph.childrenOf(n));
    expect(adapted.graph.blockedBy(n)).toEqual(plain.graph.blockedBy(n));
    expect(adapted.graph.issue(n)?.labels).toEqual(issue.labels);
    expect(adapted.graph.issue(n)?.state).toEqual(issue.state);
  }
}

const modes = fc.record({
  mode: fc.constantFrom("events" as const, "all" as const),
  approvalLabel: fc.constantFrom(null, "idd:ready"),
  machine: fc.option(fc.string({ minLength: 1, maxLength: 8 }), { nil: undefined }),
  causes: fc.option(
    fc.array(
      fc.oneof(fc.integer({ min: 1, max: 14 }), fc.constantFrom("other/lib#2", "far/away#7")),
      {
        maxLength: 4,
      },
    ),
    { nil: undefined },
  ),
  ownLocks: fc.option(
    fc.uniqueArray(fc.integer({ min: 1, max: 14 }), { maxLength: 3 }).map((l) => new Set(l)),
    { nil: undefined },
  ),
});

describe("compact graph (typed arrays) against the oracle", () => {
  for (const fixture of fixtures) {
    it(`golden ${fixture.name}`, () => {
      const snapshot = parseSnapshot(fixture.snapshot);
      const compact = compactFromSnapshot(snapshot, labelsOf(fixture.options));
      const options = withNow(snapshot, fixture.options);
      expect(scanCompact(compact, options)).toEqual(fixture.scan);
      expect(planFromAnalysis(asGraphAnalysis(analyzeCompact(compact, options)), options)).toEqual(
        fixture.plan,
      );
      expectSameAnswers(snapshot, fixture.options, compact);
    });
  }

  it("agrees on random snapshots", () => {
    fc.assert(
      fc.property(snapshotArbitrary(), modes, (input, options) => {
        const snapshot = parseSnapshot(input);
        expectSameAnswers(snapshot, options, compactFromSnapshot(snapshot, DEFAULT_CONFIG.labels));
      }),
      { numRuns: 300 },
    );
  });

  it("agrees after every change of a random sequence applied in place", () => {
    fc.assert(
      fc.property(
        fc.array(compactOpArbitrary(), { minLength: 1, maxLength: 40 }),
        modes,
        (ops, options) => {
          const compact = new CompactGraph(REPO, DEFAULT_CONFIG.labels);
          const model = new RowModel();
          const opts = { ...options, now: new Date(NOW_MS).toISOString() };
          for (const op of ops) {
            applyToCompact(compact, op);
            model.apply(op);
            expect(scanCompact(compact, opts)).toEqual(oracleScan(model.snapshot(), opts));
          }
          expectSameAnswers(model.snapshot(), opts, compact);
          for (const [number, requires] of model.requires) {
            const slot = compact.presentSlot(number);
            if (model.issues.has(number)) expect(compact.requiresOf(slot)).toEqual(requires);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("breaks ties between events of one label as the stored rows list them", () => {
    for (const first of ["labeled", "unlabeled"] as const) {
      const second = first === "labeled" ? "unlabeled" : "labeled";
      const ops = [
        { op: "upsert", number: 1, closed: false, closedMs: 0, labels: [], requires: [] },
        {
          op: "event",
          number: 1,
          label: "needs-human-confirm",
          action: first,
          ms: NOW_MS - 60_000,
        },
        {
          op: "event",
          number: 1,
          label: "needs-human-confirm",
          action: second,
          ms: NOW_MS - 60_000,
        },
      ] satisfies CompactOp[];
      const compact = new CompactGraph(REPO, DEFAULT_CONFIG.labels);
      const model = new RowModel();
      for (const op of ops) {
        applyToCompact(compact, op);
        model.apply(op);
      }
      const opts = { now: new Date(NOW_MS).toISOString() };
      // `unlabeled` lists after `labeled` at one time: the human gate is off, #1 is ready.
      expect(scanCompact(compact, opts).ready).toEqual([1]);
      expect(oracleScan(model.snapshot(), opts).ready).toEqual([1]);
    }
  });

  it("counts a rule change for every issue row change but a retitling", () => {
    const row = fc.record({
      title: fc.constantFrom("a", "b"),
      state: fc.constantFrom("open" as const, "closed" as const),
      closedAt: fc.constantFrom(null, "2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"),
      labels: fc.constantFrom([], ["agent:ready"], ["agent:ready", "x"]),
      requires: fc.constantFrom(undefined, ["gpu"]),
    });
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 8 }), (rows) => {
        const compact = new CompactGraph(REPO, DEFAULT_CONFIG.labels);
        let before: (typeof rows)[number] | null = null;
        for (const r of rows) {
          const changes = compact.changes;
          const ruleChanges = compact.ruleChanges;
          compact.upsertIssue({ number: 7, ...r });
          expect(compact.changes).toBe(changes + 1);
          const retitled =
            before !== null &&
            before.state === r.state &&
            before.closedAt === r.closedAt &&
            JSON.stringify(before.labels) === JSON.stringify(r.labels) &&
            JSON.stringify(before.requires ?? []) === JSON.stringify(r.requires ?? []);
          expect(compact.ruleChanges).toBe(ruleChanges + (retitled ? 0 : 1));
          before = r;
        }
      }),
    );
  });

  it("keeps slots and the blocker pool bounded under churn", () => {
    const compact = new CompactGraph(REPO, DEFAULT_CONFIG.labels);
    for (let round = 0; round < 50; round++) {
      for (let n = 1; n <= 200; n++) {
        compact.upsertIssue({ number: n, title: "t", state: "open", closedAt: null, labels: [] });
        compact.setBlockers(n, round % 2 === 0 ? [n + 1, n + 2, "other/lib#1"] : [n + 1]);
      }
      for (let n = 1; n <= 200; n++) {
        compact.setBlockers(n, []);
        compact.deleteIssue(n);
      }
    }
    expect(compact.size).toBeLessThanOrEqual(202);
    expect(compact.blockerPool.length).toBeLessThanOrEqual(4096);
    expect(compact.issueCount()).toBe(0);
  });
});
