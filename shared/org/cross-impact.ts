// Impact across an owner's repositories (issue 23, `order=impact` on org routes): an issue's
// impact counts the open issues that transitively wait on it in its own repository and, through
// cross-repository edges between repositories of the same owner, in the others. Exact for
// dependents reached across one repository boundary: from each of the local dependents
// (and the issue itself), every cross-repository dependent and that dependent's local dependents
// in its repository are counted, each issue once. A longer chain (a dependent in B whose own
// dependents are in C) is followed no further: those are not counted (a lower bound). Pure; not
// wired to the pushes yet (each repository would push its cross-repository edges and, per edge
// target, its local dependents).

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
