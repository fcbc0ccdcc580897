import type { LabelChange } from "../../shared/producer/plan.ts";
import type { Sql } from "./sql.ts";

export interface LabelOp extends LabelChange {
  action: "add" | "remove";
}

export interface OutboxRow {
  seq: number;
  /** The producer run (fence) the write belongs to. */
  fence: number;
  op: LabelOp;
}

/** The producer's queued label writes, in order. The only code that runs SQL on `outbox`. */
export class Outbox {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  ops(): LabelOp[] {
    return this.sql<{ op: string }>`SELECT op FROM outbox ORDER BY seq`.map(
      (r) => JSON.parse(r.op) as LabelOp,
    );
  }

  enqueue(fence: number, ops: readonly LabelOp[]): void {
    for (const op of ops)
      this.sql`INSERT INTO outbox (fence, op) VALUES (${fence}, ${JSON.stringify(op)})`;
  }

  /** The next write, or undefined when the outbox is empty. */
  first(): OutboxRow | undefined {
    const row = this.sql<{ seq: number; fence: number; op: string }>`
      SELECT seq, fence, op FROM outbox ORDER BY seq LIMIT 1`[0];
    return row && { seq: row.seq, fence: row.fence, op: JSON.parse(row.op) as LabelOp };
  }

  remove(seq: number): void {
    this.sql`DELETE FROM outbox WHERE seq = ${seq}`;
  }

  /** A failure that can pass: the write stays queued, its attempts counted. */
  recordFailure(seq: number, message: string): void {
    this.sql`UPDATE outbox SET attempts = attempts + 1, last_error = ${message} WHERE seq = ${seq}`;
  }

  count(): number {
    return this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM outbox`[0]?.n ?? 0;
  }

  clear(): void {
    this.sql`DELETE FROM outbox`;
  }
}
