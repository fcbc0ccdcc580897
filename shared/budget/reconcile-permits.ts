import { HOUR_MS, MINUTE_MS } from "../graph/time.ts";

// Pacing an installation's full reconciles (issue 25; spec 6.2, 6.3): a repository asks its
// installation for a permit before a full reconcile. The permits in flight are bounded, granted
// in the order they were asked for, leased (a holder that vanished loses its permit, not its
// place), and never granted past the hourly budget minus a share kept for webhooks. This module
// is the decision: state in, decision out; the InstallationObject stores the state.

/**
 * Full reconciles in flight per installation. GitHub refuses more than 100 concurrent requests
 * per identity (a secondary limit); a reconcile sends its pages one after another, but the
 * client may retry beside it and the same installation token also serves webhooks' needs
 * (config reads, removal confirmations, fenced writes, the fleet's writes) and the other
 * repositories' incremental reconciles. Ten keeps the reconciles' share of that limit at a tenth,
 * and is enough to spend an hourly budget of 12,500 requests in minutes, not hours.
 */
export const PERMIT_BOUND = 10;

/**
 * How long a permit is held without a word from its holder (a renewal each step of a long
 * reconcile). Longer than one alarm run of a reconcile step; a holder evicted mid-run loses its
 * permit after this, and gets it back at its original place.
 */
export const PERMIT_LEASE_MS = 10 * MINUTE_MS;

/** The share of the hourly budget full reconciles never touch: webhooks' own needs find room. */
export const WEBHOOK_RESERVE = 0.1;

/** What one full reconcile is assumed to cost before any has reported (4 for a small repository). */
export const DEFAULT_RECONCILE_COST = 4;

export interface PermitSettings {
  bound: number;
  leaseMs: number;
  reserve: number;
  /** Requests one full reconcile is expected to spend (the average of those reported). */
  costPerReconcile: number;
}

export const DEFAULT_PERMIT_SETTINGS: PermitSettings = {
  bound: PERMIT_BOUND,
  leaseMs: PERMIT_LEASE_MS,
  reserve: WEBHOOK_RESERVE,
  costPerReconcile: DEFAULT_RECONCILE_COST,
};

/**
 * GitHub's hourly limit of an App installation: 5,000 requests, plus 50 per repository over 20,
 * at most 12,500 (organization members over 20 also count on GitHub; not known here, so this
 * errs low).
 */
export function installationHourlyLimit(repositories: number): number {
  return Math.min(12_500, 5_000 + 50 * Math.max(0, repositories - 20));
}

export interface Permit {
  repoId: number;
  /** The place in line: the sequence number of the first ask, kept when a lease is lost. */
  seq: number;
  /** When the lease ends while the permit is held; null while waiting. */
  leaseUntilMs: number | null;
}

/** `x-ratelimit-*` of one resource (`core`, `graphql`) as last reported by a holder. */
export interface RateLimitReading {
  resource: string;
  limit: number;
  remaining: number;
  /** When the window resets (`x-ratelimit-reset`, in ms). */
  resetMs: number;
}

/** The installation's own tally of what reconciles spent in the current hour. */
export interface HourSpend {
  windowStartMs: number;
  requests: number;
}

export interface PermitState {
  permits: readonly Permit[];
  /** Repositories of the installation (GitHub's hourly limit grows with them). */
  repositories: number;
  spent: HourSpend | null;
  readings: readonly RateLimitReading[];
}

export interface BudgetRoom {
  /** Requests reconciles may still spend in this hour (negative: over). */
  room: number;
  /** The hourly budget reconciles may spend (the smallest known limit, minus the reserve). */
  usablePerHour: number;
  /** When the binding window resets (null: no window is open). */
  freesAtMs: number | null;
}

/**
 * What reconciles may still spend now: the installation's own tally against GitHub's formula,
 * and every `x-ratelimit-*` reading whose window has not reset (they also count what webhooks
 * and other clients of the token spent), each less the reserve. The smallest room binds.
 */
