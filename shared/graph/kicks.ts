import type { GraphIndex } from "./index.ts";
import { canonicalRef, compareRefs, type IssueRef } from "./refs.ts";
import { instantMs } from "./time.ts";

export type KickKind = "child-closed" | "unblocked";

export interface Kick {
  target: number;
  kind: KickKind;
  causes: IssueRef[];
}

/**
 * Close events propagated one step: a closed child kicks its open parent; a closed blocker
 * kicks each open issue it leaves with no open blockers. Only closes inside `(from, to]` count,
 * so each close is materialized once by a caller that advances `from`.
 */
export function findKicks(
  graph: GraphIndex,
  openBlockerCount: (n: number) => number,
  fromMs: number,
  toMs: number,
): Kick[] {
  const merged = new Map<string, Kick>();
  const add = (target: number, kind: KickKind, cause: IssueRef) => {
    const key = `${target}|${kind}`;
    const kick = merged.get(key);
    if (kick) kick.causes.push(cause);
    else merged.set(key, { target, kind, causes: [cause] });
  };
  const inWindow = (closedAt: string | null | undefined) => {
    if (!closedAt) return false;
    const ms = instantMs(closedAt);
    return ms > fromMs && ms <= toMs;
  };
  const isOpenOwn = (n: number) => graph.issue(n)?.state === "open";
  const kickUnblocked = (cause: IssueRef) => {
    for (const x of graph.blockedBy(cause)) {
      if (isOpenOwn(x) && openBlockerCount(x) === 0) add(x, "unblocked", cause);
    }
  };

  for (const issue of graph.sorted) {
    if (issue.state !== "closed" || !inWindow(issue.closedAt)) continue;
    const parent = graph.parentOf(issue.number);
    if (typeof parent === "number" && isOpenOwn(parent)) add(parent, "child-closed", issue.number);
    kickUnblocked(issue.number);
  }
  for (const entry of graph.external.values()) {
    if (entry.state !== "closed" || !inWindow(entry.closedAt)) continue;
    kickUnblocked(canonicalRef(entry.ref, graph.repo));
  }

  const kicks = [...merged.values()];
  for (const kick of kicks) kick.causes.sort(compareRefs);
  return kicks.sort(
    (a, b) => a.target - b.target || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0),
  );
}
