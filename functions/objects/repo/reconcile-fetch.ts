import type { GitHubClient } from "../../../shared/github/client.ts";
import { refreshExternal } from "../../../shared/github/external.ts";
import {
  emptyReport,
  fetchSnapshotPage,
  isCursorRefused,
  type SnapshotPage,
} from "../../../shared/github/fetch-snapshot.ts";
import { fetchChanges } from "../../../shared/github/incremental.ts";
import type { ReplyWindow } from "../../../shared/github/reply-windows.ts";
import { formatInstant, instantMs } from "../../../shared/graph/time.ts";
import {
  fetchedEvents,
  sinceAfterFull,
  unseenIssueRemovals,
} from "../../../shared/ingest/from-snapshot.ts";
import type { ReplyTrust } from "../../../shared/queue/reply-authors.ts";
import {
  labelsKey,
  type ReconcileProgress,
  type ReconcileRun,
} from "./reconcile-progress-store.ts";
import type { RepoStore } from "./repo-store.ts";

export interface ReconcileOutcome {
  kind: "full" | "incremental";
  /** What the reconcile found that webhooks had not delivered (empty: nothing was missed). */
  corrections: string[];
  /** How many corrections there were (a full run keeps the first 100 in `corrections`). */
  correctionCount: number;
  /** Cross-repository blockers it could not read (their last known state stands). */
  unavailable: string[];
  requests: number;
  /** A full run: its id, how many pages it read and when it began. */
  run?: { runId: string; pages: number; issues: number; startedAt: string; restarts: number };
}

/** A full run that read its share of pages for this alarm and goes on in the next one. */
export interface ReconcileStep {
  kind: "full-step";
  progress: ReconcileProgress;
  /** Whether this step changed anything the graph rules read (the producer may act). */
  changed: boolean;
}

/**
 * The reconciles read reply state (issue 22) while replies are on: each open issue's newest
 * comments, further back only until the config's trusted people (and the permission checks
 * already made) show an input to decide on.
 */
function replyReading(store: RepoStore): { replies?: ReplyTrust } {
  const { queue } = store.config();
  if (queue.replies === "off") return {};
  // One read of the permission cache per login per read of pages, however many comments they
  // wrote (each statement costs native memory under workerd: json-batches.ts).
  return {
    replies: { replyAuthors: queue.replyAuthors, knownWrite: store.claims.trustReader() },
  };
}

/**
 * Records which part of each thread was read (after its comments were applied), by a read that
 * began at `readStartedMs`.
 */
function settleWindows(
  store: RepoStore,
  windows: readonly ReplyWindow[],
  readStartedMs: number,
): void {
  store.replies.settleWindows(
    windows.map((w) => ({
      number: w.number,
      listed: w.comments.map((c) => ({ id: c.id, createdAt: c.created_at })),
      totalCount: w.totalCount,
      whole: w.whole,
      joins: w.joins === true,
    })),
    readStartedMs,
  );
}

/** How a full run is cut into alarm runs: `pageSize` issues a page, `pagesPerRun` pages a step. */
export interface FullReconcileSettings {
  pageSize: number;
  pagesPerRun: number;
}

export const DEFAULT_FULL_RECONCILE: FullReconcileSettings = { pageSize: 100, pagesPerRun: 10 };

/** How far before a full fetch began the next incremental listing starts: updates made while
 * the pages were read (after their page) and clock skew between GitHub and the Worker. */
const SINCE_MARGIN_MS = 60_000;

const toSecond = (ms: number) => formatInstant(Math.floor(ms / 1000) * 1000);

/**
 * Full reconcile, streamed: the whole graph by GraphQL, one page at a time, each page merged in
 * its own short transaction with the same merge rule as webhooks (stamped with the time its
 * request went out, so a webhook about a later change still wins) and recorded with the cursor
 * of the next page. One call reads at most `pagesPerRun` pages and returns a `full-step`; the
 * caller schedules the next call, which goes on from the persisted cursor (in this instance or a
 * new one after an eviction, a deploy or a failed step). Only the call that merges the last page
 * completes the run: stored issues the run did not see (and that did not change after it began)
 * are removed, and the watermarks are set from what the run recorded. A run of another lifecycle
 * generation, or one begun with other label names, is abandoned and a new one begins. Null when
 * the repository stopped being active (nothing is applied then). Anything a page changes is
 * something webhooks missed, and the audit log says so.
 */
