import type { ReplyWindow } from "../github/reply-windows.ts";
import type { ExternalIssue, SnapshotIssue } from "../graph/snapshot.ts";
import type { GraphEvent } from "./events.ts";
import { commentEvents } from "./from-comments.ts";

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
  /** What the fetch read of open issues' threads: their openings and comments (reply rules). */
  replies: readonly ReplyWindow[] = [],
): GraphEvent[] {
  const events: GraphEvent[] = [];
  const windows = new Map(replies.map((w) => [w.number, w]));
  for (const issue of issues) {
    const w = windows.get(issue.number);
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
        ...(w ? { author: w.author, commentCount: w.totalCount, url: w.url } : {}),
      },
      observedAt: at,
    });
    if (w) events.push(...commentEvents(issue.number, w.comments));
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
  return unseenIssueRemovals(
    stored.filter((s) => !fetched.has(s.number)),
    fetchStartedMs,
    at,
  );
}

/**
 * The removals a completed full reconcile decides, given the stored issues it did not see
 * (`unseen`, however the caller found them: a streamed reconcile asks its storage, page by
 * page, so no set of seen numbers is held): each is gone unless it changed after the reconcile
 * began. Only for a reconcile that read every page: one cut short has not seen the issues of the
 * pages it did not read, and must decide nothing.
 */
export function unseenIssueRemovals(
  unseen: Iterable<{ number: number; updatedMs: number }>,
  fetchStartedMs: number,
  at: string,
): GraphEvent[] {
  const events: GraphEvent[] = [];
  for (const s of unseen) {
    if (s.updatedMs < fetchStartedMs) events.push({ type: "issue-removed", number: s.number, at });
  }
  return events;
}

/**
 * The incremental listing's starting point after a full reconcile that began at
 * `fetchStartedMs` and saw issues updated at most at `newestUpdatedMs` (null: it saw none):
 * the newest update it saw, but never later than `marginMs` before it began (an issue updated
 * after its page was read must not hide behind a newer one from a later page, and the clocks
 * of GitHub and the Worker differ). Whole seconds, as GitHub writes `updated_at`.
 */
export function sinceAfterFull(
  fetchStartedMs: number,
  newestUpdatedMs: number | null,
  marginMs: number,
): number {
  const floor = Math.floor((fetchStartedMs - marginMs) / 1000) * 1000;
  return newestUpdatedMs !== null && newestUpdatedMs < floor ? newestUpdatedMs : floor;
}
