// Cross-repository impact (shared/org/cross-impact.ts) equals a brute-force count of every open
// issue transitively waiting on an issue, on random multi-repository graphs of the exact class:
// every dependency path crosses at most one repository boundary.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CrossEdge,
  crossEdgesToPush,
  crossImpact,
  type LocalGraph,
  MAX_CROSS_DEPENDENTS,
  MAX_CROSS_EDGES,
  orgImpactIndex,
  viaOf,
  type WaitGraph,
} from "../../../shared/org/cross-impact.ts";

/** Everything reachable from `repo#n` along "waits on" edges reversed, `repo#n` excluded. */
function bruteForce(graphs: LocalGraph[], cross: CrossEdge[], repo: string, n: number): number {
  const edges = new Map<string, string[]>();
  const add = (blocker: string, dependent: string) => {
    const list = edges.get(blocker) ?? [];
    list.push(dependent);
    edges.set(blocker, list);
  };
  for (const g of graphs) for (const [d, b] of g.waits) add(`${g.repo}#${b}`, `${g.repo}#${d}`);
  for (const e of cross) {
    add(`${e.blocker.repo}#${e.blocker.number}`, `${e.dependent.repo}#${e.dependent.number}`);
  }
  const start = `${repo}#${n}`;
  const seen = new Set<string>();
  const stack = [start];
  while (stack.length > 0) {
    for (const next of edges.get(stack.pop()!) ?? []) {
      if (next !== start && !seen.has(next)) {
        seen.add(next);
        stack.push(next);
      }
    }
  }
  return seen.size;
}

/** A repository's wait relation, every issue open. */
function waitGraph(g: LocalGraph): WaitGraph {
  return {
    waitersOf: (n) => g.waits.filter(([, b]) => b === n).map(([d]) => d),
    waitsOn: (n) => g.waits.filter(([d]) => d === n).map(([, b]) => b),
  };
}

/**
 * The count the owner's object makes from what each repository pushes: its cross edges, then
 * (told what others wait on) each item's `via`; local impact as the repository computes it.
 */
function fromPushes(graphs: LocalGraph[], cross: CrossEdge[], repo: string, n: number): number {
  const heads = graphs.map((g) => ({
    fullName: g.repo,
    crossEdges: crossEdgesToPush(
      waitGraph(g),
      cross
        .filter((e) => e.dependent.repo === g.repo && e.blocker.repo !== g.repo)
        .map((e) => ({ dependent: e.dependent.number, blocker: e.blocker })),
    ),
  }));
  const index = orgImpactIndex(heads);
  const g = graphs.find((x) => x.repo === repo)!;
  const via = viaOf(waitGraph(g), index.crossBlockers(repo), [n]);
  const local = new Set<number>();
  const stack = [n];
  while (stack.length > 0) {
    for (const d of waitGraph(g).waitersOf(stack.pop()!)) {
      if (d !== n && !local.has(d)) {
        local.add(d);
        stack.push(d);
      }
    }
  }
  return index.impact(repo, { impact: local.size, via: via.get(n) });
}

const SIZE = 8;
const localEdges = fc.array(
  fc.tuple(fc.integer({ min: 1, max: SIZE }), fc.integer({ min: 1, max: SIZE })),
  {
    maxLength: 14,
  },
);

