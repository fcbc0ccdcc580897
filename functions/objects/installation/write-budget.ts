// The installation's GitHub write budget (sliding windows, shared/budget/write-budget.ts) as
// the InstallationObject reserves it: every content write of its repositories takes room here.
import { deferrableWrites } from "../../../shared/budget/reconcile-permits.ts";
import {
  BUDGET_HISTORY_MS,
  type BudgetDecision,
  DEFAULT_BUDGET,
  decideBudget,
} from "../../../shared/budget/write-budget.ts";
import type { InstallationStore } from "./installation-store.ts";

/**
 * Reserves `requested` content writes: with `whole`, all or none (refused ones are told when all
 * of them fit), else up to `requested` (the rest wait until `retryAtMs`, they are not dropped).
 * Granted writes are recorded now.
 */
export function reserveContentWrites(
  store: InstallationStore,
  requested: number,
  nowMs: number,
  whole: boolean,
): BudgetDecision {
  return store.transaction(() => take(store, requested, nowMs, whole));
}

/**
 * Label writes the producer queued (they can wait): within the write budget, as every content
 * write, and within the hour's budget left to reconciles (`deferrableWrites`): a first
 * reconcile sets off a write per issue it finds mislabelled, and on a large installation's
 * first day those would otherwise eat the webhooks' reserve and exhaust the hour (issue 25).
 * Granted ones are counted as spent.
 */
export function reserveDeferrableWrites(
  store: InstallationStore,
  requested: number,
  nowMs: number,
): BudgetDecision {
  return store.transaction(() => {
    const permits = store.permits;
    const settings = permits.settings();
    const hour = deferrableWrites(
      permits.decisionState(settings.bound),
      permits.held(nowMs),
      requested,
      nowMs,
      settings,
    );
    const minute = take(store, hour.granted, nowMs, false);
    permits.spentOutside(minute.granted, "core", nowMs);
    if (minute.granted === requested) return { granted: requested, retryAtMs: null };
    const retries = [hour.retryAtMs, minute.retryAtMs].filter((t): t is number => t !== null);
    return { granted: minute.granted, retryAtMs: Math.max(...retries, nowMs + 1_000) };
  });
}

/** Decides against the writes of the last hour and records the granted ones (in a transaction). */
function take(
  store: InstallationStore,
  requested: number,
  nowMs: number,
  whole: boolean,
): BudgetDecision {
  const past = store.recentWrites(nowMs, BUDGET_HISTORY_MS);
  const decision = decideBudget(past, requested, nowMs, DEFAULT_BUDGET, whole);
  store.recordWrites(decision.granted, nowMs);
  return decision;
}
