// Impact across an owner's repositories (issue 23, `order=impact` on org routes): an issue's
// impact counts the open issues that transitively wait on it in its own repository and, through
// cross-repository edges between repositories of the same owner, in the others. Exact for
// dependents reached across one repository boundary: from each of the local dependents
// (and the issue itself), every cross-repository dependent and that dependent's local dependents
// in its repository are counted, each issue once. A longer chain (a dependent in B whose own
// dependents are in C) is followed no further: those are not counted (a lower bound). Pure.
// `crossImpact` is the definition (over whole graphs, for tests); the owner's object computes
// the same count from what the repositories push (below).

/** One repository's open issues and its local edges: `[dependent, blocker]` (dependent waits). */
export interface LocalGraph {
  repo: string;
  waits: ReadonlyArray<readonly [number, number]>;
}

/** A cross-repository edge: `dependent` (open, in one repository) waits on `blocker` (another). */
export interface CrossEdge {
  dependent: { repo: string; number: number };
  blocker: { repo: string; number: number };
}

const key = (repo: string, number: number) => `${repo}#${number}`;

/** Local dependents of each issue (transitively), by reverse breadth-first search. */
function localDependents(graph: LocalGraph): (n: number) => Set<number> {
  const waitedOnBy = new Map<number, number[]>();
  for (const [dependent, blocker] of graph.waits) {
    const list = waitedOnBy.get(blocker) ?? [];
    list.push(dependent);
    waitedOnBy.set(blocker, list);
  }
  const memo = new Map<number, Set<number>>();
  return (start) => {
    const hit = memo.get(start);
    if (hit) return hit;
    const seen = new Set<number>();
    const stack = [start];
    while (stack.length > 0) {
      const n = stack.pop()!;
      for (const d of waitedOnBy.get(n) ?? []) {
        if (d !== start && !seen.has(d)) {
          seen.add(d);
          stack.push(d);
        }
      }
    }
    memo.set(start, seen);
    return seen;
  };
}

/** The cross-repository impact of `repo#number` (see the file's comment for what counts). */
export function crossImpact(
  graphs: readonly LocalGraph[],
  cross: readonly CrossEdge[],
  repo: string,
  number: number,
): number {
  const dependentsIn = new Map(graphs.map((g) => [g.repo, localDependents(g)]));
  const local = dependentsIn.get(repo)?.(number) ?? new Set<number>();
  const counted = new Set<string>([...local].map((n) => key(repo, n)));
  const sources = new Set([number, ...local]);
  for (const edge of cross) {
    if (edge.blocker.repo !== repo || !sources.has(edge.blocker.number)) continue;
    if (edge.dependent.repo === repo) continue;
    const { repo: other, number: y } = edge.dependent;
    counted.add(key(other, y));
    for (const d of dependentsIn.get(other)?.(y) ?? []) counted.add(key(other, d));
  }
  counted.delete(key(repo, number));
  return counted.size;
}

// --- the same count from what repositories push (issue 23, `order=impact` across repositories) ---
//
// No object holds every repository's graph. Each repository pushes, with its head:
// - its cross-repository edges (`PushedCrossEdge`): an open issue of its own waiting on an issue
//   of another repository of the same owner, with that local dependents;
// - per head item, `via`: which of the issues the owner told it others wait on
//   (`crossBlockers`) are the item itself or among its local dependents.
// The owner's object puts them together (`orgImpactIndex`): the item's own impact (local) plus,
// for every edge whose blocker is in its `via`, the edge's dependent and that dependent's local
// dependents, each issue once. That is `crossImpact` above, exact for the same class.

/** Cross-repository edges one repository pushes at most (past it: not counted, a lower bound). */
export const MAX_CROSS_EDGES = 100;
/** Local dependents listed over all edges of one push at most (past it: a lower bound). */
export const MAX_CROSS_DEPENDENTS = 1_000;
/** Issues of one repository the owner tells it others wait on, at most (the lowest numbers). */
export const MAX_CROSS_BLOCKERS = 200;

/** One repository's wait relation (open issues only): what the pushes are derived from. */
export interface WaitGraph {
  /** Open issues of this repository that wait on `n` directly (its dependents). */
  waitersOf(n: number): Iterable<number>;
  /** Open issues of this repository `n` waits on directly. */
  waitsOn(n: number): Iterable<number>;
}

/** A cross-repository edge as pushed by the dependent's repository. */
export interface PushedCrossEdge {
  /** The open issue of the pushing repository that waits. */
  number: number;
  /** What it waits on: an issue of another repository of the same owner. */
  blocker: { repo: string; number: number };
  /** The open issues of the pushing repository that transitively wait on `number`. */
  dependents: number[];
}

/**
 * What is reached from `start` by `step` (`start` excluded), in ascending order, stopping once
 * `limit` issues are found: the walk runs on every push of the owner's head, and an unbounded
 * one over a long chain (100k issues) costs millions of steps. Past the limit the set is a
 * subset (those found first), so what is built from it stays a lower bound.
 */
