// The oracle's impact scores (see ./analyze.ts and shared/queue/impact.ts): for every open issue,
// a walk that counts the open issues reachable along "waits on" edges. Quadratic, and exact
// where production sums over the condensation (above EXACT_IMPACT_LIMIT components).
import type { Snapshot } from "../../../shared/graph/snapshot.ts";
import { indexGraph } from "./graph-index.ts";

/** Y waits on X when X is an open blocker of Y in this repository, or an open sub-issue of Y. */
export function oracleImpact(snapshot: Snapshot): Map<number, number> {
  const graph = indexGraph(snapshot);
  const open = graph.sorted.filter((i) => i.state === "open").map((i) => i.number);
  const isOpen = new Set(open);
  const waiters = new Map<number, number[]>();
  const wait = (on: number, waiter: number) => {
    const list = waiters.get(on);
    if (list) list.push(waiter);
    else waiters.set(on, [waiter]);
  };
  for (const n of open) {
    for (const b of graph.blockersOf(n)) if (typeof b === "number" && isOpen.has(b)) wait(b, n);
    const parent = graph.parentOf(n);
    if (typeof parent === "number" && parent !== n && isOpen.has(parent)) wait(n, parent);
  }
  const scores = new Map<number, number>();
  for (const x of open) {
    const seen = new Set<number>([x]);
    const stack = [x];
    while (stack.length > 0) {
      for (const w of waiters.get(stack.pop()!) ?? []) {
        if (seen.has(w)) continue;
        seen.add(w);
        stack.push(w);
      }
    }
    // A cycle back to x: x waits on itself through others, but counts others only.
    scores.set(x, seen.size - 1);
  }
  return scores;
}
