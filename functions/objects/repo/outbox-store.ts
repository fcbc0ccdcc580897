import type { LabelChange } from "../../../shared/producer/plan.ts";
import type { Sql } from "../sql.ts";

export interface LabelOp extends LabelChange {
  action: "add" | "remove";
}

export interface OutboxRow {
  seq: number;
  /** The producer run (fence) the write belongs to. */
  fence: number;
  op: LabelOp;
  /** Failed attempts so far. */
  attempts: number;
}

/** A write set aside after it kept failing (or GitHub refused it with a 403). */
export interface ParkedWrite {
  seq: number;
  op: LabelOp;
  attempts: number;
  lastError: string | null;
  parkedMs: number;
}

type ParkedRow = {
  seq: number;
  op: string;
  attempts: number;
  last_error: string | null;
  parked_ms: number;
};

/** What makes two label writes the same write: the issue, the label and the action. */
export const writeKey = (op: Pick<LabelOp, "number" | "label" | "action">): string =>
  JSON.stringify([op.number, op.label, op.action]);

/**
 * The producer's queued label writes, in order, and the parked ones (kept aside, not in the
 * queue). The only code that runs SQL on `outbox`.
 */
export class Outbox {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** The queued writes (parked ones are not queued). */
  ops(): LabelOp[] {
    return this.sql<{ op: string }>`SELECT op FROM outbox WHERE parked_ms IS NULL ORDER BY seq`.map(
      (r) => JSON.parse(r.op) as LabelOp,
    );
  }

  enqueue(fence: number, ops: readonly LabelOp[]): void {
    for (const op of ops)
      this.sql`INSERT INTO outbox (fence, op) VALUES (${fence}, ${JSON.stringify(op)})`;
  }

  /** The next queued write, or undefined when the queue is empty. */
  first(): OutboxRow | undefined {
    const row = this.sql<{ seq: number; fence: number; op: string; attempts: number }>`
      SELECT seq, fence, op, attempts FROM outbox WHERE parked_ms IS NULL ORDER BY seq LIMIT 1`[0];
    return (
      row && {
        seq: row.seq,
        fence: row.fence,
        op: JSON.parse(row.op) as LabelOp,
        attempts: row.attempts,
      }
    );
  }

  remove(seq: number): void {
    this.sql`DELETE FROM outbox WHERE seq = ${seq}`;
  }

  /** A failed attempt: counted, its error kept. Returns the attempts so far (0: no such row). */
  recordFailure(seq: number, message: string): number {
    return (
      this.sql<{ attempts: number }>`
        UPDATE outbox SET attempts = attempts + 1, last_error = ${message} WHERE seq = ${seq}
        RETURNING attempts`[0]?.attempts ?? 0
    );
  }

  /**
   * Takes a write out of the queue and keeps it aside, in place of an earlier parked copy of the
   * same write (same issue, label and action): one parked row per write, however often it failed.
   */
  park(seq: number, atMs: number): void {
    const row = this.sql<{ op: string }>`SELECT op FROM outbox WHERE seq = ${seq}`[0];
    if (!row) return;
    const key = writeKey(JSON.parse(row.op) as LabelOp);
    for (const earlier of this.parked()) {
      if (earlier.seq !== seq && writeKey(earlier.op) === key) this.remove(earlier.seq);
    }
    this.sql`UPDATE outbox SET parked_ms = ${atMs} WHERE seq = ${seq}`;
  }

  /** The parked writes, oldest first; with `limit`, only the most recent `limit` of them. */
  parked(limit?: number): ParkedWrite[] {
    const rows =
      limit === undefined
        ? this.sql<ParkedRow>`SELECT seq, op, attempts, last_error, parked_ms FROM outbox
            WHERE parked_ms IS NOT NULL ORDER BY seq`
        : this.sql<ParkedRow>`SELECT * FROM (SELECT seq, op, attempts, last_error, parked_ms
            FROM outbox WHERE parked_ms IS NOT NULL ORDER BY seq DESC LIMIT ${limit})
            ORDER BY seq`;
    return rows.map((r) => ({
      seq: r.seq,
      op: JSON.parse(r.op) as LabelOp,
      attempts: r.attempts,
      lastError: r.last_error,
      parkedMs: r.parked_ms,
    }));
  }

  /** How many writes are parked. */
  parkedCount(): number {
    return (
      this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM outbox WHERE parked_ms IS NOT NULL`[0]?.n ??
      0
    );
  }

  /** Deletes the writes parked before `beforeMs` and returns them (to be planned again). */
  takeParked(beforeMs: number): ParkedWrite[] {
    const taken = this.parked().filter((p) => p.parkedMs < beforeMs);
    this.sql`DELETE FROM outbox WHERE parked_ms IS NOT NULL AND parked_ms < ${beforeMs}`;
    return taken;
  }

  /** Queued writes (parked ones excluded). */
  count(): number {
    return (
      this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM outbox WHERE parked_ms IS NULL`[0]?.n ?? 0
    );
  }

  /** Drops the queued writes; parked ones stay (they are planned again after a full reconcile). */
  dropQueued(): void {
    this.sql`DELETE FROM outbox WHERE parked_ms IS NULL`;
  }

  /** Deletes every row, parked ones included. */
  clear(): void {
    this.sql`DELETE FROM outbox`;
  }
}
