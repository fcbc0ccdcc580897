import { firstReconcileState } from "../../../shared/budget/reconcile-permits.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import { type ReplyListEntry, replyList } from "../../../shared/queue/reply-list.ts";
import type { Pacing } from "../installation/installation-object.ts";
import type { RepoContext } from "./context.ts";
import { type GraphPageRequest, scanOverview, scanPage } from "./graph-scans.ts";
import { pause } from "./pause.ts";
import { priorityView } from "./priority.ts";

// `GET /v1/repos/{o}/{r}/graph` on a RepoObject: the scan of the stored graph (spec 3.3), its
// long lists paged, with what the object knows about itself beside it.

/** How old a graph API scan may be while a full reconcile is in progress (see `readerScan`). */
const RECONCILING_SCAN_MAX_AGE_MS = 5_000;

/** The graph API lists this many parked writes at most (the most recent), and counts them all. */
const PARKED_WRITES_SHOWN = 100;

/**
 * Below this many issues (the kept compact graph's slots) a read makes its scan and view
 * without pausing between passes: each pass takes well under a millisecond there, while a
 * pause is a timer's turn, which waits until no object of the process has work ready. In one
 * workerd process (`wrangler dev`) busy creating a large installation's repositories, that is
 * a batch's time per pause (issue 25: a small repository's graph took 2.5-7 s to show a
 * webhook's issue during the creation, about ten pauses).
 */
const PAUSE_FROM_ISSUES = 1_000;

const noPause = () => Promise.resolve();

/** The pause between a read's passes: none for a small graph already built (`PAUSE_FROM_ISSUES`). */
function readerPause(c: RepoContext): () => Promise<void> {
  const kept = c.store.keptCompactGraph();
  return kept !== null && kept.size < PAUSE_FROM_ISSUES ? noPause : pause;
}

/**
 * The scan the graph API reads. While a full reconcile streams pages in, every page voids the
 * kept scan; a scan up to `RECONCILING_SCAN_MAX_AGE_MS` old is shown instead of a new one per
 * request, so polling readers cannot starve the reconcile (the producer always plans fresh).
 */
async function readerScan(c: RepoContext, nowMs: number) {
  if (c.store.reconcileProgress() !== null) {
    const recent = c.scans.recent(nowMs, RECONCILING_SCAN_MAX_AGE_MS);
    if (recent !== null) return recent;
  }
  await c.store.prepareGraph(pause);
  await c.scans.prepare(nowMs, readerPause(c));
  return c.scans.current(nowMs);
}

/**
 * The issues whose trusted human input waits for an agent, with who holds each (the `replies`
 * list), from the queue view. While a full reconcile streams pages in, a view up to
 * `RECONCILING_SCAN_MAX_AGE_MS` old is read instead of a new one per request (as `readerScan`).
 * Call after `readerScan`, and read the scan it gave first: this may build the view at once.
 */
async function prepareReplies(c: RepoContext, nowMs: number): Promise<void> {
  if (reconcilingView(c, nowMs) !== null) return;
  await c.views.prepare(nowMs, readerPause(c));
}

/** While a full reconcile runs, a queue view young enough is served as is (like the scan). */
function reconcilingView(c: RepoContext, nowMs: number) {
  return c.store.reconcileProgress() !== null
    ? c.views.recent(nowMs, RECONCILING_SCAN_MAX_AGE_MS)
    : null;
}

/** The `replies` list from the queue view `prepareReplies` made ready (read synchronously). */
function readerReplies(c: RepoContext, nowMs: number): ReplyListEntry[] {
  const view = reconcilingView(c, nowMs) ?? c.views.current(nowMs);
  return replyList(view.replies, {
    claims: c.store.claims.live(nowMs).map((claim) => ({
      number: claim.number,
      agentId: claim.agentId,
      kind: claim.kind,
      until: formatInstant(claim.expiresMs),
    })),
    idd: view.idd,
  });
}

