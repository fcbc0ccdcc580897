import type { GraphAnalysis } from "../graph/analyze.ts";
import { type CompactAnalysis, compactOf } from "../graph/compact-analysis.ts";
import { borrowTarjanWork, releaseTarjanWork } from "../graph/cycles.ts";
import { scratch } from "../graph/scratch.ts";

/**
 * Above this many strongly connected components, reach sets would take C²/8 bytes (3 MB at
 * this limit, inside a Durable Object's 128 MB); the count
 * then becomes the sum over the condensation (exact on trees and chains, an upper bound where
 * paths rejoin), capped at the number of open issues.
 */
export const EXACT_IMPACT_LIMIT = 5_000;

/**
 * Impact of each open issue: how many other open issues transitively wait on it. Y waits on X
 * when X is an open blocker of Y in this repository, or X is an open sub-issue of Y (the parent
 * cannot complete before it). Computed once per graph change in one pass over the condensation
 * (strongly connected components in reverse topological order), so cycles count each member once.
 */
export function impactScores(analysis: GraphAnalysis): Map<number, number> {
  return compactImpactScores(compactBehind(analysis));
}

/**
 * The compact analysis behind `analysis`: the edges come from its rows (what each issue blocks,
 * each issue's parent), not from objects per issue. Every analysis switchyard makes has one
 * (`asGraphAnalysis`, `analyzeSnapshot`).
 */
function compactBehind(analysis: GraphAnalysis): CompactAnalysis {
  const compact = compactOf(analysis);
  if (compact === undefined)
    throw new TypeError("impact reads a compact analysis: make it with analyzeSnapshot");
  return compact;
}

/** `impactScores` over a compact analysis (shared/graph/compact-analysis.ts). */
export function compactImpactScores(a: CompactAnalysis): Map<number, number> {
  const scores = new Map<number, number>();
  const { graph, openOrder } = a;
  compactScoresOver(a, (i, score) => scores.set(graph.number[openOrder[i]!]!, score));
  return scores;
}

/** What the queue reads of the impact scores: an open issue's score, undefined for others. */
export interface ImpactScores {
  get(number: number): number | undefined;
}

/**
 * The impact scores as a lookup: one integer per slot instead of a Map entry per open issue
 * (tens of thousands at 100,000 issues, rebuilt with every queue view).
 */
export function impactLookup(analysis: GraphAnalysis): ImpactScores {
  const a = compactBehind(analysis);
  const { graph, openOrder } = a;
  const bySlot = new Int32Array(graph.size).fill(-1);
  compactScoresOver(a, (i, score) => {
    bySlot[openOrder[i]!] = score;
  });
  return {
    get(number) {
      const slot = graph.presentSlot(number);
      const score = slot === -1 ? -1 : bySlot[slot]!;
      return score === -1 ? undefined : score;
    },
  };
}

function compactScoresOver(a: CompactAnalysis, emit: (i: number, score: number) => void): void {
  const { graph, openOrder } = a;
  const size = openOrder.length;
  const indexOf = scratch.int32(graph.size, -1);
  const start = scratch.int32(size + 1);
  let edges: Int32Array | null = null;
  try {
    for (let i = 0; i < size; i++) indexOf[openOrder[i]!] = i;
    let count = 0;
    for (let i = 0; i < size; i++) {
      const s = openOrder[i]!;
      count += a.blocksStart[s + 1]! - a.blocksStart[s]! + 1;
    }
    edges = scratch.int32(count);
    let used = 0;
    for (let i = 0; i < size; i++) {
      const s = openOrder[i]!;
      for (let k = a.blocksStart[s]!; k < a.blocksStart[s + 1]!; k++) {
        const j = indexOf[a.blocksSlots[k]!]!;
        if (j !== -1) edges[used++] = j;
      }
      const p = graph.parent[s]!;
      if (p > 0) {
        const ps = graph.presentSlot(p);
        const j = ps === -1 ? -1 : indexOf[ps]!;
        if (j !== -1 && j !== i) edges[used++] = j;
      }
      start[i + 1] = used;
    }
    scoresOver(size, start, edges, emit);
  } finally {
    scratch.release(indexOf, start, edges);
  }
}

/**
 * Scores of `size` nodes with successors `edges[start[i] .. start[i + 1])`. Its work arrays are
 * lent by `scratch` (shared/graph/scratch.ts) and given back before it returns.
 */
