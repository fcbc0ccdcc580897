// The InstallationObject's reconcile permits (`permits`, `rate_readings`, the `reconciled_ms`
// column of `repos`; migration step 5 of installation-store.ts): the only code that runs SQL on
// them. The decision over them is shared/budget/reconcile-permits.ts.
import {
  addSpend,
  DEFAULT_PERMIT_SETTINGS,
  type HourSpend,
  nextCostEstimate,
  type Permit,
  type PermitSettings,
  type PermitState,
  type RateLimitReading,
} from "../../../shared/budget/reconcile-permits.ts";
import type { Sql } from "../sql.ts";

/** What a holder reports when it releases its permit. */
export interface PermitReport {
  /** Requests the reconcile sent (GitHub bills them to the installation). */
  requests: number;
  /** How long it held the permit. */
  durationMs: number;
  /** The last `x-ratelimit-*` it saw of each resource. */
  readings: RateLimitReading[];
  /** The full reconcile completed (not failed or cut short). */
  completed: boolean;
}

export class PermitsStore {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  permits(): Permit[] {
    return this.sql<{ repo_id: number; seq: number; lease_until_ms: number | null }>`
      SELECT repo_id, seq, lease_until_ms FROM permits ORDER BY seq`.map((r) => ({
      repoId: r.repo_id,
      seq: r.seq,
      leaseUntilMs: r.lease_until_ms,
    }));
  }

  permit(repoId: number): (Permit & { notified: boolean }) | undefined {
    const row = this.sql<{ seq: number; lease_until_ms: number | null; notified: number }>`
      SELECT seq, lease_until_ms, notified FROM permits WHERE repo_id = ${repoId}`[0];
    return row
      ? { repoId, seq: row.seq, leaseUntilMs: row.lease_until_ms, notified: row.notified === 1 }
      : undefined;
  }

  /** In line (at the back) unless it already is; its place is kept until it releases. */
  enqueue(repoId: number, nowMs: number): void {
    const seq = (this.stat("permitSeq") ?? 0) + 1;
    const inserted = this.sql<{ repo_id: number }>`
      INSERT INTO permits (repo_id, seq, asked_ms) VALUES (${repoId}, ${seq}, ${nowMs})
      ON CONFLICT (repo_id) DO NOTHING RETURNING repo_id`;
    if (inserted.length > 0) this.setStat("permitSeq", seq);
  }

  /**
   * Stores what a decision changed: expired leases back in line, new grants with their lease (to
   * be told to their holder, `notified` 0, unless the holder is the one asking). Only those
   * rows: a line of thousands is not rewritten on every ask.
   */
  apply(
    decision: {
      permits: readonly Permit[];
      granted: readonly number[];
      expired: readonly number[];
    },
    asker: number | null,
  ): void {
    for (const repoId of decision.expired) {
      this.sql`UPDATE permits SET lease_until_ms = NULL WHERE repo_id = ${repoId}`;
    }
    if (decision.granted.length === 0) return;
    const leases = new Map(decision.permits.map((p) => [p.repoId, p.leaseUntilMs]));
    for (const repoId of decision.granted) {
      this.sql`UPDATE permits SET lease_until_ms = ${leases.get(repoId) ?? null},
        notified = ${repoId === asker ? 1 : 0} WHERE repo_id = ${repoId}`;
    }
  }

  /** A held permit's lease moved on (its holder is still at work). */
  renew(repoId: number, leaseUntilMs: number): void {
    this.sql`UPDATE permits SET lease_until_ms = ${leaseUntilMs}, notified = 1
      WHERE repo_id = ${repoId} AND lease_until_ms IS NOT NULL`;
  }

  /** Granted permits whose holders were not told yet. */
  unnotified(): number[] {
    return this.sql<{ repo_id: number }>`
      SELECT repo_id FROM permits WHERE notified = 0 AND lease_until_ms IS NOT NULL ORDER BY seq`.map(
      (r) => r.repo_id,
    );
  }

  notified(repoId: number): void {
    this.sql`UPDATE permits SET notified = 1 WHERE repo_id = ${repoId}`;
  }

  drop(repoId: number): void {
    this.sql`DELETE FROM permits WHERE repo_id = ${repoId}`;
  }

  /** A permit given back: its spend, reading and duration are counted, its repository marked. */
  release(repoId: number, report: PermitReport, nowMs: number): void {
    const held = this.permit(repoId)?.leaseUntilMs != null;
    this.drop(repoId);
    if (report.requests > 0) {
      const spent = addSpend(this.spent(), report.requests, nowMs);
      this.setStat("spentWindowStartMs", spent.windowStartMs);
      this.setStat("spentRequests", spent.requests);
    }
    for (const r of report.readings) {
      this.sql`INSERT INTO rate_readings (resource, rate_limit, remaining, reset_ms)
        VALUES (${r.resource}, ${r.limit}, ${r.remaining}, ${r.resetMs})
        ON CONFLICT (resource) DO UPDATE SET rate_limit = excluded.rate_limit,
          reset_ms = excluded.reset_ms,
          -- Holders report out of order: within one window the lowest remaining is the latest.
          remaining = CASE WHEN rate_readings.reset_ms = excluded.reset_ms
            THEN MIN(rate_readings.remaining, excluded.remaining) ELSE excluded.remaining END`;
    }
    if (report.completed && held) {
      const cost = this.stat("reconcileCost") ?? DEFAULT_PERMIT_SETTINGS.costPerReconcile;
      this.setStat("reconcileCost", nextCostEstimate(cost, report.requests));
      const ms = this.stat("reconcileMs");
      this.setStat(
        "reconcileMs",
        ms === undefined ? report.durationMs : ms + (report.durationMs - ms) / 8,
      );
    }
    if (report.completed) this.reconciled(repoId, nowMs);
  }