/**
 * Scan output of the stored graph (spec 3.3) plus the watermarks (the read API): `blocked`,
 * `ready`, `kicks`, `rollupCandidates` and `replies` cut to their first `limit` items (`pages` has each list's total and next
 * cursor; `graphPage` serves the rest). Kicks are those of the closes learned since the
 * producer watermark (spec 3.2), the causes the producer plans with: what it will do next, not
 * what a time window would show. Served from the scan kept since the last graph change.
 */
export async function graph(c: RepoContext, nowMs: number, machine?: string, limit?: number) {
  await prepareReplies(c, nowMs);
  const scan = await readerScan(c, nowMs);
  const config = c.store.config();
  const watermarks = c.store.watermarks();
  const result = scanOverview(
    scan,
    readerReplies(c, nowMs),
    nowMs,
    config.kicks.windowHours,
    machine || undefined,
    limit,
  );
  const pacing = await pacingOf(c, nowMs);
  // A queue view made for the replies may have asked for schedules (trust, threads, the push).
  await c.schedules.rearm();
  return {
    ...result,
    watermarks,
    /**
     * The first full reconcile: done (when), running, or waiting for the installation's permit
     * (`position` in line). Until it is done the graph holds only what webhooks brought.
     */
    firstReconcile: firstReconcileState({
      lastFullReconcileAt: watermarks.lastFullReconcileAt,
      inProgress: c.store.reconcileProgress() !== null,
      position: pacing?.position ?? null,
      holding: pacing?.holding ?? false,
    }),
    /**
     * The installation's pacing of full reconciles: repositories reconciled, waiting and in
     * flight, the requests they spent this hour and the budget they may spend an hour, and
     * the estimated time for the rest (null when the installation did not answer).
     */
    installation: pacing?.installation ?? null,
    /** The full reconcile in progress (null when none is): pages done, issues seen, run id. */
    reconcile: c.store.reconcileProgress(),
    /**
     * Label writes set aside after they kept failing (the 100 most recent; the count says how
     * many there are); planned again after a full reconcile.
     */
    parkedWrites: c.producer.parked(PARKED_WRITES_SHOWN),
    parkedWritesCount: c.producer.parkedCount(),
    deliveries: {
      applied: c.store.counter("deliveriesApplied"),
      duplicate: c.store.counter("deliveriesDuplicate"),
    },
    config: { status: c.store.configStatus(), effective: config },
    /**
     * The queue policy (spec 6.4): the circuit breaker (its state, the head's checks, the pause
     * while red, or why it is off) and the priority sources (the project field's state).
     */
    breaker: c.breaker.view(nowMs),
    priority: priorityView(c),
    /** The repository as GitHub last answered for its id; `writes` says why none are made. */
    repository: {
      ...(c.store.meta.get("repository") ?? {
        archived: false,
        private: null,
        checkedAt: null,
      }),
      writes: c.archived() ? ("paused: the repository is archived" as const) : ("on" as const),
    },
  };
}

/** Where the repository stands in its installation's line, and the installation's progress. */
async function pacingOf(c: RepoContext, nowMs: number): Promise<Pacing | null> {
  const identity = c.store.identity();
  if (!identity) return null;
  try {
    return await c.installationObject(identity.installationId).pacing(identity.repoId, nowMs);
  } catch (error) {
    // The graph is served without it rather than not at all.
    console.error(`${identity.fullName}: the installation's pacing did not answer`, error);
    return null;
  }
}

/** One page of one long list of the graph scan (`GET .../graph?list=`). */
export async function graphPage(
  c: RepoContext,
  request: Required<Pick<GraphPageRequest, "list">> & GraphPageRequest,
  nowMs: number,
  machine?: string,
) {
  if (request.list === "replies") await prepareReplies(c, nowMs);
  const scan = await readerScan(c, nowMs);
  const page = scanPage(
    scan,
    request.list === "replies" ? readerReplies(c, nowMs) : [],
    nowMs,
    machine || undefined,
    request.list,
    request.cursor,
    request.limit,
  );
  if (request.list === "replies") await c.schedules.rearm();
  return page;
}