function scoresOver(
  size: number,
  start: Int32Array,
  edges: Int32Array,
  emit: (i: number, score: number) => void,
): void {
  if (size === 0) return;
  const { component, count, memberStart, members } = components(size, start, edges);
  const membersOf = (c: number) => memberStart[c + 1]! - memberStart[c]!;
  // Components come out of Tarjan's algorithm sinks first: every successor of a component is
  // finished before it, so one pass in that order sees each successor's result.
  const reachCount = scratch.float64(count);
  // `seenBy[d] === c + 1`: component `d` already counted for component `c`.
  const seenBy = count > EXACT_IMPACT_LIMIT ? scratch.int32(count) : null;
  try {
    if (seenBy === null) {
      const words = (count + 31) >>> 5;
      const reach: Array<Uint32Array | undefined> = new Array(count);
      for (let c = 0; c < count; c++) {
        const set = new Uint32Array(words);
        for (let m = memberStart[c]!; m < memberStart[c + 1]!; m++) {
          const node = members[m]!;
          for (let k = start[node]!; k < start[node + 1]!; k++) {
            const d = component[edges[k]!]!;
            if (d === c) continue;
            set[d >>> 5]! |= 1 << (d & 31);
            const sub = reach[d]!;
            for (let w = 0; w < words; w++) set[w]! |= sub[w]!;
          }
        }
        reach[c] = set;
        let total = 0;
        for (let w = 0; w < words; w++) {
          let bits = set[w]!;
          while (bits !== 0) {
            const low = bits & -bits;
            total += membersOf(31 - Math.clz32(low) + (w << 5));
            bits ^= low;
          }
        }
        reachCount[c] = total;
      }
    } else {
      for (let c = 0; c < count; c++) {
        let total = 0;
        for (let m = memberStart[c]!; m < memberStart[c + 1]!; m++) {
          const node = members[m]!;
          for (let k = start[node]!; k < start[node + 1]!; k++) {
            const d = component[edges[k]!]!;
            if (d === c || seenBy[d] === c + 1) continue;
            seenBy[d] = c + 1;
            total += membersOf(d) + reachCount[d]!;
          }
        }
        reachCount[c] = Math.min(total, size - membersOf(c));
      }
    }
    for (let i = 0; i < size; i++) {
      const c = component[i]!;
      // The other members of its own cycle wait on it too.
      emit(i, reachCount[c]! + membersOf(c) - 1);
    }
  } finally {
    scratch.release(component, memberStart, members, reachCount, seenBy);
  }
}

/**
 * Tarjan's strongly connected components, iterative over typed arrays; sinks come first. The
 * members of component `c` are `members[memberStart[c] .. memberStart[c + 1])`. The three
 * arrays are lent by `scratch`: the caller gives them back.
 */
function components(
  size: number,
  start: Int32Array,
  edges: Int32Array,
): { component: Int32Array; count: number; memberStart: Int32Array; members: Int32Array } {
  const work = borrowTarjanWork(size);
  const { index, low, onStack, stack, frameNode, frameNext: frameEdge } = work;
  const component = scratch.int32(size, -1);
  const memberStart = scratch.int32(size + 1);
  const members = scratch.int32(size);
  let count = 0;
  let placed = 0;
  let stackTop = 0;
  let counter = 0;
  for (let root = 0; root < size; root++) {
    if (index[root] !== -1) continue;
    let depth = 0;
    frameNode[0] = root;
    frameEdge[0] = start[root]!;
    index[root] = low[root] = counter++;
    stack[stackTop++] = root;
    onStack[root] = 1;
    while (depth >= 0) {
      const node = frameNode[depth]!;
      const k = frameEdge[depth]!;
      if (k < start[node + 1]!) {
        frameEdge[depth] = k + 1;
        const to = edges[k]!;
        if (index[to] === -1) {
          index[to] = low[to] = counter++;
          stack[stackTop++] = to;
          onStack[to] = 1;
          depth += 1;
          frameNode[depth] = to;
          frameEdge[depth] = start[to]!;
        } else if (onStack[to] === 1 && index[to]! < low[node]!) {
          low[node] = index[to]!;
        }
        continue;
      }
      if (low[node] === index[node]) {
        let member: number;
        do {
          member = stack[--stackTop]!;
          onStack[member] = 0;
          component[member] = count;
          members[placed++] = member;
        } while (member !== node);
        count += 1;
        memberStart[count] = placed;
      }
      depth -= 1;
      if (depth >= 0) {
        const parent = frameNode[depth]!;
        if (low[node]! < low[parent]!) low[parent] = low[node]!;
      }
    }
  }
  releaseTarjanWork(work);
  return { component, count, memberStart, members };
}