export async function reconcileFull(
  store: RepoStore,
  client: GitHubClient,
  nowMs: () => number,
  settings: FullReconcileSettings = DEFAULT_FULL_RECONCILE,
): Promise<ReconcileOutcome | ReconcileStep | null> {
  const identity = store.identity();
  if (!identity) throw new Error("reconcile before the repository is known");
  const runs = store.reconcileRuns;
  const generation = store.generation();
  const labels = store.config().labels;
  const key = labelsKey(labels);
  // A label renamed or deleted after a run began: the pages it read may hold the old labels.
  const outdated = (r: ReconcileRun) =>
    r.startedMs < (store.meta.get("fullReconcileRestartMs") ?? Number.NEGATIVE_INFINITY);
  let run = runs.current();
  if (run === null || run.generation !== generation || run.labels !== key) {
    run = store.transaction(() =>
      runs.start({ runId: crypto.randomUUID(), generation, startedMs: nowMs(), labels: key }),
    );
  }
  const report = emptyReport();
  let changed = false;
  let requestsBefore = client.stats.requests;
  for (let page = 0; page < settings.pagesPerRun; page++) {
    if (outdated(run)) {
      const restarts: number = run.restarts + 1;
      run = store.transaction(() =>
        runs.start({
          runId: crypto.randomUUID(),
          generation,
          startedMs: nowMs(),
          labels: key,
          restarts,
        }),
      );
    }
    const pageStartedMs = nowMs();
    // Pages are numbered over the whole run in request descriptions (and error messages).
    report.pages = run.pages;
    let fetched: SnapshotPage;
    try {
      fetched = await fetchSnapshotPage(
        client,
        identity.fullName,
        run.cursor,
        {
          labels,
          withBody: true,
          pageSize: settings.pageSize,
          now: () => new Date(pageStartedMs),
          ...replyReading(store),
        },
        report,
      );
    } catch (error) {
      if (run.cursor === null || !isCursorRefused(error)) throw error;
      // GitHub no longer takes the cursor (too old): the run begins again, cleanly. What its
      // pages merged stands (each was true when read); what it saw is forgotten.
      const restarts: number = run.restarts + 1;
      run = store.transaction((): ReconcileRun | null => {
        if (!store.stillActive(generation)) return null;
        return runs.start({
          runId: crypto.randomUUID(),
          generation,
          startedMs: nowMs(),
          labels: key,
          restarts,
        });
      });
      if (run === null) return null;
      continue;
    }
    const at = toSecond(pageStartedMs);
    const runId = run.runId;
    const requests = client.stats.requests - requestsBefore;
    requestsBefore = client.stats.requests;
    const merged = store.transaction(() => {
      if (!store.stillActive(generation)) {
        // Uninstalled, suspended or moved meanwhile: this run is over.
        runs.abandon();
        return null;
      }
      const result = store.applyEvents(
        fetchedEvents(fetched.issues, fetched.external, at, fetched.replies),
      );
      settleWindows(store, fetched.replies, pageStartedMs);
      runs.recordPage(runId, {
        next: fetched.next,
        seen: fetched.issues.map((i) => ({ number: i.number, updatedMs: instantMs(i.updatedAt) })),
        requests,
        corrected: result.changes,
        atMs: nowMs(),
      });
      if (fetched.next !== null) return { done: null, graphChanged: result.graphChanged };
      return { done: complete(store, nowMs), graphChanged: result.graphChanged };
    });
    if (merged === null) return null;
    changed ||= merged.graphChanged;
    if (merged.done) return merged.done;
    run = runs.current()!;
  }
  return { kind: "full-step", progress: runs.progress()!, changed };
}

/**
 * The run read its last page (called in that page's transaction): removals of what it did not
 * see, the watermarks from what it recorded, then its progress goes.
 */
function complete(store: RepoStore, nowMs: () => number): ReconcileOutcome {
  const runs = store.reconcileRuns;
  const run = runs.current()!;
  const removedAt = toSecond(run.startedMs);
  const removals: string[] = [];
  for (const chunk of runs.eachUnseenChunk()) {
    removals.push(...store.apply(unseenIssueRemovals(chunk, run.startedMs, removedAt)));
  }
  const sinceMs = sinceAfterFull(run.startedMs, runs.newestSeenMs(), SINCE_MARGIN_MS);
  store.updateWatermarks({
    lastFullReconcileAt: formatInstant(nowMs()),
    incremental: {
      since: formatInstant(sinceMs),
      etag: null,
      boundary: runs.seenAt(sinceMs),
      at: formatInstant(nowMs()),
    },
  });
  runs.abandon();
  const corrections = [...run.corrected, ...removals].slice(0, 100);
  return {
    kind: "full",
    corrections,
    correctionCount: run.corrections + removals.length,
    unavailable: [],
    requests: run.requests,
    run: {
      runId: run.runId,
      pages: run.pages,
      issues: run.issues,
      startedAt: formatInstant(run.startedMs),
      restarts: run.restarts,
    },
  };
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
  settings: FullReconcileSettings = DEFAULT_FULL_RECONCILE,
): Promise<ReconcileOutcome | ReconcileStep | null> {
  const identity = store.identity();
  const watermark = store.watermarks().incremental;
  if (!identity || watermark === null) return reconcileFull(store, client, nowMs, settings);
  const generation = store.generation();
  const startedMs = nowMs();
  const startedAt = formatInstant(Math.floor(startedMs / 1000) * 1000);
  const result = await fetchChanges(client, identity.fullName, watermark, {
    labels: store.config().labels,
    withBody: true,
    now: () => new Date(nowMs()),
    ...replyReading(store),
    // A changed issue's thread held whole is read back only to its newest held comment.
    storedThread: (number) => store.replies.storedThread(number),
  });
  const refreshed = await refreshExternal(client, store.externalProbes());
  const corrections = store.transaction(() => {
    if (!store.stillActive(generation)) return null;
    const changes = result.changed
      ? store.apply(fetchedEvents(result.issues, result.external, startedAt, result.replies))
      : [];
    settleWindows(store, result.replies, startedMs);
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
  return {
    kind: "incremental",
    corrections,
    correctionCount: corrections.length,
    unavailable,
    requests: client.stats.requests,
  };
}