describe("cross-repository impact", () => {
  it("equals the brute-force count when every path crosses at most one boundary", () => {
    fc.assert(
      fc.property(
        // Upstream repositories (u1, u2) and downstream ones (d1, d2): cross edges only make a
        // downstream issue wait on an upstream one, so no path crosses twice.
        fc.array(localEdges, { minLength: 4, maxLength: 4 }),
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 1 }),
            fc.integer({ min: 1, max: SIZE }),
            fc.integer({ min: 0, max: 1 }),
            fc.integer({ min: 1, max: SIZE }),
          ),
          { maxLength: 8 },
        ),
        (locals, crossing) => {
          const names = ["u1", "u2", "d1", "d2"];
          const graphs = names.map((repo, i) => ({
            repo,
            waits: locals[i]!.filter(([d, b]) => d !== b),
          }));
          const cross: CrossEdge[] = crossing.map(([from, y, to, x]) => ({
            dependent: { repo: `d${from + 1}`, number: y },
            blocker: { repo: `u${to + 1}`, number: x },
          }));
          for (const repo of names) {
            for (let n = 1; n <= SIZE; n++) {
              const exact = bruteForce(graphs, cross, repo, n);
              if (crossImpact(graphs, cross, repo, n) !== exact) return false;
              if (fromPushes(graphs, cross, repo, n) !== exact) return false;
            }
          }
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });

  it("follows a longer chain no further than the first boundary (a lower bound)", () => {
    const graphs: LocalGraph[] = [
      { repo: "a", waits: [[2, 1]] },
      { repo: "b", waits: [] },
      { repo: "c", waits: [] },
    ];
    const cross: CrossEdge[] = [
      { dependent: { repo: "b", number: 5 }, blocker: { repo: "a", number: 2 } },
      { dependent: { repo: "c", number: 9 }, blocker: { repo: "b", number: 5 } },
    ];
    expect(crossImpact(graphs, cross, "a", 1)).toBe(2); // a#2, b#5 (c#9 is two boundaries away)
    expect(bruteForce(graphs, cross, "a", 1)).toBe(3);
    expect(crossImpact(graphs, cross, "b", 5)).toBe(1);
    expect(fromPushes(graphs, cross, "a", 1)).toBe(2);
    expect(fromPushes(graphs, cross, "b", 5)).toBe(1);
  });

  it("pushes at most MAX_CROSS_EDGES edges and MAX_CROSS_DEPENDENTS dependents (a lower bound past them)", () => {
    const chain: Array<[number, number]> = [];
    for (let d = 2; d <= 1_500; d++) chain.push([d, d - 1]);
    const g: LocalGraph = { repo: "b", waits: chain };
    const waits = Array.from({ length: 150 }, (_, i) => ({
      dependent: 1 + i,
      blocker: { repo: "a", number: 1 },
    }));
    const pushed = crossEdgesToPush(waitGraph(g), waits);
    expect(pushed).toHaveLength(MAX_CROSS_EDGES);
    expect(pushed.reduce((s, e) => s + e.dependents.length, 0)).toBe(MAX_CROSS_DEPENDENTS);
    expect(pushed[0]!.dependents).toHaveLength(MAX_CROSS_DEPENDENTS);
    // The owner's count: every issue of b once, as far as the pushed lists reach.
    const index = orgImpactIndex([{ fullName: "b", crossEdges: pushed }]);
    expect(index.crossBlockers("A")).toEqual([1]);
    expect(index.impact("a", { impact: 0, via: [1] })).toBe(MAX_CROSS_DEPENDENTS + 1);
  });

  it("stops each walk at MAX_CROSS_DEPENDENTS issues on a huge chain (regression: unbounded on every push)", () => {
    // 100k issues in one chain: n + 1 waits on n. Steps are the graph's calls, counted.
    const size = 100_000;
    let calls = 0;
    const chain: WaitGraph = {
      waitersOf: (n) => {
        calls++;
        return n < size ? [n + 1] : [];
      },
      waitsOn: (n) => {
        calls++;
        return n > 1 ? [n - 1] : [];
      },
    };
    const pushed = crossEdgesToPush(chain, [{ dependent: 1, blocker: { repo: "a", number: 1 } }]);
    expect(pushed[0]!.dependents).toHaveLength(MAX_CROSS_DEPENDENTS);
    expect(pushed[0]!.dependents.at(-1)).toBe(MAX_CROSS_DEPENDENTS + 1);
    expect(calls).toBeLessThanOrEqual(MAX_CROSS_DEPENDENTS + 1);
    calls = 0;
    // From the chain's far end: the item MAX_CROSS_DEPENDENTS steps up is reached, the top is not.
    const via = viaOf(chain, [size], [size - MAX_CROSS_DEPENDENTS, 1]);
    expect(via.get(size - MAX_CROSS_DEPENDENTS)).toEqual([size]);
    expect(via.has(1)).toBe(false);
    expect(calls).toBeLessThanOrEqual(MAX_CROSS_DEPENDENTS + 1);
  });
});