export function budgetRoom(state: PermitState, nowMs: number, reserve: number): BudgetRoom {
  const formula = installationHourlyLimit(state.repositories);
  const ownOpen = state.spent !== null && nowMs < state.spent.windowStartMs + HOUR_MS;
  let room = formula * (1 - reserve) - (ownOpen ? state.spent!.requests : 0);
  let freesAtMs = ownOpen ? state.spent!.windowStartMs + HOUR_MS : null;
  let usablePerHour = formula * (1 - reserve);
  for (const reading of state.readings) {
    if (nowMs >= reading.resetMs) continue; // reset since: a full bucket
    // GitHub's window is an hour at most: a reset further ahead is a clock disagreement, and
    // trusting it could hold every permit back for as long. The own tally still binds.
    if (reading.resetMs - nowMs > HOUR_MS) continue;
    usablePerHour = Math.min(usablePerHour, reading.limit * (1 - reserve));
    const readingRoom = reading.remaining - reading.limit * reserve;
    if (readingRoom < room) {
      room = readingRoom;
      freesAtMs = reading.resetMs;
    }
  }
  return { room: Math.floor(room), usablePerHour: Math.floor(usablePerHour), freesAtMs };
}

export interface PermitDecision {
  /** Every permit after the decision, in line order (granted ones carry their lease). */
  permits: Permit[];
  /** Repositories granted a permit by this decision (to be told so). */
  granted: number[];
  /** Holders whose lease ran out: back in line at their original place. */
  expired: number[];
  /** Waiting repositories and their place (1: the next to be granted). */
  waiting: Array<{ repoId: number; position: number }>;
  /** Someone waits for the budget, not for a slot: it frees then. */
  budgetBlockedUntilMs: number | null;
  /** When to decide again (a lease ends, the budget frees), null when nothing will change. */
  nextMs: number | null;
}

/**
 * The permits at `nowMs`: leases that ran out go back in line at their original place, then
 * permits are granted in line order while fewer than `bound` are held and the budget leaves
 * room for every holder's expected cost plus the new one's.
 */
export function decidePermits(
  state: PermitState,
  nowMs: number,
  settings: PermitSettings = DEFAULT_PERMIT_SETTINGS,
): PermitDecision {
  const permits = [...state.permits].sort((a, b) => a.seq - b.seq).map((p) => ({ ...p }));
  const expired: number[] = [];
  for (const p of permits) {
    if (p.leaseUntilMs !== null && p.leaseUntilMs <= nowMs) {
      p.leaseUntilMs = null;
      expired.push(p.repoId);
    }
  }
  let held = permits.filter((p) => p.leaseUntilMs !== null).length;
  const budget = budgetRoom(state, nowMs, settings.reserve);
  const cost = Math.max(1, settings.costPerReconcile);
  const granted: number[] = [];
  let budgetBlockedUntilMs: number | null = null;
  for (const p of permits) {
    if (p.leaseUntilMs !== null) continue;
    if (held >= settings.bound) break;
    // A whole window's budget always admits one reconcile, however costly it is expected to be.
    const need = held === 0 ? Math.min(cost, budget.usablePerHour) : (held + 1) * cost;
    if (budget.room < need) {
      // Nobody behind can be granted either (same cost, same budget): line order holds.
      budgetBlockedUntilMs = budget.freesAtMs ?? nowMs + HOUR_MS;
      break;
    }
    p.leaseUntilMs = nowMs + settings.leaseMs;
    granted.push(p.repoId);
    held += 1;
  }
  const waiting = permits
    .filter((p) => p.leaseUntilMs === null)
    .map((p, i) => ({ repoId: p.repoId, position: i + 1 }));
  const leaseEnds = permits.map((p) => p.leaseUntilMs).filter((t): t is number => t !== null);
  const times = [
    ...leaseEnds,
    ...(waiting.length > 0 && budgetBlockedUntilMs !== null ? [budgetBlockedUntilMs] : []),
  ];
  return {
    permits,
    granted,
    expired,
    waiting,
    budgetBlockedUntilMs,
    nextMs: times.length === 0 ? null : Math.min(...times),
  };
}

/**
 * How many deferrable writes (the producer's label writes, which a first reconcile sets off by
 * the dozen) may go now: what the budget leaves once the reconciles holding a permit have their
 * expected cost, the webhooks' reserve untouched. They share the reconciles' share of the hour,
 * so together they never exhaust it; refused ones wait for the window to reset (`retryAtMs`).
 */
export function deferrableWrites(
  state: PermitState,
  held: number,
  requested: number,
  nowMs: number,
  settings: PermitSettings = DEFAULT_PERMIT_SETTINGS,
): { granted: number; retryAtMs: number | null } {
  const budget = budgetRoom(state, nowMs, settings.reserve);
  const room = Math.floor(budget.room - held * Math.max(1, settings.costPerReconcile));
  const granted = Math.max(0, Math.min(requested, room));
  return {
    granted,
    retryAtMs: granted < requested ? (budget.freesAtMs ?? nowMs + HOUR_MS) : null,
  };
}

