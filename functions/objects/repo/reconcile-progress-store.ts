import type { LabelNames } from "../../../shared/config/schema.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import { tupleChunks } from "../json-batches.ts";
import type { Sql } from "../sql.ts";

/** Corrections kept for the `reconcile` audit entry; the rest are only counted. */
const CORRECTIONS_KEPT = 100;

/** Unseen issues read at a time when a run completes (memory stays bounded). */
const UNSEEN_CHUNK = 500;

/** A full reconcile in progress, as persisted after its last merged page. */
export interface ReconcileRun {
  runId: string;
  /** The repository's lifecycle generation when the run began: another one abandons it. */
  generation: number;
  startedMs: number;
  /** The label names it fetches with (they decide which issues' label events are read). */
  labels: string;
  /** Where the next page starts; null before the first page. */
  cursor: string | null;
  pages: number;
  issues: number;
  requests: number;
  corrections: number;
  corrected: string[];
  /** Times GitHub refused the cursor and the run began again from the first page. */
  restarts: number;
  updatedMs: number;
}

/** What the status read path shows of a run in progress. */
export interface ReconcileProgress {
  runId: string;
  startedAt: string;
  pagesDone: number;
  issuesSeen: number;
  requests: number;
  corrections: number;
  restarts: number;
  lastPageAt: string;
}

interface RunRow extends Record<string, SqlStorageValue> {
  run_id: string;
  generation: number;
  started_ms: number;
  labels: string;
  cursor: string | null;
  pages: number;
  issues: number;
  requests: number;
  corrections: number;
  corrected: string;
  restarts: number;
  updated_ms: number;
}

/** The label names of a run, as compared between its steps. */
export function labelsKey(labels: LabelNames): string {
  return JSON.stringify(labels);
}

/**
 * The full reconcile's progress (`reconcile_run`, one row while a run is in progress) and the
 * issues it has seen (`reconcile_seen`: number and `updated_ms` as fetched). Both live in SQLite
 * so a run survives an eviction, a deploy or a failed step, and so "stored but not seen" is
 * asked of storage when the run completes, never held in memory. The only code that runs SQL on
 * these tables; `unseenIssues` also reads `issues` (number, `updated_ms`), read-only.
 */
export class ReconcileProgressStore {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  current(): ReconcileRun | null {
    const row = this.sql<RunRow>`SELECT * FROM reconcile_run WHERE id = 0`[0];
    if (!row) return null;
    return {
      runId: row.run_id,
      generation: row.generation,
      startedMs: row.started_ms,
      labels: row.labels,
      cursor: row.cursor,
      pages: row.pages,
      issues: row.issues,
      requests: row.requests,
      corrections: row.corrections,
      corrected: JSON.parse(row.corrected) as string[],
      restarts: row.restarts,
      updatedMs: row.updated_ms,
    };
  }

  /** Begins a run (replacing any other): no page read, nothing seen. */
  start(run: {
    runId: string;
    generation: number;
    startedMs: number;
    labels: string;
    restarts?: number;
  }): ReconcileRun {
    this.abandon();
    this.sql`INSERT INTO reconcile_run
      (id, run_id, generation, started_ms, labels, cursor, pages, issues, requests, corrections,
       corrected, restarts, updated_ms)
      VALUES (0, ${run.runId}, ${run.generation}, ${run.startedMs}, ${run.labels}, NULL, 0, 0, 0, 0,
       '[]', ${run.restarts ?? 0}, ${run.startedMs})`;
    return this.current()!;
  }

  /**
   * One page merged: the issues it saw, where the next page starts, what it cost and changed.
   * Called in the page's transaction, so a page is either merged and recorded or neither.
   */
  recordPage(
    runId: string,
    page: {
      next: string | null;
      seen: ReadonlyArray<{ number: number; updatedMs: number }>;
      requests: number;
      corrected: readonly string[];
      atMs: number;
    },
  ): void {
    // A statement per chunk of the page, not per issue (see json-batches.ts).
    for (const json of tupleChunks(page.seen.map((s) => [s.number, s.updatedMs]))) {
      this.sql`INSERT INTO reconcile_seen (number, updated_ms)
        SELECT value ->> 0, value ->> 1 FROM json_each(${json}) WHERE true ORDER BY key
        ON CONFLICT (number) DO UPDATE SET updated_ms = excluded.updated_ms`;
    }
    const run = this.current();
    if (!run || run.runId !== runId) throw new Error(`reconcile run ${runId} is not in progress`);
    const kept = [...run.corrected, ...page.corrected].slice(0, CORRECTIONS_KEPT);
    this.sql`UPDATE reconcile_run SET cursor = ${page.next}, pages = pages + 1,
      issues = issues + ${page.seen.length}, requests = requests + ${page.requests},
      corrections = corrections + ${page.corrected.length}, corrected = ${JSON.stringify(kept)},
      updated_ms = ${page.atMs}
      WHERE id = 0`;
  }

  /** Requests a step made without merging a page (a refused cursor), counted all the same. */
  addRequests(requests: number): void {
    this.sql`UPDATE reconcile_run SET requests = requests + ${requests} WHERE id = 0`;
  }

  /**
   * Stored issues this run has not seen, ascending after `afterNumber`, at most a chunk: what
   * the completion decides removals on (keyset paging keeps memory bounded).
   */
  unseenIssues(afterNumber: number): Array<{ number: number; updatedMs: number }> {
    return this.sql<{ number: number; updated_ms: number }>`
      SELECT i.number, i.updated_ms FROM issues i
      WHERE i.number > ${afterNumber}
        AND NOT EXISTS (SELECT 1 FROM reconcile_seen s WHERE s.number = i.number)
      ORDER BY i.number LIMIT ${UNSEEN_CHUNK}`.map((r) => ({
      number: r.number,
      updatedMs: r.updated_ms,
    }));
  }

  /** Every unseen stored issue, chunk by chunk (see `unseenIssues`). */
  *eachUnseenChunk(): Generator<Array<{ number: number; updatedMs: number }>> {
    let after = 0;
    for (;;) {
      const chunk = this.unseenIssues(after);
      if (chunk.length === 0) return;
      yield chunk;
      after = chunk[chunk.length - 1]!.number;
    }
  }

  /** The newest `updated_at` (ms) among the issues this run saw; null when it saw none. */
  newestSeenMs(): number | null {
    return (
      this.sql<{ n: number | null }>`SELECT MAX(updated_ms) AS n FROM reconcile_seen`[0]?.n ?? null
    );
  }

  /** Issues this run saw updated exactly at `updatedMs` (the incremental listing's boundary). */
  seenAt(updatedMs: number): number[] {
    return this.sql<{ number: number }>`
      SELECT number FROM reconcile_seen WHERE updated_ms = ${updatedMs} ORDER BY number`.map(
      (r) => r.number,
    );
  }

  /** Ends the run in progress (completed or abandoned): its row and what it saw go. */
  abandon(): void {
    this.sql`DELETE FROM reconcile_run`;
    this.sql`DELETE FROM reconcile_seen`;
  }

  /** The run in progress for the status read path; null when none is. */
  progress(): ReconcileProgress | null {
    const run = this.current();
    if (!run) return null;
    return {
      runId: run.runId,
      startedAt: formatInstant(run.startedMs),
      pagesDone: run.pages,
      issuesSeen: run.issues,
      requests: run.requests,
      corrections: run.corrections,
      restarts: run.restarts,
      lastPageAt: formatInstant(run.updatedMs),
    };
  }

  /** An uninstall: nothing of a run survives it. */
  wipe(): void {
    this.abandon();
  }
}
