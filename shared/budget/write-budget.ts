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
  /**
   * When the writes refused now fit as well, as one request (null when all requested were
   * granted); never later than a window's length from now.
   */
  retryAtMs: number | null;
}

/**
 * Decides how many writes fit in sliding windows given the times of past writes (ascending), or
 * with `whole`, whether all of them do.
 * Writes over budget are deferred to `retryAtMs`, never dropped: the caller keeps them queued.
 */
export function decideBudget(
  pastMs: readonly number[],
  requested: number,
  nowMs: number,
  limits: BudgetLimits = DEFAULT_BUDGET,
  whole = false,
): BudgetDecision {
  const minuteAgo = nowMs - BUDGET_WINDOWS_MS.minute;
  const hourAgo = nowMs - BUDGET_WINDOWS_MS.hour;
  const inHour = pastMs.filter((t) => t > hourAgo);
  const inMinute = inHour.filter((t) => t > minuteAgo);
  const room = Math.max(
    0,
    Math.min(limits.perMinute - inMinute.length, limits.perHour - inHour.length),
  );
  // `whole`: all or nothing, for a caller that cannot use part of what it asked for (a write of
  // several calls); a part granted to it would be spent for nothing.
  const granted = whole && room < requested ? 0 : Math.min(requested, room);
  if (granted === requested) return { granted, retryAtMs: null };
  // When what is refused now fits too (a caller needing several writes at once, a grant posting
  // its releases and its marker, gets nothing out of the first free slot): in each window, as
  // many of its oldest writes (past, or granted now) must age out as leave room for the rest.
  const rest = requested - granted;
  const freeAt = (window: readonly number[], limit: number, windowMs: number) => {
    const mustAge = window.length + granted - limit + Math.min(rest, limit);
    if (mustAge <= 0) return nowMs;
    const at = mustAge <= window.length ? window[mustAge - 1]! : nowMs;
    return at + windowMs + 1;
  };
  const retryAtMs = Math.max(
    freeAt(inMinute, limits.perMinute, BUDGET_WINDOWS_MS.minute),
    freeAt(inHour, limits.perHour, BUDGET_WINDOWS_MS.hour),
  );
  return { granted, retryAtMs };
}