  /**
   * Requests sent outside any permit (the producer's label writes, REST: `resource` core) are
   * counted in the hour's tally and taken off the last reading of their resource, which holders
   * only report when they give their permit back.
   */
  spentOutside(requests: number, resource: string, nowMs: number): void {
    if (requests <= 0) return;
    const spent = addSpend(this.spent(), requests, nowMs);
    this.setStat("spentWindowStartMs", spent.windowStartMs);
    this.setStat("spentRequests", spent.requests);
    this.sql`UPDATE rate_readings SET remaining = remaining - ${requests}
      WHERE resource = ${resource} AND reset_ms > ${nowMs}`;
  }

  /** The repository has a full reconcile behind it (its first, or one before this was kept). */
  reconciled(repoId: number, nowMs: number): void {
    this
      .sql`UPDATE repos SET reconciled_ms = ${nowMs} WHERE id = ${repoId} AND reconciled_ms IS NULL`;
  }

  spent(): HourSpend | null {
    const windowStartMs = this.stat("spentWindowStartMs");
    const requests = this.stat("spentRequests");
    return windowStartMs === undefined || requests === undefined
      ? null
      : { windowStartMs, requests };
  }

  readings(): RateLimitReading[] {
    return this.sql<{ resource: string; rate_limit: number; remaining: number; reset_ms: number }>`
      SELECT resource, rate_limit, remaining, reset_ms FROM rate_readings ORDER BY resource`.map(
      (r) => ({
        resource: r.resource,
        limit: r.rate_limit,
        remaining: r.remaining,
        resetMs: r.reset_ms,
      }),
    );
  }

  /**
   * The decision's input: the permits it can change, the installation's size and the budget's
   * state. Those permits are the holders (a lease that ran out goes back in line) and the first
   * `bound` of the line: no more can be granted at once, so the rest of a line of thousands is
   * not read on every ask (each ask is one of thousands when an organization installs).
   */
  decisionState(bound: number): PermitState {
    const rows = this.sql<{ repo_id: number; seq: number; lease_until_ms: number | null }>`
      SELECT repo_id, seq, lease_until_ms FROM permits WHERE lease_until_ms IS NOT NULL
      UNION ALL
      SELECT * FROM (SELECT repo_id, seq, lease_until_ms FROM permits
        WHERE lease_until_ms IS NULL ORDER BY seq LIMIT ${bound})`;
    const repositories =
      this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM repos WHERE status <> 'removed'`[0]?.n ?? 0;
    return {
      permits: rows
        .map((r) => ({ repoId: r.repo_id, seq: r.seq, leaseUntilMs: r.lease_until_ms }))
        .sort((a, b) => a.seq - b.seq),
      repositories,
      spent: this.spent(),
      readings: this.readings(),
    };
  }

  /**
   * `repoId`'s place in line at `nowMs` (1: the next granted), counting a lease that ran out as
   * back in line; null when it holds a permit or is not in line.
   */
  position(repoId: number, nowMs: number): number | null {
    const own = this.permit(repoId);
    if (!own || (own.leaseUntilMs !== null && own.leaseUntilMs > nowMs)) return null;
    const ahead = this.sql<{ n: number }>`
      SELECT (SELECT COUNT(*) FROM permits WHERE lease_until_ms IS NULL AND seq < ${own.seq})
        + (SELECT COUNT(*) FROM permits WHERE lease_until_ms IS NOT NULL
           AND lease_until_ms <= ${nowMs} AND seq < ${own.seq}) AS n`[0]?.n;
    return (ahead ?? 0) + 1;
  }

  /** Permits held at `nowMs` (leases that ran out are not). */
  held(nowMs: number): number {
    return (
      this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM permits
        WHERE lease_until_ms IS NOT NULL AND lease_until_ms > ${nowMs}`[0]?.n ?? 0
    );
  }

  /** Whether `repoId` has a full reconcile behind it (as this installation knows). */
  isReconciled(repoId: number): boolean {
    return (
      this.sql<{ reconciled_ms: number | null }>`
        SELECT reconciled_ms FROM repos WHERE id = ${repoId}`[0]?.reconciled_ms != null
    );
  }

  settings(base: PermitSettings = DEFAULT_PERMIT_SETTINGS): PermitSettings {
    return { ...base, costPerReconcile: this.stat("reconcileCost") ?? base.costPerReconcile };
  }

  /**
   * Installed repositories with a full reconcile behind them, and those without one that hold
   * no permit (waiting for one, or not asked yet).
   */
  counts(): { reconciled: number; waiting: number } {
    const row = this.sql<{ reconciled: number; waiting: number }>`
      SELECT COUNT(reconciled_ms) AS reconciled,
        COUNT(*) FILTER (WHERE reconciled_ms IS NULL AND id NOT IN (
          SELECT repo_id FROM permits WHERE lease_until_ms IS NOT NULL)) AS waiting
      FROM repos WHERE status <> 'removed'`[0];
    return { reconciled: row?.reconciled ?? 0, waiting: row?.waiting ?? 0 };
  }

  averageReconcileMs(): number | null {
    return this.stat("reconcileMs") ?? null;
  }

  private stat(key: string): number | undefined {
    return this.sql<{ value: number }>`SELECT value FROM permit_stats WHERE key = ${key}`[0]?.value;
  }

  private setStat(key: string, value: number): void {
    this.sql`INSERT INTO permit_stats (key, value) VALUES (${key}, ${value})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
  }
}
