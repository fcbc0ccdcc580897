import type { Sql } from "../sql.ts";

export type ScheduleName =
  | "producer"
  | "outbox"
  | "reconcile"
  | "reconcile-full"
  | "prune"
  | "sync"
  | "config"
  /** Ends expired claims (fleet API). */
  | "claims"
  /** Re-reads the issues of claims whose IDD marker was posted, for an earlier IDD claim (preemption.ts). */
  | "verify"
  /** Closes fenced write records at their close time (write-records.ts). */
  | "writes"
  /** Writes owed for the fleet: IDD mirror markers, processing labels, dead letters. */
  | "fleet"
  /** Asks GitHub whether IDD marker authors have write access. */
  | "trust"
  /** Tells the installation's other repositories of closes and reopens here (cross-repo.ts). */
  | "cross-repo"
  /** Reads the default branch's CI again (the circuit breaker, breaker.ts). */
  | "ci"
  /** Makes the breaker's verdict again when a carried red verdict's time is over. */
  | "breaker"
  /** Reads the priority project field (a share of pages at a time) and single items (priority.ts). */
  | "priority"
  /** Pushes the queue's head to the owner's object (the org queue, owner-push.ts). */
  | "owner";

/** How long a taken schedule stays leased: longer than any alarm run can last. */
const LEASE_MS = 10 * 60_000;

export interface DueSchedule {
  name: ScheduleName;
  /** Consecutive failures so far (0 on a first run). */
  attempts: number;
  /** The lease: the row's due time while it runs; completing checks it is still this. */
  leaseMs: number;
}

/**
 * Many schedules, one alarm: each schedule is a row (name, due time, failures); the Durable
 * Object alarm is always set to the earliest row. A due row is leased, not deleted, while its
 * handler runs, so a run cut short (a deploy, an eviction) leaves it to run again. Handlers must
 * be idempotent, because alarms are delivered at least once.
 */
export class Schedules {
  private readonly sql: Sql;
  private readonly storage: DurableObjectStorage;
  /** The alarm time last set by this instance (undefined: unknown, e.g. after a restart). */
  private armed: number | null | undefined;
  constructor(sql: Sql, storage: DurableObjectStorage) {
    this.sql = sql;
    this.storage = storage;
  }

  /**
   * Schedules `name` at `dueMs`, or earlier if it is already due sooner (coalescing bursts).
   * While its handler runs (the row is leased), the request is kept apart and applied when the
   * handler completes, so a handler can reschedule itself at any distance.
   */
  at(name: ScheduleName, dueMs: number): void {
    this.sql`INSERT INTO schedules (name, due_ms) VALUES (${name}, ${dueMs})
      ON CONFLICT (name) DO UPDATE SET
        due_ms = CASE WHEN leased = 1 THEN due_ms ELSE MIN(due_ms, excluded.due_ms) END,
        requested_ms = CASE WHEN leased = 1 THEN MIN(COALESCE(requested_ms, excluded.due_ms), excluded.due_ms)
                            ELSE requested_ms END`;
  }

  /** Schedules `name` at `dueMs` unless it is scheduled already (or asked for while running). */
  ensure(name: ScheduleName, dueMs: number): void {
    this.sql`INSERT INTO schedules (name, due_ms) VALUES (${name}, ${dueMs})
      ON CONFLICT (name) DO UPDATE SET
        requested_ms = CASE WHEN leased = 1 THEN COALESCE(requested_ms, excluded.due_ms) ELSE requested_ms END`;
  }

  /** Leases every schedule due at `nowMs`; each must then be completed or retried. */
  takeDue(nowMs: number): DueSchedule[] {
    const leaseMs = nowMs + LEASE_MS;
    return this.sql<{ name: string; attempts: number }>`
      UPDATE schedules SET due_ms = ${leaseMs}, leased = 1, requested_ms = NULL
      WHERE due_ms <= ${nowMs} RETURNING name, attempts`.map((r) => ({
      name: r.name as ScheduleName,
      attempts: r.attempts,
      leaseMs,
    }));
  }

  /** The handler succeeded: drop the row, or move it to what was asked for while it ran. */
  complete(due: DueSchedule): void {
    this
      .sql`DELETE FROM schedules WHERE name = ${due.name} AND leased = 1 AND requested_ms IS NULL`;
    this
      .sql`UPDATE schedules SET due_ms = requested_ms, requested_ms = NULL, leased = 0, attempts = 0
      WHERE name = ${due.name} AND leased = 1`;
  }

  /** The handler failed: run again at `dueMs`, counting the failure. */
  retry(due: DueSchedule, dueMs: number): void {
    this
      .sql`INSERT INTO schedules (name, due_ms, attempts) VALUES (${due.name}, ${dueMs}, ${due.attempts + 1})
      ON CONFLICT (name) DO UPDATE SET due_ms = excluded.due_ms, attempts = excluded.attempts,
        leased = 0, requested_ms = NULL`;
  }

  /**
   * For a new instance: a lease taken by an instance that is gone is not running any more (an
   * eviction, a deploy or a crash cut its handler short). Each such schedule runs again after
   * `delayMs(attempts)`, counted as a failure, so a handler that keeps killing its instance
   * backs off instead of spinning, and one cut short once (a full reconcile's step) resumes in
   * seconds, not when its lease runs out.
   */
  releaseLeases(nowMs: number, delayMs: (attempts: number) => number): void {
    const leased = this.sql<{ name: string; attempts: number }>`
      SELECT name, attempts FROM schedules WHERE leased = 1`;
    for (const row of leased) {
      const attempts = row.attempts + 1;
      this.sql`UPDATE schedules SET due_ms = ${nowMs + delayMs(attempts)}, attempts = ${attempts},
        leased = 0, requested_ms = NULL WHERE name = ${row.name}`;
    }
  }

  clear(): void {
    this.sql`DELETE FROM schedules`;
  }

  list(): Array<{ name: ScheduleName; dueMs: number; attempts: number }> {
    return this.sql<{ name: string; due_ms: number; attempts: number }>`
      SELECT name, due_ms, attempts FROM schedules ORDER BY due_ms, name`.map((r) => ({
      name: r.name as ScheduleName,
      dueMs: r.due_ms,
      attempts: r.attempts,
    }));
  }

  /** Points the alarm at the earliest schedule, or clears it when nothing is scheduled. */
  async rearm(): Promise<void> {
    const next =
      this.sql<{ due: number | null }>`SELECT MIN(due_ms) AS due FROM schedules`[0]?.due ?? null;
    // Unchanged since the last call: skip the storage write (a burst of webhooks re-arms often).
    if (next === this.armed) return;
    if (next === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(next);
    this.armed = next;
  }

  /** Forgets what was armed: once the alarm fired, the runtime no longer holds it. */
  fired(): void {
    this.armed = undefined;
  }
}
