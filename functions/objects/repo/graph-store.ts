import type { CompactGraph } from "../../../shared/graph/compact.ts";
import { decodeRef } from "../../../shared/ingest/merge.ts";
import type {
  BlockerRow,
  CommentRow,
  CommentTombstone,
  ExternalRow,
  IssueRow,
  IssueTombstone,
  LabelEventRow,
  ParentRow,
  RowKeys,
  RowWrite,
  StoredRows,
} from "../../../shared/ingest/merge-event.ts";
import { requiresOf } from "../../../shared/queue/requires.ts";
import type { RetentionCutoffs } from "../../../shared/schedule/retention.ts";
import { rowsByKey } from "../json-batches.ts";
import type { Sql } from "../sql.ts";
import type { MarkerCommentRow } from "./graph-reads.ts";
import { writeRun } from "./graph-row-writes.ts";

/** The answer for keys with no rows: one shared empty list, never written to. */
const NO_ROWS: readonly never[] = Object.freeze([]);

/** The graph tables: what their rows look like in SQLite. */
export type IssueSqlRow = {
  number: number;
  id: number | null;
  title: string;
  state: string;
  state_reason: string | null;
  created_at: string;
  updated_at: string;
  updated_ms: number;
  closed_at: string | null;
  labels: string;
  body: string | null;
  closed_seq: number | null;
};

export function issueFromSql(r: IssueSqlRow): IssueRow {
  return {
    number: r.number,
    id: r.id,
    title: r.title,
    state: r.state as IssueRow["state"],
    stateReason: r.state_reason,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    updatedMs: r.updated_ms,
    closedAt: r.closed_at,
    labels: JSON.parse(r.labels) as string[],
    body: r.body,
    closedSeq: r.closed_seq,
  };
}

/**
 * The rows of the graph tables that events change: it reads what an event touches and carries
 * out the writes `mergeEvent` (shared/ingest/merge-event.ts) decides. No rule lives here. The
 * only code that writes these tables (graph-reads.ts reads them for the views).
 */
