import { scratch } from "./scratch.ts";

/**
 * Strongly connected components of a directed graph over dense node ids `0..size-1`, with
 * Tarjan's algorithm made iterative (a 100k-issue chain cannot overflow the call stack) and run
 * over typed arrays (no per-node allocation, so 100k issues stay linear). The edges of node `n`
 * are `adjPool[adjStart[n] .. adjStart[n] + adjLen[n])`.
 * Returns only the components that are cycles: two or more nodes, or one node with a self-loop,
 * each as the list of its ids.
 */
export function findCyclesInRows(
  size: number,
  adjStart: Int32Array,
  adjLen: Int32Array,
  adjPool: Int32Array,
  roots: readonly number[],
): number[][] {
  const cycles: number[][] = [];
  if (roots.length === 0) return cycles;
  const work = borrowTarjanWork(size);
  try {
    tarjan(adjStart, adjLen, adjPool, roots, work, cycles);
  } finally {
    releaseTarjanWork(work);
  }
  return cycles;
}

/** The work arrays of an iterative Tarjan search over `size` nodes (`index` all -1, the rest 0). */
export interface TarjanWork {
  index: Int32Array;
  low: Int32Array;
  onStack: Uint8Array;
  stack: Int32Array;
  frameNode: Int32Array;
  /** Per frame: where in the node's edges the search goes on. */
  frameNext: Int32Array;
}

/** Lends the work arrays from `scratch` (shared/graph/scratch.ts); see `releaseTarjanWork`. */
export function borrowTarjanWork(size: number): TarjanWork {
  return {
    index: scratch.int32(size, -1),
    low: scratch.int32(size),
    onStack: scratch.uint8(size),
    stack: scratch.int32(size),
    frameNode: scratch.int32(size),
    frameNext: scratch.int32(size),
  };
}

export function releaseTarjanWork(w: TarjanWork): void {
  scratch.release(w.index, w.low, w.onStack, w.stack, w.frameNode, w.frameNext);
}

/** The search itself, over work arrays of the node count (fresh: `index` all -1, the rest 0). */
function tarjan(
  adjStart: Int32Array,
  adjLen: Int32Array,
  adjPool: Int32Array,
  roots: readonly number[],
  work: TarjanWork,
  cycles: number[][],
): void {
  const { index, low, onStack, stack, frameNode, frameNext } = work;
  let stackTop = 0;
  let counter = 0;
  for (const root of roots) {
    if (index[root] !== -1) continue;
    let depth = 0;
    frameNode[0] = root;
    frameNext[0] = 0;
    index[root] = low[root] = counter++;
    stack[stackTop++] = root;
    onStack[root] = 1;
    while (depth >= 0) {
      const node = frameNode[depth]!;
      const next = frameNext[depth]!;
      if (next < adjLen[node]!) {
        frameNext[depth] = next + 1;
        const to = adjPool[adjStart[node]! + next]!;
        if (index[to] === -1) {
          index[to] = low[to] = counter++;
          stack[stackTop++] = to;
          onStack[to] = 1;
          depth += 1;
          frameNode[depth] = to;
          frameNext[depth] = 0;
        } else if (onStack[to] === 1 && index[to]! < low[node]!) {
          low[node] = index[to]!;
        }
        continue;
      }
      depth -= 1;
      if (depth >= 0) {
        const up = frameNode[depth]!;
        if (low[node]! < low[up]!) low[up] = low[node]!;
      }
      if (low[node] !== index[node]) continue;
      // The component is the stack down to `node`; only a cycle becomes an array (a list per
      // node, almost all of them singletons, was most of an analysis's garbage at 100k issues).
      let bottom = stackTop - 1;
      while (stack[bottom] !== node) bottom -= 1;
      let cycle = stackTop - bottom > 1;
      if (!cycle) {
        for (let k = adjStart[node]!; k < adjStart[node]! + adjLen[node]!; k++)
          if (adjPool[k] === node) cycle = true;
      }
      const component: number[] | null = cycle ? [] : null;
      while (stackTop > bottom) {
        const member = stack[--stackTop]!;
        onStack[member] = 0;
        component?.push(member);
      }
      if (component) cycles.push(component);
    }
  }
}