/**
 * When a repository refused a permit asks again by itself (it is normally told sooner, when its
 * turn comes: this is the fallback for a word lost). At least a lease; one more per 100 ahead
 * of it, at most an hour in all; spread by up to half a lease by its id, so a line of thousands
 * refused together does not come back on the same tick.
 */
export function askAgainAfterMs(
  repoId: number,
  position: number,
  settings: Pick<PermitSettings, "leaseMs">,
): number {
  const leases = Math.min(6, 1 + Math.floor(Math.max(0, position - 1) / 100));
  // A multiplicative hash of the id: neighbouring ids land far apart in [0, 1).
  const spread = (Math.imul(Math.abs(Math.trunc(repoId)), 2654435761) >>> 0) / 2 ** 32;
  return Math.min(HOUR_MS, leases * settings.leaseMs) + Math.floor((spread * settings.leaseMs) / 2);
}

/** A finished reconcile's spend added to the hour's tally (a new window once the hour is over). */
export function addSpend(spent: HourSpend | null, requests: number, nowMs: number): HourSpend {
  if (spent === null || nowMs >= spent.windowStartMs + HOUR_MS) {
    return { windowStartMs: nowMs, requests };
  }
  return { windowStartMs: spent.windowStartMs, requests: spent.requests + requests };
}

/**
 * The next expected cost of a full reconcile: a moving average of reported costs (weight 1/8),
 * so one huge repository moves it without deciding it.
 */
export function nextCostEstimate(current: number, reported: number): number {
  return Math.max(1, current + (reported - current) / 8);
}

export interface InstallProgress {
  reconciled: number;
  waiting: number;
  inFlight: number;
  /** Requests reconciles spent in the current hour (the installation's tally). */
  usedThisHour: number;
  /** The budget reconciles may spend an hour (limit less the reserve). */
  budgetPerHour: number;
  /** Estimated time until the waiting and in-flight reconciles are all done (ms). */
  etaMs: number;
}

/**
 * How long the rest takes: the longer of what the budget allows (the room left this hour, then
 * whole hours) and what the bound allows (rounds of `bound` reconciles of the average duration).
 */
export function installProgress(
  input: {
    reconciled: number;
    waiting: number;
    inFlight: number;
    state: PermitState;
    avgReconcileMs: number;
  },
  nowMs: number,
  settings: PermitSettings = DEFAULT_PERMIT_SETTINGS,
): InstallProgress {
  const rest = input.waiting + input.inFlight;
  const budget = budgetRoom(input.state, nowMs, settings.reserve);
  const needed = rest * Math.max(1, settings.costPerReconcile);
  let budgetMs = 0;
  if (needed > Math.max(0, budget.room)) {
    const extra = needed - Math.max(0, budget.room);
    const hours = Math.ceil(extra / Math.max(1, budget.usablePerHour));
    budgetMs = Math.max(0, (budget.freesAtMs ?? nowMs + HOUR_MS) - nowMs) + (hours - 1) * HOUR_MS;
  }
  const rounds = Math.ceil(rest / Math.max(1, settings.bound));
  const concurrencyMs = rounds * Math.max(0, input.avgReconcileMs);
  const open = input.state.spent !== null && nowMs < input.state.spent.windowStartMs + HOUR_MS;
  return {
    reconciled: input.reconciled,
    waiting: input.waiting,
    inFlight: input.inFlight,
    usedThisHour: open ? input.state.spent!.requests : 0,
    budgetPerHour: budget.usablePerHour,
    etaMs: Math.round(Math.max(budgetMs, concurrencyMs)),
  };
}

/** Where a repository's first full reconcile stands (the graph API's `firstReconcile`). */
export type FirstReconcile =
  | { state: "done"; at: string }
  /** A permit is held and pages are being read. */
  | { state: "running" }
  /** In the installation's line: `position` 1 is the next granted (null: not asked yet). */
  | { state: "waiting"; position: number | null };

export function firstReconcileState(input: {
  lastFullReconcileAt: string | null;
  /** A full reconcile run is in progress (pages read, more to come). */
  inProgress: boolean;
  /** Its place in line, if it waits for a permit. */
  position: number | null;
  holding: boolean;
}): FirstReconcile {
  if (input.lastFullReconcileAt !== null) return { state: "done", at: input.lastFullReconcileAt };
  if (input.position === null && (input.holding || input.inProgress)) return { state: "running" };
  return { state: "waiting", position: input.position };
}
