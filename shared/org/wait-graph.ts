// A repository's wait relation read from its compact analysis, for what it pushes to the owner's
// object for `order=impact` across repositories (shared/org/cross-impact.ts). "Y waits on X" as
// the repository's own impact counts it (shared/queue/impact.ts): X is an open blocker of Y, or
// an open sub-issue of Y; open issues only. Pure: the RepoObject calls it on its queue view's
// analysis, synchronously (the analysis's arrays are not kept).

import { STATE_CLOSED, STATE_OPEN } from "../graph/compact.ts";
import type { CompactAnalysis } from "../graph/compact-analysis.ts";
import { parseCrossRepoRef } from "../graph/refs.ts";
import type { WaitGraph } from "./cross-impact.ts";

export function waitGraphOf(a: CompactAnalysis): WaitGraph {
  const { graph } = a;
  const openSlot = (n: number) => {
    const s = graph.presentSlot(n);
    return s !== -1 && graph.state[s] === STATE_OPEN ? s : -1;
  };
  const isOpen = (s: number) => s !== -1 && graph.state[s] === STATE_OPEN;
  return {
    *waitersOf(n) {
      const s = openSlot(n);
      if (s === -1) return;
      for (let k = a.blocksStart[s]!; k < a.blocksStart[s + 1]!; k++) {
        const d = a.blocksSlots[k]!;
        if (isOpen(d)) yield graph.number[d]!;
      }
      const p = graph.parent[s]!;
      if (p > 0 && p !== n && isOpen(graph.presentSlot(p))) yield p;
    },
    *waitsOn(n) {
      const s = openSlot(n);
      if (s === -1) return;
      for (const code of graph.blockersOfSlot(s)) {
        if (code > 0 && code !== n && isOpen(graph.presentSlot(code))) yield code;
      }
      for (let k = a.childStart[s]!; k < a.childStart[s + 1]!; k++) {
        const c = a.childSlots[k]!;
        if (isOpen(c)) yield graph.number[c]!;
      }
    },
  };
}

/**
 * The open issues of `fullName` waiting on an issue of another repository of the same owner,
 * as far as that issue is not known closed here: `[dependent, blocker]` pairs.
 */
export function crossWaitsOf(
  a: CompactAnalysis,
  fullName: string,
): Array<{ dependent: number; blocker: { repo: string; number: number } }> {
  const { graph } = a;
  const [owner] = fullName.toLowerCase().split("/");
  const own = fullName.toLowerCase();
  const out: Array<{ dependent: number; blocker: { repo: string; number: number } }> = [];
  for (const [key, slots] of a.blocksElsewhere) {
    const parsed = parseCrossRepoRef(key);
    if (parsed === null || parsed.owner.toLowerCase() !== owner) continue;
    const repo = `${parsed.owner}/${parsed.repo}`.toLowerCase();
    if (repo === own) continue;
    const id = graph.knownKey(key);
    if (id !== -1 && graph.externalState[id] === STATE_CLOSED) continue;
    for (const s of slots) {
      if (graph.state[s] !== STATE_OPEN) continue;
      out.push({ dependent: graph.number[s]!, blocker: { repo, number: parsed.number } });
    }
  }
  return out;
}
