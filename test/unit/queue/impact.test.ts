import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { analyzeSnapshot } from "../../../shared/graph/analyze.ts";
import { parseSnapshot, type Snapshot } from "../../../shared/graph/snapshot.ts";
import { EXACT_IMPACT_LIMIT, impactLookup, impactScores } from "../../../shared/queue/impact.ts";
import { oracleImpact } from "../../support/oracle/impact.ts";

const issue = (number: number, extra: Partial<Snapshot["issues"][number]> = {}) => ({
  number,
  title: `#${number}`,
  state: "open" as const,
  stateReason: null,
  createdAt: "2026-11-01T00:00:00Z",
  updatedAt: "2026-11-01T00:00:00Z",
  closedAt: null,
  labels: [],
  ...extra,
});

const snapshotOf = (issues: Snapshot["issues"]) =>
  parseSnapshot({ repo: "o/r", now: "2026-12-01T00:00:00Z", issues });
const scores = (issues: Snapshot["issues"]) =>
  Object.fromEntries(impactScores(analyzeSnapshot(snapshotOf(issues))));

describe("impact", () => {
  it("counts open issues transitively waiting: blocked issues and parents, closed ones not", () => {
    const s = scores([
      issue(1),
      issue(2, { blockedBy: [1] }),
      issue(3, { blockedBy: [2] }),
      issue(4, { blockedBy: [1], state: "closed", closedAt: "2026-11-02T00:00:00Z" }),
      issue(5, { parent: 6 }),
      issue(6),
      issue(7, { blockedBy: [1, 2] }),
    ]);
    expect(s).toEqual({ 1: 3, 2: 2, 3: 0, 5: 1, 6: 0, 7: 0 });
  });

  it("counts each member of a cycle once, and the others on it", () => {
    const s = scores([
      issue(1, { blockedBy: [2] }),
      issue(2, { blockedBy: [1] }),
      issue(3, { blockedBy: [2] }),
    ]);
    expect(s).toEqual({ 1: 2, 2: 2, 3: 0 });
  });

  it("equals the oracle's reachability walk on random graphs (diamonds, cycles, parents)", () => {
    const graph = fc.integer({ min: 1, max: 14 }).chain((n) =>
      fc.tuple(
        fc.constant(n),
        fc.array(fc.tuple(fc.integer({ min: 1, max: n }), fc.integer({ min: 1, max: n })), {
          maxLength: 30,
        }),
        fc.array(fc.option(fc.integer({ min: 1, max: n }), { nil: null }), {
          minLength: n,
          maxLength: n,
        }),
        fc.array(fc.boolean(), { minLength: n, maxLength: n }),
      ),
    );
    fc.assert(
      fc.property(graph, ([n, edges, parents, closed]) => {
        const issues = Array.from({ length: n }, (_, k) => {
          const number = k + 1;
          const blockedBy = [...new Set(edges.filter(([x]) => x === number).map(([, b]) => b))];
          return issue(number, {
            blockedBy,
            parent: parents[k] === number ? null : parents[k]!,
            ...(closed[k] ? { state: "closed" as const, closedAt: "2026-11-02T00:00:00Z" } : {}),
          });
        });
        expect(scores(issues)).toEqual(Object.fromEntries(oracleImpact(snapshotOf(issues))));
      }),
      { numRuns: 300 },
    );
  });

  it("counts exactly on trees and chains above the exact-reach limit", () => {
    // Over EXACT_IMPACT_LIMIT components the count is summed over the condensation: exact when
    // no two paths rejoin. A tree of sub-issues (the first half) and chains of blockers.
    const n = EXACT_IMPACT_LIMIT + 1_500;
    const half = n / 2;
    const issues = Array.from({ length: n }, (_, k) => {
      const number = k + 1;
      return issue(number, {
        parent: number <= half && number > 1 ? Math.floor(number / 2) : null,
        blockedBy: number > half + 1 && number % 7 !== 0 ? [number - 1] : [],
      });
    });
    const snapshot = parseSnapshot({ repo: "o/r", now: "2026-12-01T00:00:00Z", issues });
    const analysis = analyzeSnapshot(snapshot);
    const plain = impactScores(analysis);
    for (let number = 1; number <= n; number++) {
      // In the tree, the issues waiting on x are its ancestors; in a chain, the ones after it.
      let expected = Math.floor(Math.log2(number));
      if (number > half) {
        expected = 0;
        for (let y = number + 1; y <= n && y % 7 !== 0; y++) expected += 1;
      }
      expect(plain.get(number)).toBe(expected);
    }
    const lookup = impactLookup(analysis);
    for (let number = 1; number <= n; number++) expect(lookup.get(number)).toBe(plain.get(number));
  });
});