export class GraphStore {
  private readonly sql: Sql;
  /**
   * The compact graph kept current alongside the tables (shared/graph/compact.ts): every write
   * here is applied to it as well, so it never needs re-reading. Null while none is built; the
   * owner drops it when a transaction fails (its rows roll back, the mirror would not).
   */
  mirror: CompactGraph | null = null;
  /** A compact graph being filled from the tables in chunks: writes reach it too. */
  building: CompactGraph | null = null;
  /** Rows read in the current batch, by table and key (null outside a batch; see `batch`). */
  private cache: RowCache | null = null;
  /** Writes not yet carried out (only inside a batch). */
  private pending: RowWrite[] = [];

  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** The rows named by `keys` (see `rowsTouched`): one statement per table, not per key. */
  read(keys: RowKeys): StoredRows {
    const sql = this.sql;
    const cache = this.cache;
    let issues: readonly IssueRow[];
    if (keys.issues === "all") {
      this.flush();
      // Only labels are rewritten for every issue (a label renamed or deleted): no bodies.
      issues =
        sql<IssueSqlRow>`SELECT number, id, title, state, state_reason, created_at, updated_at,
        updated_ms, closed_at, labels, NULL AS body, closed_seq FROM issues ORDER BY number`.map(
          issueFromSql,
        );
    } else {
      issues = this.cached(cache?.issues, keys.issues, (numbers) =>
        rowsByKey(
          numbers,
          (json) => sql<IssueSqlRow>`SELECT * FROM issues
            WHERE number IN (SELECT value FROM json_each(${json}))`,
          (r) => r.number,
          issueFromSql,
        ),
      );
    }
    return {
      issues,
      tombstones: this.cached(cache?.tombstones, keys.tombstones, (numbers) =>
        rowsByKey(
          numbers,
          (json) => sql<{ number: number; at_ms: number }>`SELECT number, at_ms FROM tombstones
            WHERE number IN (SELECT value FROM json_each(${json}))`,
          (r) => r.number,
          (r): IssueTombstone => ({ number: r.number, atMs: r.at_ms }),
        ),
      ),
      parents: this.cached(cache?.parents, keys.parents, (children) =>
        rowsByKey(
          children,
          (json) => sql<{ child: number; parent: string | null; at_ms: number }>`
            SELECT child, parent, at_ms FROM parents
            WHERE child IN (SELECT value FROM json_each(${json}))`,
          (r) => r.child,
          (r): ParentRow => ({ child: r.child, parent: r.parent, atMs: r.at_ms }),
        ),
      ),
      blockers: this.cached(cache?.blockers, keys.blockers, (issueNumbers) =>
        rowsByKey(
          issueNumbers,
          (json) => sql<{ issue: number; blocker: string; present: number; at_ms: number }>`
            SELECT issue, blocker, present, at_ms FROM blockers
            WHERE issue IN (SELECT value FROM json_each(${json})) ORDER BY issue, blocker`,
          (r) => r.issue,
          (r): BlockerRow => ({
            issue: r.issue,
            blocker: r.blocker,
            present: r.present === 1,
            atMs: r.at_ms,
          }),
        ),
      ),
      external: this.cached(cache?.external, keys.external, (refs) =>
        rowsByKey(
          refs,
          (json) => sql<{
            ref: string;
            state: string;
            closed_at: string | null;
            at_ms: number;
            closed_seq: number | null;
          }>`SELECT ref, state, closed_at, at_ms, closed_seq FROM external
            WHERE ref IN (SELECT value FROM json_each(${json}))`,
          (r) => r.ref,
          (r): ExternalRow => ({
            ref: r.ref,
            state: r.state as ExternalRow["state"],
            closedAt: r.closed_at,
            atMs: r.at_ms,
            closedSeq: r.closed_seq,
          }),
        ),
      ),
      labelEvents: this.labelEvents(keys.labelEvents),
      comments: this.cached(cache?.comments, keys.comments, (ids) =>
        rowsByKey(
          ids,
          (json) => sql<
            MarkerCommentRow & { updated_ms: number }
          >`SELECT id, number, author, author_type, author_association, body, created_at, updated_ms
            FROM comments WHERE id IN (SELECT value FROM json_each(${json}))`,
          (r) => r.id,
          (r): CommentRow => ({
            id: r.id,
            number: r.number,
            author: r.author,
            authorType: r.author_type,
            association: r.author_association,
            body: r.body,
            createdAt: r.created_at,
            updatedMs: r.updated_ms,
          }),
        ),
      ),
      commentTombstones: this.cached(cache?.commentTombstones, keys.commentTombstones, (ids) =>
        rowsByKey(
          ids,
          (json) => sql<{ id: number; at_ms: number }>`SELECT id, at_ms FROM comment_tombstones
            WHERE id IN (SELECT value FROM json_each(${json}))`,
          (r) => r.id,
          (r): CommentTombstone => ({ id: r.id, atMs: r.at_ms }),
        ),
      ),
    };
  }

  /**
   * The label-event rows of each key's issue, label and action from its time on (the event's own
   * row or a later one; only the latest of each is kept, see `write`, and an earlier one changes
   * nothing the rules read). One statement for every key not in the batch's cache.
   */
  private labelEvents(keys: RowKeys["labelEvents"]): LabelEventRow[] {
    const sql = this.sql;
    const eventKeys = keys.map(labelEventKey);
    const rows = this.cache?.labelEvents ?? new Map<string, LabelEventRow[]>();
    this.cached(rows, eventKeys, (missing) =>
      rowsByKey(
        missing,
        (json) => sql<{
          number: number;
          label: string;
          action: string;
          actor: string | null;
          created_at: string;
          created_ms: number;
        }>`SELECT number, label, action, actor, created_at, created_ms FROM label_events
              WHERE (number, label, action) IN
                (SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(${json}))
              ORDER BY created_ms`,
        (r) => JSON.stringify([r.number, r.label, r.action]),
        (r): LabelEventRow => ({
          number: r.number,
          label: r.label,
          action: r.action as LabelEventRow["action"],
          actor: r.actor,
          createdAt: r.created_at,
          createdMs: r.created_ms,
        }),
      ),
    );
    return keys.flatMap((k, i) =>
      (rows.get(eventKeys[i]!) ?? []).filter((r) => r.createdMs >= k.createdMs),
    );
  }

