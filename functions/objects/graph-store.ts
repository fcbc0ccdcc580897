import type { CompactGraph } from "../../shared/graph/compact.ts";
import { decodeRef } from "../../shared/ingest/merge.ts";
import type {
  BlockerRow,
  CommentRow,
  ExternalRow,
  IssueRow,
  LabelEventRow,
  ParentRow,
  RowKeys,
  RowWrite,
  StoredRows,
} from "../../shared/ingest/merge-event.ts";
import { encodeRequires, requiresOf } from "../../shared/queue/requires.ts";
import type { RetentionCutoffs } from "../../shared/schedule/retention.ts";
import type { Sql } from "./sql.ts";

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

  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** The rows named by `keys` (see `rowsTouched`). */
  read(keys: RowKeys): StoredRows {
    const sql = this.sql;
    return {
      issues:
        keys.issues === "all"
          ? // Only labels are rewritten for every issue (a label renamed or deleted): no bodies.
            sql<IssueSqlRow>`SELECT number, id, title, state, state_reason, created_at, updated_at,
              updated_ms, closed_at, labels, NULL AS body, closed_seq FROM issues ORDER BY number`.map(
              issueFromSql,
            )
          : keys.issues.flatMap((n) =>
              sql<IssueSqlRow>`SELECT * FROM issues WHERE number = ${n}`.map(issueFromSql),
            ),
      tombstones: keys.tombstones.flatMap((n) =>
        sql<{ at_ms: number }>`SELECT at_ms FROM tombstones WHERE number = ${n}`.map((r) => ({
          number: n,
          atMs: r.at_ms,
        })),
      ),
      parents: keys.parents.flatMap((child) =>
        sql<{ parent: string | null; at_ms: number }>`
          SELECT parent, at_ms FROM parents WHERE child = ${child}`.map(
          (r): ParentRow => ({ child, parent: r.parent, atMs: r.at_ms }),
        ),
      ),
      blockers: keys.blockers.flatMap((issue) =>
        sql<{ blocker: string; present: number; at_ms: number }>`
          SELECT blocker, present, at_ms FROM blockers WHERE issue = ${issue}`.map(
          (r): BlockerRow => ({
            issue,
            blocker: r.blocker,
            present: r.present === 1,
            atMs: r.at_ms,
          }),
        ),
      ),
      external: keys.external.flatMap((ref) =>
        sql<{ state: string; closed_at: string | null; at_ms: number; closed_seq: number | null }>`
          SELECT state, closed_at, at_ms, closed_seq FROM external WHERE ref = ${ref}`.map(
          (r): ExternalRow => ({
            ref,
            state: r.state as ExternalRow["state"],
            closedAt: r.closed_at,
            atMs: r.at_ms,
            closedSeq: r.closed_seq,
          }),
        ),
      ),
      // The event's own row or a later one of its issue, label and action: only the latest of
      // each is kept (see `write`), and an earlier one changes nothing the rules read.
      labelEvents: keys.labelEvents.flatMap((k) =>
        sql<{ actor: string | null; created_at: string; created_ms: number }>`
          SELECT actor, created_at, created_ms FROM label_events WHERE number = ${k.number}
            AND label = ${k.label} AND action = ${k.action} AND created_ms >= ${k.createdMs}`.map(
          (r): LabelEventRow => ({
            ...k,
            actor: r.actor,
            createdAt: r.created_at,
            createdMs: r.created_ms,
          }),
        ),
      ),
      comments: keys.comments.flatMap((id) =>
        sql<{
          number: number;
          author: string;
          author_type: string;
          author_association: string | null;
          body: string;
          created_at: string;
          updated_ms: number;
        }>`SELECT number, author, author_type, author_association, body, created_at, updated_ms
          FROM comments WHERE id = ${id}`.map(
          (r): CommentRow => ({
            id,
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
      commentTombstones: keys.commentTombstones.flatMap((id) =>
        sql<{ at_ms: number }>`SELECT at_ms FROM comment_tombstones WHERE id = ${id}`.map((r) => ({
          id,
          atMs: r.at_ms,
        })),
      ),
    };
  }

  /** Carries out `writes` in order; `meta` writes are not this store's (the caller's). */
  write(writes: readonly RowWrite[]): void {
    const sql = this.sql;
    for (const w of writes) {
      this.mirrorWrite(w);
      switch (w.table) {
        case "issues":
          if (w.op === "upsert") {
            const r = w.row;
            const labels = JSON.stringify(r.labels);
            sql`INSERT INTO issues (number, id, title, state, state_reason, created_at, updated_at, updated_ms, closed_at, labels, body, closed_seq, requires)
              VALUES (${r.number}, ${r.id}, ${r.title}, ${r.state}, ${r.stateReason}, ${r.createdAt},
                      ${r.updatedAt}, ${r.updatedMs}, ${r.closedAt}, ${labels}, ${r.body}, ${r.closedSeq},
                      ${encodeRequires(requiresOf(r.body))})
              ON CONFLICT (number) DO UPDATE SET id = excluded.id, title = excluded.title,
                state = excluded.state, state_reason = excluded.state_reason, created_at = excluded.created_at,
                updated_at = excluded.updated_at, updated_ms = excluded.updated_ms, closed_at = excluded.closed_at,
                labels = excluded.labels, body = excluded.body, closed_seq = excluded.closed_seq,
                requires = excluded.requires`;
          } else if (w.op === "labels") {
            sql`UPDATE issues SET labels = ${JSON.stringify(w.labels)} WHERE number = ${w.number}`;
          } else {
            sql`DELETE FROM issues WHERE number = ${w.number}`;
          }
          break;
        case "tombstones":
          if (w.op === "upsert") {
            sql`INSERT INTO tombstones (number, at_ms) VALUES (${w.row.number}, ${w.row.atMs})
              ON CONFLICT (number) DO UPDATE SET at_ms = excluded.at_ms`;
          } else {
            sql`DELETE FROM tombstones WHERE number = ${w.number}`;
          }
          break;
        case "parents":
          if (w.op === "upsert") {
            sql`INSERT INTO parents (child, parent, at_ms) VALUES (${w.row.child}, ${w.row.parent}, ${w.row.atMs})
              ON CONFLICT (child) DO UPDATE SET parent = excluded.parent, at_ms = excluded.at_ms`;
          } else {
            sql`DELETE FROM parents WHERE child = ${w.number} OR parent = ${String(w.number)}`;
          }
          break;
        case "blockers":
          if (w.op === "upsert") {
            const r = w.row;
            sql`INSERT INTO blockers (issue, blocker, present, at_ms)
              VALUES (${r.issue}, ${r.blocker}, ${r.present ? 1 : 0}, ${r.atMs})
              ON CONFLICT (issue, blocker) DO UPDATE SET present = excluded.present, at_ms = excluded.at_ms`;
          } else {
            sql`DELETE FROM blockers WHERE issue = ${w.number} OR blocker = ${String(w.number)}`;
          }
          break;
        case "external": {
          // The ETag of the last conditional read stays: it is about GitHub, not the merge.
          const r = w.row;
          sql`INSERT INTO external (ref, state, closed_at, at_ms, closed_seq)
            VALUES (${r.ref}, ${r.state}, ${r.closedAt}, ${r.atMs}, ${r.closedSeq})
            ON CONFLICT (ref) DO UPDATE SET state = excluded.state, closed_at = excluded.closed_at,
              at_ms = excluded.at_ms, closed_seq = excluded.closed_seq`;
          break;
        }
        case "label_events":
          if (w.op === "insert") {
            const r = w.row;
            sql`INSERT OR IGNORE INTO label_events (number, label, action, actor, created_at, created_ms)
              VALUES (${r.number}, ${r.label}, ${r.action}, ${r.actor}, ${r.createdAt}, ${r.createdMs})`;
            // Pruned on write (a bot toggling a label is fast): the rules read only the latest
            // event of each issue, label and action (shared/graph/labels.ts).
            sql`DELETE FROM label_events WHERE number = ${r.number} AND label = ${r.label}
              AND action = ${r.action} AND created_ms < (SELECT MAX(created_ms) FROM label_events
                WHERE number = ${r.number} AND label = ${r.label} AND action = ${r.action})`;
          } else {
            sql`DELETE FROM label_events WHERE number = ${w.number}`;
          }
          break;
        case "comments":
          if (w.op === "upsert") {
            const r = w.row;
            sql`INSERT INTO comments (id, number, author, author_type, author_association, body, created_at, updated_ms)
              VALUES (${r.id}, ${r.number}, ${r.author}, ${r.authorType}, ${r.association}, ${r.body}, ${r.createdAt}, ${r.updatedMs})
              ON CONFLICT (id) DO UPDATE SET number = excluded.number, author = excluded.author,
                author_type = excluded.author_type, author_association = excluded.author_association,
                body = excluded.body, created_at = excluded.created_at, updated_ms = excluded.updated_ms`;
          } else if (w.op === "delete") {
            sql`DELETE FROM comments WHERE id = ${w.id}`;
          } else {
            sql`DELETE FROM comments WHERE number = ${w.number}`;
          }
          break;
        case "comment_tombstones":
          sql`INSERT INTO comment_tombstones (id, at_ms) VALUES (${w.row.id}, ${w.row.atMs})
            ON CONFLICT (id) DO UPDATE SET at_ms = excluded.at_ms`;
          break;
        case "meta":
          break;
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
