import { RepositoryMismatchError } from "../../../shared/github/errors.ts";
import { DAY_MS, MINUTE_MS } from "../../../shared/graph/time.ts";
import { retryDelayMs } from "../../../shared/schedule/policy.ts";
import { MissingSettingError, numberSetting } from "../../env.ts";
import { runBreakerReview, runCiRead } from "./breaker.ts";
import { sync } from "./confirmations.ts";
import type { RepoContext } from "./context.ts";
import { deliverNotices } from "./cross-repo.ts";
import { flushOwedWrites } from "./fleet.ts";
import { mismatch, prune } from "./lifecycle.ts";
import { owePush, pushHead } from "./owner-push.ts";
import { verifyClaims } from "./preemption.ts";
import { runPriority } from "./priority.ts";
import { flushOutbox, runProducer } from "./producer.ts";
import { runConfig, runReconcile } from "./reconcile.ts";
import { readReplyThreads } from "./reply-reads.ts";
import type { RepoIdentity } from "./repo-store.ts";
import type { DueSchedule, ScheduleName } from "./schedules-store.ts";
import { checkAuthors } from "./trust.ts";
import { closeDueWrites } from "./write-records.ts";

// What runs on the RepoObject's one alarm: each schedule (a row of schedules-store.ts) names a
// handler here. Due schedules run in the table's order (learn first, then write: reconciles
// before the outbox and the producer in one run); a failure is retried with backoff.

interface ScheduleHandler {
  run(c: RepoContext, identity: RepoIdentity, nowMs: number): Promise<unknown>;
  /** Also runs while the repository is suspended or removed (it may have moved). */
  inactiveToo?: true;
}

export const SCHEDULE_HANDLERS: { readonly [name in ScheduleName]: ScheduleHandler } = {
  /** Installation, directory and GitHub's word on the repository (confirmations.ts). */
  sync: { run: sync, inactiveToo: true },
  /** `.github/switchyard.yml` read again. */
  config: { run: runConfig },
  /** The whole graph, a bounded number of pages per run (reconcile.ts). */
  "reconcile-full": {
    run: (c, identity, nowMs) => runReconcile(c, "reconcile-full", identity, nowMs),
  },
  /** What changed since the last reconcile. */
  reconcile: { run: (c, identity, nowMs) => runReconcile(c, "reconcile", identity, nowMs) },
  /** The default branch's head and checks read again: the breaker heals a lost webhook (breaker.ts). */
  ci: { run: runCiRead },
  /** The breaker's verdict made again when a carried red verdict ends (breaker.ts). */
  breaker: { run: (c) => runBreakerReview(c) },
  /** The priority project field read, a share of pages per run, and items re-read (priority.ts). */
  priority: { run: runPriority },
  /** Expired claims ended (claims.ts). */
  claims: {
    run: async (c, _identity, nowMs) => {
      c.claims.runExpiry(nowMs);
      // Expired claims free their issues: the owner's head changes.
      owePush(c, nowMs);
    },
  },
  /** Claims whose IDD marker landed: their issues re-read for an earlier IDD claim (preemption.ts). */
  verify: {
    run: async (c, identity, nowMs) => {
      await verifyClaims(c, identity.fullName, nowMs);
      // A preempted claim's issue changes hands: the owner's head may change.
      owePush(c, nowMs);
    },
  },
  /** Fenced write records closed at their close time (write-records.ts). */
  writes: {
    run: async (c, _identity, nowMs) => {
      closeDueWrites(c.store, c.schedules, nowMs);
      // A closed record frees its issue for a grant: the owner's head changes.
      owePush(c, nowMs);
    },
  },
  /** Marker and reply authors' write access asked (trust.ts). */
  trust: { run: (c, identity, nowMs) => checkAuthors(c, identity.fullName, nowMs) },
  /** Comments of issues whose reply thread was not seen whole, read (reply-reads.ts). */
  replies: { run: (c, identity, nowMs) => readReplyThreads(c, identity.fullName, nowMs) },
  /** The producer's queued label writes sent (producer.ts). */
  outbox: { run: (c) => flushOutbox(c) },
  /** The `agent:ready` plan made and sent, the queue view refreshed (producer.ts). */
  producer: { run: (c, _identity, nowMs) => runProducer(c, nowMs) },
  /** The writes owed for the fleet: IDD markers, processing label, dead letter (fleet.ts). */
  fleet: { run: (c, identity) => flushOwedWrites(c, identity.fullName) },
  /** Every table to its retention bound, daily (lifecycle.ts). */
  prune: {
    run: async (c, _identity, nowMs) => {
      prune(c, nowMs);
      c.schedules.at("prune", nowMs + DAY_MS);
    },
  },
  /** Closes and reopens told to the installation's other repositories (cross-repo.ts). */
  "cross-repo": {
    run: (c, identity) => deliverNotices(c.store, identity, c.env, (id) => c.repoObject(id)),
  },
  /** The queue's head pushed to the owner's object: the org queue (owner-push.ts). */
  owner: { run: (c, identity, nowMs) => pushHead(c, identity, nowMs) },
};

