import type { ExternalIssue, SnapshotIssue } from "../graph/snapshot.ts";
import type { GraphEvent } from "./events.ts";

/**
 * Events that make a repository's store hold what a fetch from GitHub saw at `at`: each
 * issue, its exact parent and blocker set, the cross-repository states, and label events.
 * Stamped with the fetch time, so a webhook that arrived after the fetch started still wins.
 * Each issue record also carries the fetch time as `observedAt`: GitHub said the issue exists
 * then, so a removal stamped earlier (a tombstone) no longer hides it.
 */
export function fetchedEvents(
  issues: readonly SnapshotIssue[],
  external: readonly ExternalIssue[],
  at: string,
): GraphEvent[] {
  const events: GraphEvent[] = [];
  for (const issue of issues) {
    events.push({
      type: "issue",
      issue: {
        number: issue.number,
        id: null,
        title: issue.title,
        state: issue.state,
        stateReason: issue.stateReason,
        createdAt: issue.createdAt,
        updatedAt: issue.updatedAt,
        closedAt: issue.closedAt,
        labels: issue.labels,
        ...(issue.body !== undefined ? { body: issue.body } : {}),
      },
      observedAt: at,
    });
    events.push({ type: "parent", child: issue.number, parent: issue.parent ?? null, at });
    events.push({ type: "blockers", issue: issue.number, blockers: issue.blockedBy ?? [], at });
    for (const e of issue.labelEvents ?? []) {
      events.push({
        type: "label-event",
        number: issue.number,
        label: e.label,
        action: e.action,
        actor: e.actor ?? null,
        at: e.createdAt,
      });
    }
  }
  for (const entry of external) {
    events.push({
      type: "external",
      ref: entry.ref,
      state: entry.state,
      closedAt: entry.closedAt ?? null,
      at,
    });
  }
  return events;
}

/**
 * After a full fetch: stored issues the fetch did not see are gone (deleted or transferred),
 * unless they changed after the fetch began (created meanwhile, known from a webhook).
 */
export function missingIssueEvents(
  stored: ReadonlyArray<{ number: number; updatedMs: number }>,
  fetched: ReadonlySet<number>,
  fetchStartedMs: number,
  at: string,
): GraphEvent[] {
  return stored
    .filter((s) => !fetched.has(s.number) && s.updatedMs < fetchStartedMs)
    .map((s) => ({ type: "issue-removed" as const, number: s.number, at }));
}
