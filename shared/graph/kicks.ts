import type { GraphIndex } from "./index.ts";
import { compareRefs, type IssueRef } from "./refs.ts";
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
  openBlockers: ReadonlyMap<number, readonly IssueRef[]>,
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
  const isOpenOwn = (n: number) => graph.issues.get(n)?.state === "open";
  const kickUnblocked = (cause: IssueRef, key: string) => {
    for (const x of graph.blocks.get(key) ?? []) {
      if (isOpenOwn(x) && (openBlockers.get(x)?.length ?? 0) === 0) add(x, "unblocked", cause);
    }
  };

  for (const issue of graph.issues.values()) {
    if (issue.state !== "closed" || !inWindow(issue.closedAt)) continue;
    const parent = graph.parent.get(issue.number);
    if (typeof parent === "number" && isOpenOwn(parent)) add(parent, "child-closed", issue.number);
    kickUnblocked(issue.number, `#${issue.number}`);
  }
  for (const [key, entry] of graph.external) {
    // An own-repository entry in `external` only stands in for an issue the snapshot lacks.
    if (key.startsWith("#") && graph.issues.has(Number(key.slice(1)))) continue;
    if (entry.state !== "closed" || !inWindow(entry.closedAt)) continue;
    kickUnblocked(key.startsWith("#") ? Number(key.slice(1)) : entry.ref, key);
  }

  const kicks = [...merged.values()];
  for (const kick of kicks) kick.causes.sort(compareRefs);
  return kicks.sort(
    (a, b) => a.target - b.target || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0),
  );
}