  /**
   * `keys`' rows, in the order of `keys`: from the batch's cache when it has them, else read
   * (after the writes still pending, so a read always sees every write before it).
   */
  private cached<K, R>(
    cache: Map<K, R[]> | undefined,
    keys: readonly K[],
    load: (missing: K[]) => Map<K, R[]>,
  ): readonly R[] {
    // Called for every table of every event of a page (millions of calls in a 100,000-issue
    // reconcile, most of them with no key or one the batch read up front): those allocate nothing.
    if (keys.length === 0) return NO_ROWS;
    if (keys.length === 1) {
      const hit = cache?.get(keys[0]!);
      if (hit !== undefined) return hit;
    }
    let missing: K[] | null = null;
    const listed = keys.length > 8 ? new Set<K>() : null;
    for (const k of keys) {
      if (cache?.has(k) || (listed ? listed.has(k) : missing?.includes(k))) continue;
      listed?.add(k);
      if (missing === null) missing = [k];
      else missing.push(k);
    }
    let loaded: Map<K, R[]> | null = null;
    if (missing !== null) {
      this.flush();
      loaded = load(missing);
      if (cache) for (const [k, rows] of loaded) cache.set(k, rows);
    }
    if (keys.length === 1) return cache?.get(keys[0]!) ?? loaded?.get(keys[0]!) ?? NO_ROWS;
    const out: R[] = [];
    for (const k of keys) for (const r of cache?.get(k) ?? loaded?.get(k) ?? NO_ROWS) out.push(r);
    return out;
  }

  /**
   * Runs `fn` (which reads and writes through this store) as one batch: the rows `keys` name are
   * read up front, a statement per table, and the writes are carried out at the end, a statement
   * per run of writes of one kind per table. A read of rows not read up front, or written since,
   * carries out the pending writes first and reads them. Call inside a transaction.
   */
  batch<T>(keys: readonly RowKeys[], fn: () => T): T {
    if (this.cache !== null) return fn();
    this.cache = emptyCache();
    try {
      this.read(mergeKeys(keys));
      const out = fn();
      this.flush();
      return out;
    } catch (error) {
      // The compact graph took writes that will not be carried out.
      this.drop();
      throw error;
    } finally {
      this.cache = null;
      this.pending = [];
    }
  }

  /**
   * Carries out `writes` in order (inside a batch: at its end); `meta` writes are not this
   * store's (the caller's). The compact graph takes each at once.
   */
  write(writes: readonly RowWrite[]): void {
    for (const w of writes) {
      if (w.table === "meta") continue;
      this.mirrorWrite(w);
      this.forget(w);
      this.pending.push(w);
    }
    if (this.cache === null) this.flush();
  }

  /** Drops what the batch's cache holds of the rows `w` changes (read again when next asked). */
  private forget(w: Exclude<RowWrite, { table: "meta" }>): void {
    const cache = this.cache;
    if (cache === null) return;
    switch (w.table) {
      case "issues":
        cache.issues.delete(w.op === "upsert" ? w.row.number : w.number);
        return;
      case "tombstones":
        cache.tombstones.delete(w.op === "upsert" ? w.row.number : w.number);
        return;
      case "parents":
        if (w.op === "upsert") cache.parents.delete(w.row.child);
        else cache.parents.clear();
        return;
      case "blockers":
        if (w.op === "upsert") cache.blockers.delete(w.row.issue);
        else cache.blockers.clear();
        return;
      case "external":
        cache.external.delete(w.row.ref);
        return;
      case "label_events":
        if (w.op === "insert") cache.labelEvents.delete(labelEventKey(w.row));
        else cache.labelEvents.clear();
        return;
      case "comments":
        if (w.op === "upsert") cache.comments.delete(w.row.id);
        else if (w.op === "delete") cache.comments.delete(w.id);
        else cache.comments.clear();
        return;
      case "comment_tombstones":
        cache.commentTombstones.delete(w.row.id);
        return;
    }
  }

