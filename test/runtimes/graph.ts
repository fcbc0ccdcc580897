// shared/graph, shared/producer and shared/config under whichever runtime runs this file.
import assert from "node:assert/strict";
import { parseConfigYaml } from "../../shared/config/parse.ts";
import { DEFAULT_CONFIG } from "../../shared/config/schema.ts";
import { CompactGraph, compactFromSnapshot } from "../../shared/graph/compact.ts";
import {
  analyzeCompact,
  asGraphAnalysis,
  scanCompact,
} from "../../shared/graph/compact-analysis.ts";
import { fnv1a32, rotateForMachine } from "../../shared/graph/hash.ts";
import { decodeCursor, encodeCursor, readyPage } from "../../shared/graph/pages.ts";
import { canonicalRef, compareRefs, parseCrossRepoRef, refKey } from "../../shared/graph/refs.ts";
import { scan } from "../../shared/graph/scan.ts";
import { parseSnapshot } from "../../shared/graph/snapshot.ts";
import { applyPlan } from "../../shared/producer/apply.ts";
import { plan, planFromAnalysis } from "../../shared/producer/plan.ts";
import { ValidationError } from "../../shared/validation.ts";
import {
  applyToCompact,
  type CompactOp,
  NOW_MS,
  REPO,
  RowModel,
} from "../support/compact-model.ts";
import { loadGraphFixtures } from "../support/graph-fixtures.ts";
import { oracleScan } from "../support/oracle/scan.ts";
import type { Check } from "./harness.ts";

const fixtures = await loadGraphFixtures();

export const checks: Check[] = [
  ...fixtures.map((fixture) => ({
    name: `golden ${fixture.name}`,
    run() {
      const snapshot = parseSnapshot(fixture.snapshot);
      assert.deepEqual(scan(snapshot, fixture.options), fixture.scan);
      const labelPlan = plan(snapshot, fixture.options);
      assert.deepEqual(labelPlan, fixture.plan);
      const applied = applyPlan(snapshot, labelPlan, fixture.scan.now);
      assert.deepEqual(plan(applied, fixture.options), { add: [], remove: [] });
    },
  })),
  ...fixtures.map((fixture) => ({
    name: `compact graph, golden ${fixture.name}`,
    run() {
      const snapshot = parseSnapshot(fixture.snapshot);
      const labels = (fixture.options.config ?? DEFAULT_CONFIG).labels;
      const options =
        snapshot.now !== undefined && fixture.options.now === undefined
          ? { ...fixture.options, now: snapshot.now }
          : fixture.options;
      const compact = compactFromSnapshot(snapshot, labels);
      assert.deepEqual(scanCompact(compact, options), fixture.scan);
      assert.deepEqual(
        planFromAnalysis(asGraphAnalysis(analyzeCompact(compact, options)), options),
        fixture.plan,
      );
    },
  })),
  {
    name: "compact graph changed in place equals the oracle's scan of the same rows",
    run() {
      const compact = new CompactGraph(REPO, DEFAULT_CONFIG.labels);
      const model = new RowModel();
      const now = new Date(NOW_MS).toISOString();
      const ops = [
        { op: "upsert", number: 1, closed: false, closedMs: 0, labels: [], requires: [] },
        {
          op: "upsert",
          number: 2,
          closed: false,
          closedMs: 0,
          labels: ["agent:hold"],
          requires: [],
        },
        { op: "blocker", issue: 1, blocker: 2, present: true },
        { op: "blocker", issue: 1, blocker: "Other/Lib#2", present: true },
        { op: "external", ref: "other/lib#2", closed: true, closedMs: NOW_MS - 60_000 },
        { op: "parent", child: 2, parent: 3 },
        { op: "upsert", number: 3, closed: false, closedMs: 0, labels: [], requires: ["gpu"] },
        {
          op: "upsert",
          number: 2,
          closed: true,
          closedMs: NOW_MS - 30_000,
          labels: [],
          requires: [],
        },
        { op: "delete-blockers", number: 2 },
        { op: "delete", number: 3 },
      ] satisfies CompactOp[];
      for (const op of ops) {
        applyToCompact(compact, op);
        model.apply(op);
        const options = { now, causes: [2, "other/lib#2"] };
        assert.deepEqual(scanCompact(compact, options), oracleScan(model.snapshot(), options));
      }
    },
  },
  {
    name: "graph pages: cursors round-trip and pages concatenate to the rotated list",
    run() {
      const sorted = [2, 3, 5, 8, 13, 21, 34];
      const out: number[] = [];
      let cursor = null as ReturnType<typeof decodeCursor>;
      for (;;) {
        const page = readyPage(sorted, "alpha", cursor as never, 3);
        out.push(...page.items);
        if (page.next === null) break;
        cursor = decodeCursor(page.next);
      }
      assert.deepEqual(out, rotateForMachine(sorted, "alpha"));
      assert.deepEqual(decodeCursor(encodeCursor({ l: "blocked", a: 7 })), { l: "blocked", a: 7 });
    },
  },
  {
    name: "fnv1a32 reference vectors and rotation",
    run() {
      assert.equal(fnv1a32(""), 0x811c9dc5);
      assert.equal(fnv1a32("foobar"), 0xbf9cf968);
      assert.deepEqual(rotateForMachine([1, 2, 3, 4, 5], "alpha"), [3, 4, 5, 1, 2]);
    },
  },
  {
    name: "references",
    run() {
      assert.equal(canonicalRef("Acme/Rocket#4", "acme/rocket"), 4);
      assert.equal(canonicalRef("other/lib#4", "acme/rocket"), "other/lib#4");
      assert.equal(refKey("Other/Lib#4"), refKey("other/lib#4"));
      assert.deepEqual(parseCrossRepoRef("o/r#12"), { owner: "o", repo: "r", number: 12 });
      assert.equal(parseCrossRepoRef("o/r#0"), null);
      assert.deepEqual([`b/c#1`, 3, `a/b#2`, 1].sort(compareRefs), [1, 3, "a/b#2", "b/c#1"]);
    },
  },
  {
    name: "invalid snapshots name the first bad path",
    run() {
      assert.throws(
        () => parseSnapshot({ repo: "a/b", issues: [{ number: "one" }] }),
        (e: unknown) => e instanceof ValidationError && e.path === "issues[0].number",
      );
    },
  },
  {
    name: "config YAML",
    run() {
      assert.deepEqual(parseConfigYaml(""), { ok: true, config: DEFAULT_CONFIG });
      const bad = parseConfigYaml("queue:\n  mode: x\n");
      assert.equal(bad.ok, false);
      assert.match(bad.ok ? "" : bad.error, /queue\.mode/);
    },
  },
];
