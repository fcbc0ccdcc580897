/**
 * When a repository reconciles and how a failed schedule backs off: the rules behind the
 * Worker's alarms, kept pure so they are tested without a runtime.
 */
import { DAY_MS } from "../graph/time.ts";

/** A full reconcile when none has run yet or the last is a day old; an incremental one otherwise. */
export function reconcileKind(
  lastFullReconcileAt: string | null,
  nowMs: number,
): "reconcile-full" | "reconcile" {
  if (lastFullReconcileAt === null) return "reconcile-full";
  return nowMs - Date.parse(lastFullReconcileAt) >= DAY_MS ? "reconcile-full" : "reconcile";
}

/** At most one API-requested reconcile (`POST /v1/.../scan`) per repository in this interval. */
export const SCAN_REQUEST_INTERVAL_MS = 60_000;

/**
 * May a caller ask for a reconcile now? Null when it may; otherwise how long to wait. A full
 * reconcile is never requested this way: the daily one and `config` pushes cover it.
 */
export function scanRequestWaitMs(lastRequestMs: number | null, nowMs: number): number | null {
  if (lastRequestMs === null || nowMs - lastRequestMs >= SCAN_REQUEST_INTERVAL_MS) return null;
  return SCAN_REQUEST_INTERVAL_MS - (nowMs - lastRequestMs);
}

/**
 * When a producer run asked for at `nowMs` is due. Leading edge: at once when no run started in
 * the last `debounceMs`, so a lone close reaches `agent:ready` without waiting out a window;
 * otherwise when the window since the last run ends, so a burst of deliveries still coalesces
 * into one run per window. `lastRunMs` null: no run known (a fresh or evicted object).
 */
export function producerDueMs(nowMs: number, lastRunMs: number | null, debounceMs: number): number {
  if (lastRunMs === null) return nowMs;
  return Math.max(nowMs, lastRunMs + debounceMs);
}

/** The producer's window while closes it has not materialized are waiting (see below). */
export const KICK_WINDOW_MS = 250;

/**
 * The debounce window for the next producer run. A learned close is what the producer exists
 * for: while one waits (`kicksOwed`), the window shrinks to `KICK_WINDOW_MS`, so a close does not
 * wait out a window that a stream of unrelated edits keeps restarting; a burst of closes still
 * coalesces into a run per `KICK_WINDOW_MS`.
 */
export function producerWindowMs(debounceMs: number, kicksOwed: boolean): number {
  return kicksOwed ? Math.min(debounceMs, KICK_WINDOW_MS) : debounceMs;
}

export interface RetryPolicy {
  /** Delay after the first failure; each further failure doubles it. */
  baseMs: number;
  capMs: number;
  /** A setting is missing: nothing changes until an operator adds it, so wait longer. */
  missingSettingMs: number;
}

export const DEFAULT_SCHEDULE_RETRY: RetryPolicy = {
  baseMs: 5_000,
  capMs: 15 * 60_000,
  missingSettingMs: 10 * 60_000,
};

/**
 * How long to wait before the `attempts`-th retry (1 = first failure): doubling from the base,
 * capped, never sooner than GitHub asked (`retryAfterMs`).
 */
export function retryDelayMs(
  attempts: number,
  failure: { missingSetting: boolean; retryAfterMs?: number | undefined },
  policy: RetryPolicy = DEFAULT_SCHEDULE_RETRY,
): number {
  const backoff = failure.missingSetting
    ? policy.missingSettingMs
    : Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.max(backoff, failure.retryAfterMs ?? 0);
}