  /**
   * Carries out the pending writes: per table (the tables share no keys, constraints or
   * triggers, so only the order within a table matters), each run of writes of one kind as
   * one statement over a JSON array of rows, in order.
   */
  private flush(): void {
    if (this.pending.length === 0) return;
    const pending = this.pending;
    this.pending = [];
    const byTable = new Map<string, Array<Exclude<RowWrite, { table: "meta" }>>>();
    for (const w of pending as Array<Exclude<RowWrite, { table: "meta" }>>) {
      const list = byTable.get(w.table);
      if (list) list.push(w);
      else byTable.set(w.table, [w]);
    }
    for (const writes of byTable.values()) {
      let i = 0;
      while (i < writes.length) {
        let j = i + 1;
        while (j < writes.length && writes[j]!.op === writes[i]!.op) j++;
        writeRun(this.sql, writes.slice(i, j));
        i = j;
      }
    }
  }

  /** The same change to the compact graph, when one is kept (the tables are the truth). */
  private mirrorWrite(w: RowWrite): void {
    if (this.mirror !== null) applyWrite(this.mirror, w);
    if (this.building !== null) applyWrite(this.building, w);
  }

  /** Drops the compact graphs (kept and being built): the next read streams the tables again. */
  drop(): void {
    this.mirror = null;
    this.building = null;
  }

  /**
   * Records a label write switchyard itself made, so the next plan sees it at once. No label
   * event is invented: GitHub's own (with GitHub's time) arrives by webhook or reconcile.
   * False when the issue is not stored.
   */
  applyOwnLabelWrite(number: number, label: string, action: "add" | "remove"): boolean {
    this.flush();
    this.cache?.issues.delete(number);
    const row = this.sql<{ labels: string }>`SELECT labels FROM issues WHERE number = ${number}`[0];
    if (!row) return false;
    const labels = (JSON.parse(row.labels) as string[]).filter((l) => l !== label);
    if (action === "add") labels.push(label);
    this.sql`UPDATE issues SET labels = ${JSON.stringify(labels)} WHERE number = ${number}`;
    this.mirror?.setLabels(number, labels);
    this.building?.setLabels(number, labels);
    return true;
  }

  /** The ETag of the last conditional read of a cross-repository issue. */
  setExternalEtag(ref: string, etag: string | null): void {
    this.flush();
    this.sql`UPDATE external SET etag = ${etag} WHERE ref = ${ref}`;
  }

  /**
   * The daily prune (bounds in docs/worker.md): tombstones and removed blocker edges older than
   * the tombstone period, label events that are not the latest of their issue, label and action
   * (written so already; this catches rows stored before), cross-repository issues no present
   * blocker edge (or parent link) refers to. Issues, parents and comments mirror GitHub and go with their issue.
   */
  prune(cutoffs: RetentionCutoffs): void {
    const sql = this.sql;
    this.flush();
    // Rows go that the mirror may still name (cross-repository states): rebuilt when next read.
    this.drop();
    sql`DELETE FROM tombstones WHERE at_ms < ${cutoffs.tombstonesMs}`;
    sql`DELETE FROM comment_tombstones WHERE at_ms < ${cutoffs.tombstonesMs}`;
    sql`DELETE FROM blockers WHERE present = 0 AND at_ms < ${cutoffs.tombstonesMs}`;
    sql`DELETE FROM label_events WHERE created_ms < (SELECT MAX(l.created_ms) FROM label_events l
      WHERE l.number = label_events.number AND l.label = label_events.label
        AND l.action = label_events.action)`;
    sql`DELETE FROM external WHERE ref NOT IN (SELECT blocker FROM blockers WHERE present = 1)
      AND ref NOT IN (SELECT parent FROM parents WHERE parent IS NOT NULL)`;
  }