const ORDER = Object.keys(SCHEDULE_HANDLERS) as ScheduleName[];

/** The retry backoff, with `SCHEDULE_RETRY_BASE_MS` when set (tests shorten it). */
function retryPolicy(c: RepoContext) {
  const base = numberSetting(c.env.SCHEDULE_RETRY_BASE_MS);
  return base !== undefined
    ? { baseMs: base, capMs: 15 * MINUTE_MS, missingSettingMs: 10 * MINUTE_MS }
    : undefined;
}

/**
 * For a new instance: a run cut short leaves leased schedules behind; none of them is running,
 * so they run again after the retry backoff (a full reconcile resumes from its cursor).
 */
export function releaseLeases(c: RepoContext): Promise<void> {
  c.schedules.releaseLeases(Date.now(), (attempts) =>
    retryDelayMs(attempts, { missingSetting: false }, retryPolicy(c)),
  );
  return c.schedules.rearm();
}

/** The object's alarm: every due schedule, once; a second trigger joins a run in progress. */
export function alarm(c: RepoContext): Promise<void> {
  // The runtime's alarm is spent now, even if this call joins a run already in progress.
  c.schedules.fired();
  c.alarmRun ??= runDueSchedules(c).finally(() => {
    c.alarmRun = null;
  });
  return c.alarmRun;
}

async function runDueSchedules(c: RepoContext): Promise<void> {
  try {
    const due = c.schedules
      .takeDue(Date.now())
      .sort((a, b) => ORDER.indexOf(a.name) - ORDER.indexOf(b.name));
    for (const schedule of due) {
      try {
        await runSchedule(c, schedule.name);
        c.schedules.complete(schedule);
      } catch (error) {
        if (error instanceof RepositoryMismatchError) mismatch(c, error);
        failed(c, schedule, error);
      }
    }
  } finally {
    await c.schedules.rearm();
  }
}

async function runSchedule(c: RepoContext, name: ScheduleName): Promise<void> {
  const identity = c.store.identity();
  if (!identity) return;
  const handler = SCHEDULE_HANDLERS[name];
  if (identity.status !== "active" && !handler.inactiveToo) return;
  await handler.run(c, identity, Date.now());
}

/** A failed schedule is retried with backoff; the audit log names what failed and why. */
function failed(c: RepoContext, schedule: DueSchedule, error: unknown): void {
  const nowMs = Date.now();
  // Suspended or removed while the handler ran: nothing to retry.
  if (c.store.identity()?.status !== "active") return;
  const attempts = schedule.attempts + 1;
  const delay = retryDelayMs(
    attempts,
    {
      missingSetting: error instanceof MissingSettingError,
      retryAfterMs: (error as { retryAfterMs?: number }).retryAfterMs,
    },
    retryPolicy(c),
  );
  c.schedules.retry(schedule, nowMs + delay);
  const message = error instanceof Error ? error.message : String(error);
  c.store.audit(
    "error",
    { schedule: schedule.name, attempts, retryInMs: delay, error: message },
    nowMs,
  );
  console.error(
    `${c.store.identity()?.fullName ?? "repository"}: ${schedule.name} failed: ${message}`,
  );
}
