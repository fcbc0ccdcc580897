import type { GitHubClient } from "../../../shared/github/client.ts";
import { MAX_PAGE_SIZE } from "../../../shared/github/fetch-snapshot.ts";
import { DAY_MS, formatInstant } from "../../../shared/graph/time.ts";
import { reconcileKind, scanRequestWaitMs } from "../../../shared/schedule/policy.ts";
import { numberSetting } from "../../env.ts";
import { refreshConfig } from "./config-sync.ts";
import type { RepoContext } from "./context.ts";
import type { FleetResult } from "./fleet-api.ts";
import { rereadMarkerComments } from "./marker-reread.ts";
import { givePermit, takePermit } from "./permits.ts";
import { requestProjectRead } from "./priority.ts";
import { producerDue } from "./producer.ts";
import {
  DEFAULT_FULL_RECONCILE,
  type FullReconcileSettings,
  reconcileFull,
  reconcileIncremental,
} from "./reconcile-fetch.ts";
import type { RepoIdentity } from "./repo-store.ts";

// Reconciliation in the RepoObject (spec 6.3): the `config`, `reconcile` and `reconcile-full`
// schedules, the cron's and the API's ways to ask for one. Fetching and merging pages is
// reconcile-fetch.ts; the config file is config-sync.ts.

/** Issues a page and pages an alarm run of the full reconcile (settings, else the defaults). */
function fullReconcileSettings(c: RepoContext): FullReconcileSettings {
  const pageSize = numberSetting(c.env.RECONCILE_PAGE_SIZE);
  const pagesPerRun = numberSetting(c.env.RECONCILE_PAGES_PER_RUN);
  return {
    pageSize: Math.min(
      MAX_PAGE_SIZE,
      Math.max(1, Math.floor(pageSize ?? DEFAULT_FULL_RECONCILE.pageSize)),
    ),
    pagesPerRun: Math.max(1, Math.floor(pagesPerRun ?? DEFAULT_FULL_RECONCILE.pagesPerRun)),
  };
}

/** The `config` schedule: reads `.github/switchyard.yml` again (a free 304 when unchanged). */
export async function runConfig(
  c: RepoContext,
  identity: RepoIdentity,
  nowMs: number,
): Promise<void> {
  const outcome = await refreshConfig(
    c.store,
    c.client(`read the config of ${identity.fullName}`),
    nowMs,
  );
  // New label names or queue mode: re-read the graph (label histories depend on the
  // names) and let the producer act on the new rules.
  if (outcome === "updated" || outcome === "removed") {
    c.schedules.at("reconcile-full", Date.now());
    // The queue policy's reads follow the config: the breaker's CI and the priority field.
    afterReconcile(c, true);
  }
}

/**
 * The queue policy's own reads, after a reconcile (spec 6.4): the default branch's CI on every
 * one (a lost webhook heals within a cron tick), the priority project field after a full one
 * (and after a config change).
 */
function afterReconcile(c: RepoContext, full: boolean): void {
  const nowMs = Date.now();
  if (c.store.config().breaker !== null) c.schedules.ensure("ci", nowMs);
  if (full) {
    requestProjectRead(c, nowMs);
    c.store.meta.set("bulkLabelWrites", true);
  }
}

/** The `reconcile` (incremental) and `reconcile-full` schedules. */
export async function runReconcile(
  c: RepoContext,
  name: "reconcile" | "reconcile-full",
  identity: RepoIdentity,
  nowMs: number,
): Promise<void> {
  const full = name === "reconcile-full";
  // A full reconcile (the first, the daily one, a burst after an outage) waits its turn in the
  // installation's line (permits.ts): the whole installation stays under GitHub's limits.
  if (full && !(await takePermit(c, identity, nowMs))) return;
  const client = c.client(`reconcile ${identity.fullName}`);
  try {
    await reconcileWith(c, name, identity, client, nowMs);
  } catch (error) {
    // Failed (retried with backoff by the alarm): its place goes to the next in line meanwhile.
    if (full) {
      await givePermit(
        c,
        identity,
        { completed: false, requests: client.stats.requests, client },
        Date.now(),
      );
    }
    throw error;
  }
}