function reach(start: number, step: (n: number) => Iterable<number>, limit: number): number[] {
  const seen = new Set<number>();
  const stack = [start];
  walk: while (stack.length > 0) {
    for (const next of step(stack.pop()!)) {
      if (next !== start && !seen.has(next)) {
        if (seen.size >= limit) break walk;
        seen.add(next);
        stack.push(next);
      }
    }
  }
  return [...seen].sort((a, b) => a - b);
}

/**
 * The edges a repository pushes, from its open issues' blockers in other repositories of the
 * same owner (`waits`: `[dependent, blocker]`, already filtered to those): sorted by dependent,
 * then blocker; at most `MAX_CROSS_EDGES`, with at most `MAX_CROSS_DEPENDENTS` dependents listed
 * in all (what is cut is not counted: the impact stays a lower bound). Each edge's walk stops at
 * `MAX_CROSS_DEPENDENTS` issues found (then the kept ones are those found first, not the lowest).
 */
export function crossEdgesToPush(
  graph: WaitGraph,
  waits: ReadonlyArray<{ dependent: number; blocker: { repo: string; number: number } }>,
): PushedCrossEdge[] {
  const sorted = [...waits].sort(
    (a, b) =>
      a.dependent - b.dependent ||
      a.blocker.repo.localeCompare(b.blocker.repo) ||
      a.blocker.number - b.blocker.number,
  );
  const out: PushedCrossEdge[] = [];
  const memo = new Map<number, number[]>();
  let listed = 0;
  for (const w of sorted.slice(0, MAX_CROSS_EDGES)) {
    let dependents = memo.get(w.dependent);
    if (dependents === undefined) {
      dependents = reach(w.dependent, (n) => graph.waitersOf(n), MAX_CROSS_DEPENDENTS);
      memo.set(w.dependent, dependents);
    }
    const room = Math.max(0, MAX_CROSS_DEPENDENTS - listed);
    const kept = dependents.slice(0, room);
    listed += kept.length;
    out.push({ number: w.dependent, blocker: { ...w.blocker }, dependents: kept });
  }
  return out;
}

/**
 * `via` of each of `items`: the issues of `crossBlockers` (what other repositories wait on) that
 * are the item itself or transitively wait on it. One walk per cross blocker, along what it
 * waits on (there are few of them: `MAX_CROSS_BLOCKERS`), each stopping at `MAX_CROSS_DEPENDENTS`
 * issues found: an item further up a longer chain gets no `via` (a lower bound).
 */
export function viaOf(
  graph: WaitGraph,
  crossBlockers: readonly number[],
  items: readonly number[],
): Map<number, number[]> {
  const wanted = new Set(items);
  const via = new Map<number, number[]>();
  for (const k of [...crossBlockers].sort((a, b) => a - b).slice(0, MAX_CROSS_BLOCKERS)) {
    for (const n of [k, ...reach(k, (m) => graph.waitsOn(m), MAX_CROSS_DEPENDENTS)]) {
      if (!wanted.has(n)) continue;
      const list = via.get(n) ?? [];
      list.push(k);
      via.set(n, list);
    }
  }
  return via;
}

/** What the owner's object reads of each held head for the cross-repository count. */
export interface CrossHead {
  fullName: string;
  crossEdges?: readonly PushedCrossEdge[] | undefined;
}

/**
 * The owner's side: for each repository (by lower-cased full name), the issues other
 * repositories' edges wait on (what it is told: `crossBlockers`, at most `MAX_CROSS_BLOCKERS`),
 * and the org-wide impact of an item from its local impact and its `via`.
 */
export function orgImpactIndex(heads: readonly CrossHead[]): {
  crossBlockers(fullName: string): number[];
  impact(fullName: string, item: { impact: number; via?: readonly number[] | undefined }): number;
} {
  const byBlocker = new Map<string, Array<{ repo: string; edge: PushedCrossEdge }>>();
  const blockersOf = new Map<string, Set<number>>();
  for (const h of heads) {
    const from = h.fullName.toLowerCase();
    for (const edge of h.crossEdges ?? []) {
      const target = edge.blocker.repo.toLowerCase();
      if (target === from) continue;
      const k = key(target, edge.blocker.number);
      const list = byBlocker.get(k) ?? [];
      list.push({ repo: from, edge });
      byBlocker.set(k, list);
      const set = blockersOf.get(target) ?? new Set<number>();
      set.add(edge.blocker.number);
      blockersOf.set(target, set);
    }
  }
  return {
    crossBlockers(fullName) {
      return [...(blockersOf.get(fullName.toLowerCase()) ?? [])]
        .sort((a, b) => a - b)
        .slice(0, MAX_CROSS_BLOCKERS);
    },
    impact(fullName, item) {
      if (!item.via || item.via.length === 0) return item.impact;
      const repo = fullName.toLowerCase();
      const counted = new Set<string>();
      for (const k of item.via) {
        for (const { repo: other, edge } of byBlocker.get(key(repo, k)) ?? []) {
          counted.add(key(other, edge.number));
          for (const d of edge.dependents) counted.add(key(other, d));
        }
      }
      return item.impact + counted.size;
    },
  };
}
