import { HOUR_MS, MINUTE_MS } from "../graph/time.ts";

/**
 * Content writes per installation in sliding windows. GitHub allows 80 a minute and 500 an
 * hour (spec 6.2); the defaults stay below both, leaving room for the client's own retries of
 * a write whose response was lost and for anything else writing as the App.
 */
export interface BudgetLimits {
  perMinute: number;
  perHour: number;
}

export const DEFAULT_BUDGET: BudgetLimits = { perMinute: 70, perHour: 450 };

/** The sliding windows; a write older than the longest no longer counts (its record may go). */
export const BUDGET_WINDOWS_MS = { minute: MINUTE_MS, hour: HOUR_MS } as const;
export const BUDGET_HISTORY_MS = BUDGET_WINDOWS_MS.hour;

export interface BudgetDecision {
  /** How many of the requested writes may go now. */
  granted: number;
  /** When more become available (null when all requested were granted). */
  retryAtMs: number | null;
}

/**
 * Decides how many writes fit in sliding windows given the times of past writes (ascending).
 * Writes over budget are deferred to `retryAtMs`, never dropped: the caller keeps them queued.
 */
export function decideBudget(
  pastMs: readonly number[],
  requested: number,
  nowMs: number,
  limits: BudgetLimits = DEFAULT_BUDGET,
): BudgetDecision {
  const minuteAgo = nowMs - BUDGET_WINDOWS_MS.minute;
  const hourAgo = nowMs - BUDGET_WINDOWS_MS.hour;
  const inHour = pastMs.filter((t) => t > hourAgo);
  const inMinute = inHour.filter((t) => t > minuteAgo);
  const room = Math.max(
    0,
    Math.min(limits.perMinute - inMinute.length, limits.perHour - inHour.length),
  );
  const granted = Math.min(requested, room);
  if (granted === requested) return { granted, retryAtMs: null };
  // A full window frees a slot when its oldest write (past, or granted now) ages out.
  const oldest = (window: number[]) => (window.length > 0 ? window[0]! : nowMs);
  let retryAtMs = nowMs;
  if (inMinute.length + granted >= limits.perMinute) {
    retryAtMs = Math.max(retryAtMs, oldest(inMinute) + BUDGET_WINDOWS_MS.minute + 1);
  }
  if (inHour.length + granted >= limits.perHour) {
    retryAtMs = Math.max(retryAtMs, oldest(inHour) + BUDGET_WINDOWS_MS.hour + 1);
  }
  return { granted, retryAtMs };
}
