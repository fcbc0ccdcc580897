import { canonicalRef, compareRefs, type IssueRef, refKey } from "./refs.ts";
import type { ExternalIssue, Snapshot, SnapshotIssue } from "./snapshot.ts";

export type RefState =
  | { known: true; state: "open" | "closed"; closedAt: string | null }
  | { known: false };

/**
 * The snapshot indexed for lookups: references canonicalised once, edges in both directions.
 * Building it is linear in issues + edges, which keeps a 100k-issue scan well under a second.
 */
export interface GraphIndex {
  repo: string;
  issues: ReadonlyMap<number, SnapshotIssue>;
  /** Canonical blockers of each issue, deduplicated and sorted. */
  blockers: ReadonlyMap<number, readonly IssueRef[]>;
  /** Canonical parent of each issue that has one. */
  parent: ReadonlyMap<number, IssueRef>;
  /** Own-repository children of each parent, ascending. */
  children: ReadonlyMap<number, readonly number[]>;
  /** refKey(blocker) → the own issues it blocks, ascending. */
  blocks: ReadonlyMap<string, readonly number[]>;
  external: ReadonlyMap<string, ExternalIssue>;
  edgeCount: number;
  stateOf(ref: IssueRef): RefState;
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

export function indexGraph(snapshot: Snapshot): GraphIndex {
  const repo = snapshot.repo;
  const issues = new Map<number, SnapshotIssue>();
  for (const issue of snapshot.issues) issues.set(issue.number, issue);

  const external = new Map<string, ExternalIssue>();
  for (const entry of snapshot.external ?? []) {
    external.set(refKey(canonicalRef(entry.ref, repo)), entry);
  }

  const blockers = new Map<number, IssueRef[]>();
  const parent = new Map<number, IssueRef>();
  const children = new Map<number, number[]>();
  const blocks = new Map<string, number[]>();
  let edgeCount = 0;

  for (const issue of snapshot.issues) {
    if (issue.parent !== undefined && issue.parent !== null) {
      const p = canonicalRef(issue.parent, repo);
      parent.set(issue.number, p);
      if (typeof p === "number") pushTo(children, p, issue.number);
      edgeCount += 1;
    }
    if (issue.blockedBy && issue.blockedBy.length > 0) {
      const seen = new Map<string, IssueRef>();
      for (const raw of issue.blockedBy) {
        const ref = canonicalRef(raw, repo);
        const key = refKey(ref);
        const prior = seen.get(key);
        // Two spellings of one cross-repo issue: keep the one that sorts first, so the
        // result does not depend on input order.
        if (prior === undefined || compareRefs(ref, prior) < 0) seen.set(key, ref);
      }
      const list = [...seen.values()].sort(compareRefs);
      blockers.set(issue.number, list);
      for (const ref of list) pushTo(blocks, refKey(ref), issue.number);
      edgeCount += list.length;
    }
  }
  for (const list of children.values()) list.sort((a, b) => a - b);
  for (const list of blocks.values()) list.sort((a, b) => a - b);

  const stateOf = (ref: IssueRef): RefState => {
    if (typeof ref === "number") {
      const issue = issues.get(ref);
      if (issue) return { known: true, state: issue.state, closedAt: issue.closedAt };
    }
    const entry = external.get(refKey(ref));
    if (entry) return { known: true, state: entry.state, closedAt: entry.closedAt ?? null };
    return { known: false };
  };

  return { repo, issues, blockers, parent, children, blocks, external, edgeCount, stateOf };
}
