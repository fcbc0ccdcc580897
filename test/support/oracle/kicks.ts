// The oracle's kicks (see ./analyze.ts), over the snapshot's index.
import type { GraphIndex } from "../../../shared/graph/analyze.ts";
import type { Kick, KickKind } from "../../../shared/graph/kicks.ts";
import { canonicalRef, compareRefs, type IssueRef } from "../../../shared/graph/refs.ts";
import { instantMs } from "../../../shared/graph/time.ts";

/**
 * Close events propagated one step: a closed child kicks its open parent; a closed blocker
 * kicks each open issue it leaves with no open blockers. Only closes inside `(from, to]` count,
 * so each close is materialized once by a caller that advances `from` — or, when `causes` is
 * given, exactly those closes.
 */
export function findKicks(
  graph: GraphIndex,
  openBlockerCount: (n: number) => number,
  fromMs: number,
  toMs: number,
  causes?: readonly IssueRef[],
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

  const kickFrom = (cause: IssueRef) => {
    if (typeof cause === "number") {
      const issue = graph.issue(cause);
      if (issue) {
        if (issue.state !== "closed") return;
        const parent = graph.parentOf(cause);
        if (typeof parent === "number" && isOpenOwn(parent)) add(parent, "child-closed", cause);
        kickUnblocked(cause);
        return;
      }
    }
    if (graph.stateOf(cause) === "closed") kickUnblocked(cause);
  };

  if (causes !== undefined) {
    const seen = new Set<string>();
    for (const raw of causes) {
      const cause = canonicalRef(raw, graph.repo);
      const key = typeof cause === "number" ? `#${cause}` : cause.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      kickFrom(cause);
    }
  } else {
    for (const issue of graph.sorted) {
      if (issue.state === "closed" && inWindow(issue.closedAt)) kickFrom(issue.number);
    }
    for (const entry of graph.external.values()) {
      if (entry.state === "closed" && inWindow(entry.closedAt))
        kickFrom(canonicalRef(entry.ref, graph.repo));
    }
  }

  const kicks = [...merged.values()];
  for (const kick of kicks) kick.causes.sort(compareRefs);
  return kicks.sort(
    (a, b) => a.target - b.target || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0),
  );
}
