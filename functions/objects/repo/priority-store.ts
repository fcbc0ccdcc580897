// Priority from an organization project's field in the RepoObject's SQLite (`priority_items`,
// `priority_rereads`, `priority_state`, migration step 7): the only code that runs SQL on them.
// What a rank is comes from shared/queue/priority.ts.
import type { Sql } from "../sql.ts";

/** Whether the project field is read, and why not. */
export type ProjectReadState =
  /** No `priority.project` in the config. */
  | "unconfigured"
  /** Configured; not read yet. */
  | "pending"
  | "on"
  /** Configured but unreadable (a missing permission, no such project or field): no ranks. */
  | "off";

export interface PriorityState {
  /** The configured project (`org/number/field`) the rest of the row is about. */
  project: string | null;
  projectId: string | null;
  state: ProjectReadState;
  reason: string | null;
  readMs: number | null;
  /** A full read in progress: when it began and where it goes on (null cursor: the first page). */
  run: { startedMs: number; cursor: string | null } | null;
}

type StateRow = {
  project: string | null;
  project_id: string | null;
  state: string;
  reason: string | null;
  read_ms: number | null;
  run_started_ms: number | null;
  cursor: string | null;
};

export class PriorityStore {
  private readonly sql: Sql;
  /** Bumped with every change of an option (the queue view rebuilds). */
  onChange: (() => void) | null = null;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  state(): PriorityState {
    const r = this.sql<StateRow>`SELECT project, project_id, state, reason, read_ms,
      run_started_ms, cursor FROM priority_state WHERE id = 0`[0];
    if (!r) {
      return {
        project: null,
        projectId: null,
        state: "unconfigured",
        reason: null,
        readMs: null,
        run: null,
      };
    }
    return {
      project: r.project,
      projectId: r.project_id,
      state: r.state as ProjectReadState,
      reason: r.reason,
      readMs: r.read_ms,
      run: r.run_started_ms === null ? null : { startedMs: r.run_started_ms, cursor: r.cursor },
    };
  }

  setState(next: PriorityState): void {
    this
      .sql`INSERT INTO priority_state (id, project, project_id, state, reason, read_ms, run_started_ms, cursor)
      VALUES (0, ${next.project}, ${next.projectId}, ${next.state}, ${next.reason}, ${next.readMs},
        ${next.run?.startedMs ?? null}, ${next.run?.cursor ?? null})
      ON CONFLICT (id) DO UPDATE SET project = excluded.project, project_id = excluded.project_id,
        state = excluded.state, reason = excluded.reason, read_ms = excluded.read_ms,
        run_started_ms = excluded.run_started_ms, cursor = excluded.cursor`;
  }

  /** Every issue's option (issues with none left out). */
  options(): Map<number, string> {
    const out = new Map<number, string>();
    for (const r of this.sql<{ number: number; option: string }>`
      SELECT number, option FROM priority_items WHERE option IS NOT NULL`)
      out.set(r.number, r.option);
    return out;
  }

  option(number: number): string | null {
    return (
      this.sql<{
        option: string | null;
      }>`SELECT option FROM priority_items WHERE number = ${number}`[0]?.option ?? null
    );
  }

  /**
   * Sets issue `number`'s option as of `atMs` unless a later one is stored (notices arrive in
   * any order; a full read is stamped with its start). True when the option changed.
   */
  set(number: number, itemId: string, option: string | null, atMs: number): boolean {
    const stored = this.sql<{ option: string | null; at_ms: number }>`
      SELECT option, at_ms FROM priority_items WHERE number = ${number}`[0];
    if (stored !== undefined && stored.at_ms > atMs) return false;
    this.sql`INSERT INTO priority_items (number, item_id, option, at_ms)
      VALUES (${number}, ${itemId}, ${option}, ${atMs})
      ON CONFLICT (number) DO UPDATE SET item_id = excluded.item_id, option = excluded.option,
        at_ms = excluded.at_ms`;
    const changed = (stored?.option ?? null) !== option;
    if (changed) this.onChange?.();
    return changed;
  }

  /** A full read that began at `startedMs` ended: options it did not see (and older) are gone. */
  clearUnseen(startedMs: number): number {
    const gone = this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM priority_items
      WHERE at_ms < ${startedMs} AND option IS NOT NULL`[0]?.n;
    this.sql`UPDATE priority_items SET option = NULL, at_ms = ${startedMs}
      WHERE at_ms < ${startedMs} AND option IS NOT NULL`;
    if ((gone ?? 0) > 0) this.onChange?.();
    return gone ?? 0;
  }

  /** Every stored option goes (the config names another project, or none). */
  clearAll(): void {
    const had = this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM priority_items`[0]?.n ?? 0;
    this.sql`DELETE FROM priority_items`;
    this.sql`DELETE FROM priority_rereads`;
    if (had > 0) this.onChange?.();
  }

  addReread(itemId: string, atMs: number): void {
    this.sql`INSERT INTO priority_rereads (item_id, at_ms) VALUES (${itemId}, ${atMs})
      ON CONFLICT (item_id) DO UPDATE SET at_ms = MAX(at_ms, excluded.at_ms)`;
  }

  rereads(limit: number): Array<{ itemId: string; atMs: number }> {
    return this.sql<{ item_id: string; at_ms: number }>`
      SELECT item_id, at_ms FROM priority_rereads ORDER BY at_ms LIMIT ${limit}`.map((r) => ({
      itemId: r.item_id,
      atMs: r.at_ms,
    }));
  }

  dropReread(itemId: string, atMs: number): void {
    this.sql`DELETE FROM priority_rereads WHERE item_id = ${itemId} AND at_ms <= ${atMs}`;
  }

  /**
   * Options cleared before `tombstonesMs` (tombstones outliving any late delivery), and re-reads
   * asked for before `rereadsMs` that never succeeded (the next full read covers them).
   */
  prune(tombstonesMs: number, rereadsMs: number): void {
    this.sql`DELETE FROM priority_items WHERE option IS NULL AND at_ms < ${tombstonesMs}`;
    this.sql`DELETE FROM priority_rereads WHERE at_ms < ${rereadsMs}`;
  }

  wipe(): void {
    this.sql`DELETE FROM priority_items`;
    this.sql`DELETE FROM priority_rereads`;
    this.sql`DELETE FROM priority_state`;
  }
}
