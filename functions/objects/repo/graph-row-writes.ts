// The SQL of the graph tables' row writes (`RowWrite`, decided by shared/ingest/merge-event.ts):
// a run of writes of one kind to one table, a statement per chunk of rows (json-batches.ts).
import type {
  BlockerRow,
  CommentRow,
  CommentTombstone,
  ExternalRow,
  IssueRow,
  IssueTombstone,
  LabelEventRow,
  ParentRow,
  RowWrite,
} from "../../../shared/ingest/merge-event.ts";
import { encodeRequires, requiresOf } from "../../../shared/queue/requires.ts";
import { keyChunks, tupleChunks } from "../json-batches.ts";
import type { Sql } from "../sql.ts";

/** One run of writes of one kind to one table, a statement per chunk of rows. */
export function writeRun(sql: Sql, run: ReadonlyArray<Exclude<RowWrite, { table: "meta" }>>): void {
  const first = run[0]!;
  const rows = <W>(f: (w: W) => readonly unknown[]) => tupleChunks(run.map((w) => f(w as W)));
  const keys = <W>(f: (w: W) => number) => keyChunks(run.map((w) => f(w as W)));
  switch (`${first.table}:${first.op}`) {
    case "issues:upsert":
      for (const json of rows((w: { row: IssueRow }) => {
        const r = w.row;
        return [
          r.number,
          r.id,
          r.title,
          r.state,
          r.stateReason,
          r.createdAt,
          r.updatedAt,
          r.updatedMs,
          r.closedAt,
          JSON.stringify(r.labels),
          r.body,
          r.closedSeq,
          encodeRequires(requiresOf(r.body)),
        ];
      }))
        sql`INSERT INTO issues (number, id, title, state, state_reason, created_at, updated_at, updated_ms, closed_at, labels, body, closed_seq, requires)
          SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5,
            value ->> 6, value ->> 7, value ->> 8, value ->> 9, value ->> 10, value ->> 11, value ->> 12
          FROM json_each(${json}) WHERE true ORDER BY key
          ON CONFLICT (number) DO UPDATE SET id = excluded.id, title = excluded.title,
            state = excluded.state, state_reason = excluded.state_reason, created_at = excluded.created_at,
            updated_at = excluded.updated_at, updated_ms = excluded.updated_ms, closed_at = excluded.closed_at,
            labels = excluded.labels, body = excluded.body, closed_seq = excluded.closed_seq,
            requires = excluded.requires`;
      return;
    case "issues:labels": {
      // The last labels of an issue in the run are the ones it keeps.
      const last = new Map<number, readonly string[]>();
      for (const w of run as ReadonlyArray<{ number: number; labels: readonly string[] }>)
        last.set(w.number, w.labels);
      for (const json of tupleChunks([...last].map(([n, l]) => [n, JSON.stringify(l)])))
        sql`UPDATE issues SET labels = j.value ->> 1
          FROM json_each(${json}) AS j WHERE issues.number = j.value ->> 0`;
      return;
    }
    case "issues:delete":
      for (const json of keys((w: { number: number }) => w.number))
        sql`DELETE FROM issues WHERE number IN (SELECT value FROM json_each(${json}))`;
      return;
    case "tombstones:upsert":
      for (const json of rows((w: { row: IssueTombstone }) => [w.row.number, w.row.atMs]))
        sql`INSERT INTO tombstones (number, at_ms)
          SELECT value ->> 0, value ->> 1 FROM json_each(${json}) WHERE true ORDER BY key
          ON CONFLICT (number) DO UPDATE SET at_ms = excluded.at_ms`;
      return;
    case "tombstones:delete":
      for (const json of keys((w: { number: number }) => w.number))
        sql`DELETE FROM tombstones WHERE number IN (SELECT value FROM json_each(${json}))`;
      return;
    case "parents:upsert":
      for (const json of rows((w: { row: ParentRow }) => [w.row.child, w.row.parent, w.row.atMs]))
        sql`INSERT INTO parents (child, parent, at_ms)
          SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(${json}) WHERE true ORDER BY key
          ON CONFLICT (child) DO UPDATE SET parent = excluded.parent, at_ms = excluded.at_ms`;
      return;
    case "parents:issue-removed": {
      // One time per issue (the latest): an UPDATE ... FROM uses one of several matches. A
      // parent is stored as text (a number for this repository's own issues).
      const latest = new Map<number, number>();
      for (const w of run as ReadonlyArray<{ number: number; atMs: number }>)
        latest.set(w.number, Math.max(w.atMs, latest.get(w.number) ?? w.atMs));
      for (const json of tupleChunks([...latest])) {
        sql`DELETE FROM parents WHERE child IN (SELECT value ->> 0 FROM json_each(${json}))`;
        sql`UPDATE parents SET parent = NULL, at_ms = MAX(parents.at_ms, j.value ->> 1)
          FROM json_each(${json}) AS j WHERE parents.parent = CAST(j.value ->> 0 AS TEXT)`;
      }
      return;
    }
    case "blockers:upsert":
      for (const json of rows((w: { row: BlockerRow }) => [
        w.row.issue,
        w.row.blocker,
        w.row.present ? 1 : 0,
        w.row.atMs,
      ]))
        sql`INSERT INTO blockers (issue, blocker, present, at_ms)
          SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3
          FROM json_each(${json}) WHERE true ORDER BY key
          ON CONFLICT (issue, blocker) DO UPDATE SET present = excluded.present, at_ms = excluded.at_ms`;
      return;
    case "blockers:delete-involving":
      for (const json of keys((w: { number: number }) => w.number))
        sql`DELETE FROM blockers WHERE issue IN (SELECT value FROM json_each(${json}))
          OR blocker IN (SELECT CAST(value AS TEXT) FROM json_each(${json}))`;
      return;
    case "external:upsert":
      // The ETag of the last conditional read stays: it is about GitHub, not the merge.
      for (const json of rows((w: { row: ExternalRow }) => [
        w.row.ref,
        w.row.state,
        w.row.closedAt,
        w.row.atMs,
        w.row.closedSeq,
      ]))
        sql`INSERT INTO external (ref, state, closed_at, at_ms, closed_seq)
          SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4
          FROM json_each(${json}) WHERE true ORDER BY key
          ON CONFLICT (ref) DO UPDATE SET state = excluded.state, closed_at = excluded.closed_at,
            at_ms = excluded.at_ms, closed_seq = excluded.closed_seq`;
      return;
    case "label_events:insert":
      for (const json of rows((w: { row: LabelEventRow }) => [
        w.row.number,
        w.row.label,
        w.row.action,
        w.row.actor,
        w.row.createdAt,
        w.row.createdMs,
      ])) {
        sql`INSERT OR IGNORE INTO label_events (number, label, action, actor, created_at, created_ms)
          SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5
          FROM json_each(${json}) ORDER BY key`;
        // Pruned on write (a bot toggling a label is fast): the rules read only the latest
        // event of each issue, label and action (shared/graph/labels.ts).
        sql`DELETE FROM label_events WHERE (number, label, action) IN
            (SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(${json}))
          AND created_ms < (SELECT MAX(l.created_ms) FROM label_events l
            WHERE l.number = label_events.number AND l.label = label_events.label
              AND l.action = label_events.action)`;
      }
      return;
    case "label_events:delete-of-issue":
      for (const json of keys((w: { number: number }) => w.number))
        sql`DELETE FROM label_events WHERE number IN (SELECT value FROM json_each(${json}))`;
      return;
    case "comments:upsert":
      for (const json of rows((w: { row: CommentRow }) => {
        const r = w.row;
        return [
          r.id,
          r.number,
          r.author,
          r.authorType,
          r.association,
          r.body,
          r.createdAt,
          r.updatedMs,
        ];
      }))
        sql`INSERT INTO comments (id, number, author, author_type, author_association, body, created_at, updated_ms)
          SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5,
            value ->> 6, value ->> 7
          FROM json_each(${json}) WHERE true ORDER BY key
          ON CONFLICT (id) DO UPDATE SET number = excluded.number, author = excluded.author,
            author_type = excluded.author_type, author_association = excluded.author_association,
            body = excluded.body, created_at = excluded.created_at, updated_ms = excluded.updated_ms`;
      return;
    case "comments:delete":
      for (const json of keys((w: { id: number }) => w.id))
        sql`DELETE FROM comments WHERE id IN (SELECT value FROM json_each(${json}))`;
      return;
    case "comments:delete-of-issue":
      for (const json of keys((w: { number: number }) => w.number))
        sql`DELETE FROM comments WHERE number IN (SELECT value FROM json_each(${json}))`;
      return;
    case "comment_tombstones:upsert":
      for (const json of rows((w: { row: CommentTombstone }) => [w.row.id, w.row.atMs]))
        sql`INSERT INTO comment_tombstones (id, at_ms)
          SELECT value ->> 0, value ->> 1 FROM json_each(${json}) WHERE true ORDER BY key
          ON CONFLICT (id) DO UPDATE SET at_ms = excluded.at_ms`;
      return;
    default:
      throw new Error(`no batched statement for ${first.table} ${first.op}`);
  }
}
