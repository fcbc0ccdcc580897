// Fenced write records in the RepoObject's SQLite (`write_records`, migration step 11): the only
// code that reads or writes that table. What a record's times mean, and when it closes, is
// decided in shared/claims/write-records.ts.
import type { WriteEnd } from "../../../shared/claims/write-records.ts";
import type { Sql } from "../sql.ts";

/**
 * How a record ended: the write's own end, or `unfinished` when the record was closed by the
 * alarm with the write never having reported back (its instance was evicted or restarted).
 */
export type WriteOutcome = WriteEnd | "unfinished";

export interface WriteRecord {
  id: number;
  number: number;
  claimId: string;
  fence: number;
  kind: string;
  startedMs: number;
  deadlineMs: number;
  closeAtMs: number;
  /** Null while the write runs. */
  outcome: WriteOutcome | null;
  /** Null while the record is open. */
  closedMs: number | null;
  lateReported: boolean;
}

type Row = {
  id: number;
  number: number;
  claim_id: string;
  fence: number;
  kind: string;
  started_ms: number;
  deadline_ms: number;
  close_at_ms: number;
  outcome: string | null;
  closed_ms: number | null;
  late_reported: number;
};

const record = (r: Row): WriteRecord => ({
  id: r.id,
  number: r.number,
  claimId: r.claim_id,
  fence: r.fence,
  kind: r.kind,
  startedMs: r.started_ms,
  deadlineMs: r.deadline_ms,
  closeAtMs: r.close_at_ms,
  outcome: r.outcome as WriteOutcome | null,
  closedMs: r.closed_ms,
  lateReported: r.late_reported === 1,
});

export class WriteRecordsStore {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  open(r: Omit<WriteRecord, "id" | "outcome" | "closedMs" | "lateReported">): WriteRecord {
    const row = this.sql<Row>`INSERT INTO write_records
      (number, claim_id, fence, kind, started_ms, deadline_ms, close_at_ms)
      VALUES (${r.number}, ${r.claimId}, ${r.fence}, ${r.kind}, ${r.startedMs}, ${r.deadlineMs},
              ${r.closeAtMs})
      RETURNING *`[0]!;
    return record(row);
  }

  get(id: number): WriteRecord | undefined {
    const row = this.sql<Row>`SELECT * FROM write_records WHERE id = ${id}`[0];
    return row ? record(row) : undefined;
  }

  /** The record on issue `number` still open at `nowMs` that closes last, if any. */
  openOn(number: number, nowMs: number): WriteRecord | undefined {
    const row = this.sql<Row>`SELECT * FROM write_records
      WHERE number = ${number} AND closed_ms IS NULL AND close_at_ms > ${nowMs}
      ORDER BY close_at_ms DESC LIMIT 1`[0];
    return row ? record(row) : undefined;
  }

  /** Records open at `nowMs` (not closed, not past their close), oldest first. */
  openAt(nowMs: number): WriteRecord[] {
    return this.sql<Row>`SELECT * FROM write_records
      WHERE closed_ms IS NULL AND close_at_ms > ${nowMs} ORDER BY id`.map(record);
  }

  /** Issues with a record open at `nowMs`. */
  openIssues(nowMs: number): Set<number> {
    return new Set(
      this.sql<{ number: number }>`SELECT DISTINCT number FROM write_records
        WHERE closed_ms IS NULL AND close_at_ms > ${nowMs}`.map((r) => r.number),
    );
  }

  /** The write ended (`outcome`); its record closes at `closeAtMs` (now, or a margin later). */
  finish(id: number, outcome: WriteEnd, closeAtMs: number, nowMs: number): void {
    this.sql`UPDATE write_records SET outcome = ${outcome}, close_at_ms = ${closeAtMs},
      closed_ms = CASE WHEN ${closeAtMs} <= ${nowMs} THEN ${closeAtMs} ELSE NULL END
      WHERE id = ${id} AND closed_ms IS NULL`;
  }

  /** Records whose close is due at `nowMs` and not yet recorded. */
  due(nowMs: number): WriteRecord[] {
    return this.sql<Row>`SELECT * FROM write_records
      WHERE closed_ms IS NULL AND close_at_ms <= ${nowMs} ORDER BY id`.map(record);
  }

  /** Closes a due record at its close time; a write that never reported back is `unfinished`. */
  close(id: number): void {
    this.sql`UPDATE write_records SET closed_ms = close_at_ms,
      outcome = COALESCE(outcome, 'unfinished') WHERE id = ${id} AND closed_ms IS NULL`;
  }

  /** When the next open record closes (for the alarm), or null. */
  nextCloseMs(): number | null {
    return (
      this.sql<{ due: number | null }>`SELECT MIN(close_at_ms) AS due FROM write_records
        WHERE closed_ms IS NULL`[0]?.due ?? null
    );
  }

  /** The comment records of a claim and fence, newest first (finding a late comment's write). */
  commentsOf(claimId: string, fence: number): WriteRecord[] {
    return this.sql<Row>`SELECT * FROM write_records
      WHERE claim_id = ${claimId} AND fence = ${fence} AND kind = 'comment'
      ORDER BY id DESC`.map(record);
  }

  /** The records of one kind on issue `number` (finding a late label change's or close's write). */
  ofIssue(number: number, kind: string): WriteRecord[] {
    return this.sql<Row>`SELECT * FROM write_records
      WHERE number = ${number} AND kind = ${kind} ORDER BY id DESC`.map(record);
  }

  markLateReported(id: number): void {
    this.sql`UPDATE write_records SET late_reported = 1 WHERE id = ${id}`;
  }

  /** Closed records older than the cutoff (the daily prune). */
  prune(beforeMs: number): void {
    this.sql`DELETE FROM write_records WHERE closed_ms IS NOT NULL AND closed_ms < ${beforeMs}`;
  }

  wipe(): void {
    this.sql`DELETE FROM write_records`;
  }
}
