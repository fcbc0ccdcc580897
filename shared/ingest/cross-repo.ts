// Cross-repository closes told at once (issue 9, fix 8): the rules of the notice queue a
// repository keeps of its own closes and reopens, and of what a receiving repository applies.
import type { GraphEvent } from "./events.ts";

/** An issue of the sending repository changed state: what the repositories it blocks are told. */
export interface CrossRepoNotice {
  number: number;
  state: "open" | "closed";
  closedAt: string | null;
  /** GitHub's `updated_at` of the issue with this state: the merge rule orders by it. */
  at: string;
}

/** What a receiving repository is told: who sends, and the states of its issues. */
export interface CrossRepoDelivery {
  from: { repoId: number; fullName: string; installationId: number };
  notices: CrossRepoNotice[];
}

/** The queue keeps the newest notice per issue and at most this many issues (the oldest go
 * first: the receivers' incremental reconcile still finds those). */
export const MAX_CROSS_REPO_NOTICES = 500;

/** The queue with `updates` added: one notice per issue (the latest), oldest first, bounded. */
export function queueNotices(
  queue: readonly CrossRepoNotice[],
  updates: readonly CrossRepoNotice[],
  max = MAX_CROSS_REPO_NOTICES,
): CrossRepoNotice[] {
  const byIssue = new Map(queue.map((n) => [n.number, n]));
  for (const n of updates) {
    byIssue.delete(n.number); // re-inserted last: a Map keeps insertion order
    byIssue.set(n.number, n);
  }
  return [...byIssue.values()].slice(-max);
}

/** The queue after `delivered` went out: a notice replaced meanwhile stays. */
export function withoutDelivered(
  queue: readonly CrossRepoNotice[],
  delivered: readonly CrossRepoNotice[],
): CrossRepoNotice[] {
  const sent = new Set(delivered.map((n) => JSON.stringify(n)));
  return queue.filter((n) => !sent.has(JSON.stringify(n)));
}

/**
 * The `external` events a receiver applies: only for the issues one of its present blocker
 * edges names (`named`: lower-cased ref → the edge's spelling; GitHub names are
 * case-insensitive).
 */
export function externalEventsFor(
  delivery: CrossRepoDelivery,
  named: ReadonlyMap<string, string>,
): GraphEvent[] {
  const events: GraphEvent[] = [];
  for (const n of delivery.notices) {
    const ref = named.get(`${delivery.from.fullName}#${n.number}`.toLowerCase());
    if (ref === undefined) continue;
    events.push({ type: "external", ref, state: n.state, closedAt: n.closedAt, at: n.at });
  }
  return events;
}