async function reconcileWith(
  c: RepoContext,
  name: "reconcile" | "reconcile-full",
  identity: RepoIdentity,
  client: GitHubClient,
  nowMs: number,
): Promise<void> {
  const { store, schedules } = c;
  const full = name === "reconcile-full";
  // The config first (a free 304 when unchanged): its label names shape what is fetched.
  // A full run in progress goes on with the names it began with (a change restarts it).
  const inProgress = store.reconcileRuns.current();
  const continuing = inProgress?.generation === store.generation();
  if (full && !continuing) {
    try {
      await refreshConfig(store, client, nowMs);
    } catch (error) {
      // Reading the config must not block learning the graph (a missing Contents
      // permission, an outage): the last good config stands; the `config` schedule retries.
      const message = error instanceof Error ? error.message : String(error);
      store.audit("config", { outcome: "unreadable", error: message }, Date.now());
      schedules.at("config", Date.now() + 15 * 60_000);
    }
  }
  const reconcile = full ? reconcileFull : reconcileIncremental;
  const outcome = await reconcile(store, client, Date.now, fullReconcileSettings(c));
  if (outcome === null) {
    // The repository stopped being active meanwhile.
    if (full) {
      await givePermit(c, identity, { completed: false, requests: 0, client }, Date.now());
    }
    return;
  }
  if (outcome.kind === "full-step") {
    // A bounded share of the pages per alarm run: the next share in the next run, so the
    // producer and the other schedules get their turn in between.
    schedules.at("reconcile-full", Date.now());
    // What a page corrected may unblock something, once the producer plans at all (it
    // plans nothing before the first full reconcile completes).
    if (outcome.changed && store.watermarks().lastFullReconcileAt !== null) {
      schedules.at("producer", producerDue(c, Date.now()));
    }
    return;
  }
  if (outcome.kind === "full") {
    await givePermit(
      c,
      identity,
      { completed: true, requests: outcome.requests, client },
      Date.now(),
    );
  }
  // A full read also re-reads the comments of issues whose IDD claims matter (own client:
  // its requests are counted apart from the graph fetch's).
  const markers =
    outcome.kind === "full"
      ? await rereadMarkerComments(
          store,
          store.claims,
          c.client(`re-read marker comments of ${identity.fullName}`),
          Date.now,
        )
      : null;
  store.audit(
    "reconcile",
    {
      kind: outcome.kind,
      requests: outcome.requests,
      corrected: outcome.corrections,
      ...(outcome.correctionCount > outcome.corrections.length
        ? { correctedCount: outcome.correctionCount }
        : {}),
      unavailable: outcome.unavailable,
      ...(outcome.run ? { run: outcome.run } : {}),
      ...(markers ? { markers } : {}),
    },
    Date.now(),
  );
  afterReconcile(c, outcome.kind === "full");
  // After the first full read the producer may act at last; after others, if they changed anything.
  if (outcome.kind === "full" || outcome.corrections.length > 0) {
    schedules.at("producer", producerDue(c, Date.now()));
  }
}

/**
 * `POST /v1/.../scan`: an incremental reconcile now (a full one when a day has passed), at
 * most once a minute per repository.
 */
export async function requestScan(c: RepoContext, nowMs: number): Promise<FleetResult> {
  const wait = scanRequestWaitMs(c.store.meta.get("scanRequestedMs") ?? null, nowMs);
  if (wait !== null) {
    const seconds = Math.ceil(wait / 1000);
    return {
      status: 429,
      body: {
        error: "rate-limited",
        message: `a reconcile was requested less than a minute ago; retry in ${seconds} s`,
      },
      headers: { "retry-after": String(seconds) },
    };
  }
  const kind = reconcileKind(c.store.watermarks().lastFullReconcileAt, nowMs);
  c.store.transaction(() => {
    c.store.meta.set("scanRequestedMs", nowMs);
    c.schedules.at(kind, nowMs);
    c.store.audit("scan-requested", { kind }, nowMs);
  });
  await c.schedules.rearm();
  return { status: 202, body: { scheduled: kind, at: formatInstant(nowMs) } };
}

/** Cron entry: reconcile now (fully when a day has passed); keeps the daily prune alive. */
export async function armReconcile(c: RepoContext, nowMs: number): Promise<boolean> {
  if (c.store.identity()?.status !== "active") return false;
  c.schedules.at(reconcileKind(c.store.watermarks().lastFullReconcileAt, nowMs), nowMs);
  c.schedules.ensure("prune", nowMs + DAY_MS);
  await c.schedules.rearm();
  return true;
}
