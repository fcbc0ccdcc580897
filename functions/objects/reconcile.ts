import type { GitHubClient } from "../../shared/github/client.ts";
import { refreshExternal } from "../../shared/github/external.ts";
import { fetchSnapshot } from "../../shared/github/fetch-snapshot.ts";
import { fetchChanges } from "../../shared/github/incremental.ts";
import { formatInstant } from "../../shared/graph/time.ts";
import { fetchedEvents, missingIssueEvents } from "../../shared/ingest/from-snapshot.ts";
import type { RepoStore } from "./repo-store.ts";

export interface ReconcileOutcome {
  kind: "full" | "incremental";
  /** What the reconcile found that webhooks had not delivered (empty: nothing was missed). */
  corrections: string[];
  /** Cross-repository blockers it could not read (their last known state stands). */
  unavailable: string[];
  requests: number;
}

/** How far before a full fetch began the next incremental listing starts: updates made while
 * the pages were read (after their page) and clock skew between GitHub and the Worker. */
const SINCE_MARGIN_MS = 60_000;

/**
 * Full reconcile: the whole graph by GraphQL, applied with the same merge rule as webhooks,
 * then every stored issue the fetch did not see is removed. Anything it changes is something
 * webhooks missed, and the audit log says so. Null when the repository stopped being active
 * while it fetched (nothing is applied then).
 */
export async function reconcileFull(
  store: RepoStore,
  client: GitHubClient,
  nowMs: () => number,
): Promise<ReconcileOutcome | null> {
  const identity = store.identity();
  if (!identity) throw new Error("reconcile before the repository is known");
  const generation = store.generation();
  const startedMs = nowMs();
  const startedAt = formatInstant(Math.floor(startedMs / 1000) * 1000);
  const { snapshot } = await fetchSnapshot(client, identity.fullName, {
    labels: store.config().labels,
    withBody: true,
    now: () => new Date(startedMs),
  });
  const fetched = new Set(snapshot.issues.map((i) => i.number));
  const corrections = store.transaction(() => {
    if (!store.stillActive(generation)) return null;
    const changes = store.apply([
      ...fetchedEvents(snapshot.issues, snapshot.external ?? [], startedAt),
      ...missingIssueEvents(store.issueStamps(), fetched, startedMs, startedAt),
    ]);
    const newest = snapshot.issues.reduce(
      (max, i) => (Date.parse(i.updatedAt) > Date.parse(max) ? i.updatedAt : max),
      "1970-01-01T00:00:00Z",
    );
    // The next listing starts before the fetch did: an issue updated after its page was read
    // must not hide behind a newer one from a later page.
    const floor = formatInstant(Math.floor((startedMs - SINCE_MARGIN_MS) / 1000) * 1000);
    const since =
      snapshot.issues.length > 0 && Date.parse(newest) < Date.parse(floor) ? newest : floor;
    store.updateWatermarks({
      lastFullReconcileAt: formatInstant(nowMs()),
      incremental: {
        since,
        etag: null,
        boundary: snapshot.issues.filter((i) => i.updatedAt === since).map((i) => i.number),
        at: formatInstant(nowMs()),
      },
    });
    return changes;
  });
  if (corrections === null) return null;
  return { kind: "full", corrections, unavailable: [], requests: client.stats.requests };
}

/**
 * Incremental reconcile: issues changed since the watermark, with a conditional request (a 304
 * is free), then only the changed issues' edges, and the open cross-repository blockers (each
 * conditional too). Falls back to a full reconcile without a watermark.
 */
export async function reconcileIncremental(
  store: RepoStore,
  client: GitHubClient,
  nowMs: () => number,
): Promise<ReconcileOutcome | null> {
  const identity = store.identity();
  const watermark = store.watermarks().incremental;
  if (!identity || watermark === null) return reconcileFull(store, client, nowMs);
  const generation = store.generation();
  const startedAt = formatInstant(Math.floor(nowMs() / 1000) * 1000);
  const result = await fetchChanges(client, identity.fullName, watermark, {
    labels: store.config().labels,
    withBody: true,
    now: () => new Date(nowMs()),
  });
  const refreshed = await refreshExternal(client, store.externalProbes());
  const corrections = store.transaction(() => {
    if (!store.stillActive(generation)) return null;
    const changes = result.changed
      ? store.apply(fetchedEvents(result.issues, result.external, startedAt))
      : [];
    for (const r of refreshed) {
      if (r.kind !== "state") continue;
      const event = {
        type: "external" as const,
        ref: r.ref,
        state: r.state,
        closedAt: r.closedAt,
        at: startedAt,
      };
      changes.push(...store.apply([event]));
      store.setExternalEtag(r.ref, r.etag);
    }
    store.updateWatermarks({ incremental: { ...result.watermark, at: formatInstant(nowMs()) } });
    return changes;
  });
  if (corrections === null) return null;
  const unavailable = refreshed.filter((r) => r.kind === "unavailable").map((r) => r.ref);
  return { kind: "incremental", corrections, unavailable, requests: client.stats.requests };
}
