import { STATE_CLOSED, STATE_OPEN } from "./compact.ts";
import type { CompactAnalysis } from "./compact-analysis.ts";
import { canonicalRef, compareRefs, type IssueRef, refKey } from "./refs.ts";

export type KickKind = "child-closed" | "unblocked";

export interface Kick {
  target: number;
  kind: KickKind;
  causes: IssueRef[];
}

const NONE: readonly never[] = Object.freeze([]);

/**
 * Close events propagated one step: a closed child kicks its open parent; a closed blocker
 * kicks each open issue it leaves with no open blockers. Only closes inside the options' window
 * `(from, to]` count, so each close is materialized once by a caller that advances `from` — or,
 * when `options.causes` is given, exactly those closes. Read from an analysis whose open
 * blockers and reverse rows are made (shared/graph/compact-analysis.ts).
 */
export function findKicks(a: CompactAnalysis): Kick[] {
  const { graph, options } = a;
  const merged = new Map<string, Kick>();
  const add = (target: number, kind: KickKind, cause: IssueRef) => {
    const key = `${target}|${kind}`;
    const kick = merged.get(key);
    if (kick) kick.causes.push(cause);
    else merged.set(key, { target, kind, causes: [cause] });
  };
  const kickSlot = (x: number, cause: IssueRef) => {
    if (graph.state[x] === STATE_OPEN && a.openLen[x] === 0)
      add(graph.number[x]!, "unblocked", cause);
  };
  const kickUnblocked = (cause: IssueRef) => {
    const slot = typeof cause === "number" ? graph.presentSlot(cause) : -1;
    if (slot !== -1) {
      for (let k = a.blocksStart[slot]!; k < a.blocksStart[slot + 1]!; k++)
        kickSlot(a.blocksSlots[k]!, cause);
    } else {
      for (const x of a.blocksElsewhere.get(refKey(cause)) ?? NONE) kickSlot(x, cause);
    }
  };
  const kickFrom = (cause: IssueRef) => {
    if (typeof cause === "number") {
      const slot = graph.presentSlot(cause);
      if (slot !== -1) {
        if (graph.state[slot] !== STATE_CLOSED) return;
        const p = graph.parent[slot]!;
        if (p > 0) {
          const ps = graph.presentSlot(p);
          if (ps !== -1 && graph.state[ps] === STATE_OPEN) add(p, "child-closed", cause);
        }
        kickUnblocked(cause);
        return;
      }
      const key = graph.knownKey(`#${cause}`);
      if (key !== -1 && graph.externalState[key] === STATE_CLOSED) kickUnblocked(cause);
      return;
    }
    const key = graph.knownKey(refKey(cause));
    if (key !== -1 && graph.externalState[key] === STATE_CLOSED) kickUnblocked(cause);
  };

  if (options.causes !== undefined) {
    const seen = new Set<string>();
    for (const raw of options.causes) {
      const cause = canonicalRef(raw, graph.repo);
      const key = typeof cause === "number" ? `#${cause}` : cause.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      kickFrom(cause);
    }
  } else {
    const inWindow = (ms: number) => ms > options.windowFromMs && ms <= options.windowToMs;
    for (let i = 0; i < a.order.length; i++) {
      const s = a.order[i]!;
      if (graph.state[s] === STATE_CLOSED && inWindow(graph.closedMs[s]!))
        kickFrom(graph.number[s]!);
    }
    for (let id = 0; id < graph.keys.length; id++) {
      const ref = graph.externalRef[id];
      if (ref === undefined || graph.externalState[id] !== STATE_CLOSED) continue;
      const key = graph.keys[id]!;
      // An own issue the graph holds is never read from `external`.
      if (key.startsWith("#") && graph.presentSlot(Number(key.slice(1))) !== -1) continue;
      if (inWindow(graph.externalClosedMs[id]!)) kickFrom(canonicalRef(ref, graph.repo));
    }
  }
  const kicks = [...merged.values()];
  for (const kick of kicks) kick.causes.sort(compareRefs);
  return kicks.sort(
    (x, y) => x.target - y.target || (x.kind < y.kind ? -1 : x.kind > y.kind ? 1 : 0),
  );
}
