// The full reconcile's second pass: the comments of the open issues whose IDD claims matter are
// read again, so a missed `issue_comment` webhook cannot hide a claim marker. Which issues: those
// that, in stored data, have a marker comment, carry the processing label, or hold a live claim.
// Its requests are counted apart from the graph fetch's `ceil(N/100)+2` bound.
import type { GitHubClient } from "../../../shared/github/client.ts";
import { fetchIssueComments } from "../../../shared/github/comments.ts";
import type { GraphEvent } from "../../../shared/ingest/events.ts";
import { commentEvents } from "../../../shared/ingest/from-comments.ts";
import type { ClaimsStore } from "./claims-store.ts";
import type { RepoStore } from "./repo-store.ts";

export interface MarkerReread {
  /** The issues whose comments were read. */
  issues: number[];
  requests: number;
  /** What it found that webhooks had not delivered (empty: nothing was missed). */
  corrected: string[];
}

/** The open issues whose comments a full reconcile re-reads, ascending. */
export function markerRereadTargets(
  store: RepoStore,
  claims: ClaimsStore,
  nowMs: number,
): number[] {
  const numbers = new Set(store.openIssuesWithMarkersOrLabel(store.config().labels.processing));
  for (const n of store.openAmong(claims.live(nowMs).map((c) => c.number))) numbers.add(n);
  return [...numbers].sort((a, b) => a - b);
}

/**
 * Reads the targets' comments and applies them as `comment` events (the merge rule keeps the
 * markers). Null when the repository stopped being active meanwhile (nothing is applied then).
 * A comment missing from GitHub's listing is not removed here: a listing that lags behind a new
 * comment must not tombstone a live claim (fail closed; its `deleted` webhook removes it).
 */
export async function rereadMarkerComments(
  store: RepoStore,
  claims: ClaimsStore,
  client: GitHubClient,
  nowMs: () => number,
): Promise<MarkerReread | null> {
  const identity = store.identity();
  if (!identity) throw new Error("re-reading comments before the repository is known");
  const generation = store.generation();
  const issues = markerRereadTargets(store, claims, nowMs());
  const before = client.stats.requests;
  const fetched: GraphEvent[] = [];
  for (const number of issues) {
    fetched.push(
      ...commentEvents(number, await fetchIssueComments(client, identity.fullName, number)),
    );
  }
  const corrected = store.transaction(() => {
    if (!store.stillActive(generation)) return null;
    return store.apply(fetched);
  });
  if (corrected === null) return null;
  return { issues, requests: client.stats.requests - before, corrected };
}
