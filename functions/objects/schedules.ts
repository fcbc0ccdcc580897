import type { Sql } from "./sql.ts";

export type ScheduleName = "producer" | "outbox" | "reconcile" | "reconcile-full" | "prune";

/**
 * Many schedules, one alarm: each schedule is a row (name, due time); the Durable Object alarm
 * is always set to the earliest due row. Handlers must be idempotent, because alarms are
 * delivered at least once.
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

  /** Schedules `name` at `dueMs`, or earlier if it is already due sooner (coalescing bursts). */
  at(name: ScheduleName, dueMs: number): void {
    this.sql`INSERT INTO schedules (name, due_ms) VALUES (${name}, ${dueMs})
      ON CONFLICT (name) DO UPDATE SET due_ms = MIN(due_ms, excluded.due_ms)`;
  }

  /** Reschedules `name` after a failure, with its attempt count for backoff. */
  retry(name: ScheduleName, dueMs: number): number {
    const row = this.sql<{
      attempts: number;
    }>`INSERT INTO schedules (name, due_ms, attempts) VALUES (${name}, ${dueMs}, 1)
      ON CONFLICT (name) DO UPDATE SET due_ms = excluded.due_ms, attempts = schedules.attempts + 1
      RETURNING attempts`;
    return row[0]?.attempts ?? 1;
  }

  /** Forgets a schedule's failure count after it succeeded. */
  resetAttempts(name: ScheduleName): void {
    this.sql`UPDATE schedules SET attempts = 0 WHERE name = ${name}`;
  }

  attempts(name: ScheduleName): number {
    return (
      this.sql<{ attempts: number }>`SELECT attempts FROM schedules WHERE name = ${name}`[0]
        ?.attempts ?? 0
    );
  }

  cancel(name: ScheduleName): void {
    this.sql`DELETE FROM schedules WHERE name = ${name}`;
  }

  clear(): void {
    this.sql`DELETE FROM schedules`;
  }

  /** Takes the schedules due at `nowMs` off the table, earliest first. */
  takeDue(nowMs: number): ScheduleName[] {
    return this.sql<{
      name: string;
    }>`DELETE FROM schedules WHERE due_ms <= ${nowMs} RETURNING name, due_ms`
      .map((r) => r.name as ScheduleName)
      .sort();
  }

  list(): Array<{ name: ScheduleName; dueMs: number }> {
    return this.sql<{
      name: string;
      due_ms: number;
    }>`SELECT name, due_ms FROM schedules ORDER BY due_ms, name`.map((r) => ({
      name: r.name as ScheduleName,
      dueMs: r.due_ms,
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