  /** Deletes every row of the graph tables. */
  wipe(): void {
    this.pending = [];
    this.drop();
    this.sql`DELETE FROM issues`;
    this.sql`DELETE FROM tombstones`;
    this.sql`DELETE FROM parents`;
    this.sql`DELETE FROM blockers`;
    this.sql`DELETE FROM external`;
    this.sql`DELETE FROM label_events`;
    this.sql`DELETE FROM comments`;
    this.sql`DELETE FROM comment_tombstones`;
  }
}

/** One write's change to a compact graph (what the SQL of `GraphStore.write` does to the rows). */
function applyWrite(graph: CompactGraph, w: RowWrite): void {
  switch (w.table) {
    case "issues":
      if (w.op === "upsert") {
        const r = w.row;
        graph.upsertIssue({
          number: r.number,
          title: r.title,
          state: r.state,
          closedAt: r.closedAt,
          labels: r.labels,
          requires: requiresOf(r.body),
        });
      } else if (w.op === "labels") graph.setLabels(w.number, w.labels);
      else graph.deleteIssue(w.number);
      return;
    case "parents":
      if (w.op === "upsert")
        graph.setParent(w.row.child, w.row.parent === null ? null : decodeRef(w.row.parent));
      else graph.deleteParentsInvolving(w.number);
      return;
    case "blockers":
      if (w.op === "upsert") graph.setBlocker(w.row.issue, decodeRef(w.row.blocker), w.row.present);
      else graph.deleteBlockersInvolving(w.number);
      return;
    case "external":
      graph.setExternal(w.row.ref, w.row.state, w.row.closedAt);
      return;
    case "label_events":
      if (w.op === "insert")
        graph.labelEvent(w.row.number, w.row.label, w.row.action, w.row.createdMs);
      else graph.deleteLabelEvents(w.number);
      return;
    default:
      return;
  }
}

/** Rows read in a batch, by table and key; a key read with no row maps to an empty array. */
interface RowCache {
  issues: Map<number, IssueRow[]>;
  tombstones: Map<number, IssueTombstone[]>;
  parents: Map<number, ParentRow[]>;
  blockers: Map<number, BlockerRow[]>;
  external: Map<string, ExternalRow[]>;
  /** By issue, label and action (`labelEventKey`): every row, whatever its time. */
  labelEvents: Map<string, LabelEventRow[]>;
  comments: Map<number, CommentRow[]>;
  commentTombstones: Map<number, CommentTombstone[]>;
}

function emptyCache(): RowCache {
  return {
    issues: new Map(),
    tombstones: new Map(),
    parents: new Map(),
    blockers: new Map(),
    external: new Map(),
    labelEvents: new Map(),
    comments: new Map(),
    commentTombstones: new Map(),
  };
}

function labelEventKey(k: { number: number; label: string; action: string }): string {
  return JSON.stringify([k.number, k.label, k.action]);
}

/** Every key of `keys` once (every issue is not read up front: only a label rename asks it). */
function mergeKeys(keys: readonly RowKeys[]): RowKeys {
  const union = <T>(pick: (k: RowKeys) => readonly T[]) => [...new Set(keys.flatMap(pick))];
  const labelEvents = new Map<string, RowKeys["labelEvents"][number]>();
  for (const k of keys)
    for (const e of k.labelEvents) labelEvents.set(labelEventKey(e), { ...e, createdMs: 0 });
  return {
    issues: union((k) => (k.issues === "all" ? [] : k.issues)),
    tombstones: union((k) => k.tombstones),
    parents: union((k) => k.parents),
    blockers: union((k) => k.blockers),
    external: union((k) => k.external),
    labelEvents: [...labelEvents.values()],
    comments: union((k) => k.comments),
    commentTombstones: union((k) => k.commentTombstones),
  };
}
