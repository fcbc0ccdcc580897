// The graph tables' store on real Durable Object SQLite: writes carried out a run of one kind at a
// time over a JSON array (functions/objects/json-batches.ts) leave exactly the rows that one
// statement per row leaves, and reads inside a batch (served from what was read up front) return
// what a fresh read would. The oracle is the statement-per-row SQL the store ran before.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GraphStore } from "../../functions/objects/repo/graph-store.ts";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { sqlTag } from "../../functions/objects/sql.ts";
import type { RowKeys, RowWrite } from "../../shared/ingest/merge-event.ts";
import { encodeRequires, requiresOf } from "../../shared/queue/requires.ts";

type Stub = DurableObjectStub<RepoObject>;

/** Every column of every graph table with its SQLite type, so `5` and `'5'` differ. */
const TABLES: Record<string, string[]> = {
  issues: [
    "number",
    "id",
    "title",
    "state",
    "state_reason",
    "created_at",
    "updated_at",
    "updated_ms",
    "closed_at",
    "labels",
    "body",
    "closed_seq",
    "requires",
  ],
  tombstones: ["number", "at_ms"],
  parents: ["child", "parent", "at_ms"],
  blockers: ["issue", "blocker", "present", "at_ms"],
  external: ["ref", "state", "closed_at", "at_ms", "closed_seq", "etag"],
  label_events: ["number", "label", "action", "actor", "created_at", "created_ms"],
  comments: [
    "id",
    "number",
    "author",
    "author_type",
    "author_association",
    "body",
    "created_at",
    "updated_ms",
  ],
  comment_tombstones: ["id", "at_ms"],
};

function tables(sql: SqlStorage) {
  const out: Record<string, unknown[]> = {};
  for (const [table, columns] of Object.entries(TABLES)) {
    const cols = columns.map((c) => `${c}, typeof(${c}) AS ${c}_type`).join(", ");
    out[table] = sql.exec(`SELECT ${cols} FROM ${table} ORDER BY ${columns.join(", ")}`).toArray();
  }
  return out;
}

function wipe(sql: SqlStorage) {
  for (const table of Object.keys(TABLES)) sql.exec(`DELETE FROM ${table}`);
}

/** The statement-per-row SQL the store ran before batching: the oracle. */
function writeOneByOne(sql: SqlStorage, writes: readonly RowWrite[]) {
  for (const w of writes) {
    const key = `${w.table}:${w.op}`;
    if (w.table === "issues" && w.op === "upsert") {
      const r = w.row;
      sql.exec(
        `INSERT INTO issues (number, id, title, state, state_reason, created_at, updated_at, updated_ms, closed_at, labels, body, closed_seq, requires)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (number) DO UPDATE SET id = excluded.id, title = excluded.title,
            state = excluded.state, state_reason = excluded.state_reason, created_at = excluded.created_at,
            updated_at = excluded.updated_at, updated_ms = excluded.updated_ms, closed_at = excluded.closed_at,
            labels = excluded.labels, body = excluded.body, closed_seq = excluded.closed_seq,
            requires = excluded.requires`,
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
      );
    } else if (w.table === "issues" && w.op === "labels") {
      sql.exec("UPDATE issues SET labels = ? WHERE number = ?", JSON.stringify(w.labels), w.number);
    } else if (w.table === "issues" && w.op === "delete") {
      sql.exec("DELETE FROM issues WHERE number = ?", w.number);
    } else if (w.table === "tombstones" && w.op === "upsert") {
      sql.exec(
        "INSERT INTO tombstones (number, at_ms) VALUES (?, ?) ON CONFLICT (number) DO UPDATE SET at_ms = excluded.at_ms",
        w.row.number,
        w.row.atMs,
      );
    } else if (w.table === "tombstones" && w.op === "delete") {
      sql.exec("DELETE FROM tombstones WHERE number = ?", w.number);
    } else if (w.table === "parents" && w.op === "upsert") {
      sql.exec(
        "INSERT INTO parents (child, parent, at_ms) VALUES (?, ?, ?) ON CONFLICT (child) DO UPDATE SET parent = excluded.parent, at_ms = excluded.at_ms",
        w.row.child,
        w.row.parent,
        w.row.atMs,
      );
    } else if (w.table === "parents" && w.op === "issue-removed") {
      sql.exec("DELETE FROM parents WHERE child = ?", w.number);
      sql.exec(
        "UPDATE parents SET parent = NULL, at_ms = MAX(at_ms, ?) WHERE parent = ?",
        w.atMs,
        String(w.number),
      );
    } else if (w.table === "blockers" && w.op === "upsert") {
      sql.exec(
        "INSERT INTO blockers (issue, blocker, present, at_ms) VALUES (?, ?, ?, ?) ON CONFLICT (issue, blocker) DO UPDATE SET present = excluded.present, at_ms = excluded.at_ms",
        w.row.issue,
        w.row.blocker,
        w.row.present ? 1 : 0,
        w.row.atMs,
      );
    } else if (w.table === "blockers" && w.op === "delete-involving") {
      sql.exec("DELETE FROM blockers WHERE issue = ? OR blocker = ?", w.number, String(w.number));
    } else if (w.table === "external") {
      const r = w.row;
      sql.exec(
        `INSERT INTO external (ref, state, closed_at, at_ms, closed_seq) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (ref) DO UPDATE SET state = excluded.state, closed_at = excluded.closed_at,
            at_ms = excluded.at_ms, closed_seq = excluded.closed_seq`,
        r.ref,
        r.state,
        r.closedAt,
        r.atMs,
        r.closedSeq,
      );
    } else if (w.table === "label_events" && w.op === "insert") {
      const r = w.row;
      sql.exec(
        "INSERT OR IGNORE INTO label_events (number, label, action, actor, created_at, created_ms) VALUES (?, ?, ?, ?, ?, ?)",
        r.number,
        r.label,
        r.action,
        r.actor,
        r.createdAt,
        r.createdMs,
      );
      sql.exec(
        `DELETE FROM label_events WHERE number = ? AND label = ? AND action = ? AND created_ms <
          (SELECT MAX(created_ms) FROM label_events WHERE number = ? AND label = ? AND action = ?)`,
        r.number,
        r.label,
        r.action,
        r.number,
        r.label,
        r.action,
      );
    } else if (w.table === "label_events" && w.op === "delete-of-issue") {
      sql.exec("DELETE FROM label_events WHERE number = ?", w.number);
    } else if (w.table === "comments" && w.op === "upsert") {
      const r = w.row;
      sql.exec(
        `INSERT INTO comments (id, number, author, author_type, author_association, body, created_at, updated_ms)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (id) DO UPDATE SET number = excluded.number, author = excluded.author,
            author_type = excluded.author_type, author_association = excluded.author_association,
            body = excluded.body, created_at = excluded.created_at, updated_ms = excluded.updated_ms`,
        r.id,
        r.number,
        r.author,
        r.authorType,
        r.association,
        r.body,
        r.createdAt,
        r.updatedMs,
      );
    } else if (w.table === "comments" && w.op === "delete") {
      sql.exec("DELETE FROM comments WHERE id = ?", w.id);
    } else if (w.table === "comments" && w.op === "delete-of-issue") {
      sql.exec("DELETE FROM comments WHERE number = ?", w.number);
    } else if (w.table === "comment_tombstones") {
      sql.exec(
        "INSERT INTO comment_tombstones (id, at_ms) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET at_ms = excluded.at_ms",
        w.row.id,
        w.row.atMs,
      );
    } else if (w.table !== "meta") {
      throw new Error(`the oracle has no statement for ${key}`);
    }
  }
}

// Few keys, so writes collide: the same issue upserted twice in a run, a delete between upserts.
const num = fc.integer({ min: 1, max: 6 });
const ms = fc.integer({ min: 1_700_000_000_000, max: 1_700_000_000_009 });
const iso = fc.constantFrom("2026-01-01T00:00:00Z", "2026-02-03T04:05:06Z");
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom("5", "12.5", "null", "é ☃ 🚀", 'quote " and \\ slash'),
);
const body = fc.oneof(
  fc.constant(null),
  text,
  fc.constantFrom("Needs a GPU.\n<!-- requires: gpu, node -->", "requires: 3"),
);
const ref = fc.oneof(num.map(String), fc.constantFrom("acme/other#3", "acme/other#4"));
const labels = fc.array(fc.constantFrom("agent:ready", "bug", "5", "ü"), { maxLength: 3 });

const rowWrite: fc.Arbitrary<RowWrite> = fc.oneof(
  fc.record({
    table: fc.constant("issues" as const),
    op: fc.constant("upsert" as const),
    row: fc.record({
      number: num,
      id: fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 2 ** 40 })),
      title: text,
      state: fc.constantFrom("open" as const, "closed" as const),
      stateReason: fc.oneof(fc.constant(null), fc.constantFrom("completed", "not_planned")),
      createdAt: iso,
      updatedAt: iso,
      updatedMs: ms,
      closedAt: fc.oneof(fc.constant(null), iso),
      labels,
      body,
      closedSeq: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 99 })),
    }),
  }),
  fc.record({
    table: fc.constant("issues" as const),
    op: fc.constant("labels" as const),
    number: num,
    labels,
  }),
  fc.record({
    table: fc.constant("issues" as const),
    op: fc.constant("delete" as const),
    number: num,
  }),
  fc.record({
    table: fc.constant("tombstones" as const),
    op: fc.constant("upsert" as const),
    row: fc.record({ number: num, atMs: ms }),
  }),
  fc.record({
    table: fc.constant("tombstones" as const),
    op: fc.constant("delete" as const),
    number: num,
  }),
  fc.record({
    table: fc.constant("parents" as const),
    op: fc.constant("upsert" as const),
    row: fc.record({ child: num, parent: fc.oneof(fc.constant(null), ref), atMs: ms }),
  }),
  fc.record({
    table: fc.constant("parents" as const),
    op: fc.constant("issue-removed" as const),
    number: num,
    atMs: ms,
  }),
  fc.record({
    table: fc.constant("blockers" as const),
    op: fc.constant("upsert" as const),
    row: fc.record({ issue: num, blocker: ref, present: fc.boolean(), atMs: ms }),
  }),
  fc.record({
    table: fc.constant("blockers" as const),
    op: fc.constant("delete-involving" as const),
    number: num,
  }),
  fc.record({
    table: fc.constant("external" as const),
    op: fc.constant("upsert" as const),
    row: fc.record({
      ref: fc.constantFrom("acme/other#3", "acme/other#4"),
      state: fc.constantFrom("open" as const, "closed" as const),
      closedAt: fc.oneof(fc.constant(null), iso),
      atMs: ms,
      closedSeq: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 99 })),
    }),
  }),
  fc.record({
    table: fc.constant("label_events" as const),
    op: fc.constant("insert" as const),
    row: fc.record({
      number: num,
      label: fc.constantFrom("agent:ready", "5"),
      action: fc.constantFrom("labeled" as const, "unlabeled" as const),
      actor: fc.oneof(fc.constant(null), fc.constantFrom("octocat", "bot[bot]")),
      createdAt: iso,
      createdMs: ms,
    }),
  }),
  fc.record({
    table: fc.constant("label_events" as const),
    op: fc.constant("delete-of-issue" as const),
    number: num,
  }),
  fc.record({
    table: fc.constant("comments" as const),
    op: fc.constant("upsert" as const),
    row: fc.record({
      id: num,
      number: num,
      author: text,
      authorType: fc.constantFrom("User", "Bot"),
      association: fc.oneof(fc.constant(null), fc.constantFrom("OWNER", "NONE")),
      body: text,
      createdAt: iso,
      updatedMs: ms,
    }),
  }),
  fc.record({
    table: fc.constant("comments" as const),
    op: fc.constant("delete" as const),
    id: num,
  }),
  fc.record({
    table: fc.constant("comments" as const),
    op: fc.constant("delete-of-issue" as const),
    number: num,
  }),
  fc.record({
    table: fc.constant("comment_tombstones" as const),
    op: fc.constant("upsert" as const),
    row: fc.record({ id: num, atMs: ms }),
  }),
);

/** An open issue's upsert. */
const issue = (number: number, body: string | null = null): RowWrite => ({
  table: "issues",
  op: "upsert",
  row: {
    number,
    id: number,
    title: `#${number}`,
    state: "open",
    stateReason: null,
    createdAt: "2026-01-01T00:00:00Z",
    updatedAt: "2026-01-01T00:00:00Z",
    updatedMs: 1,
    closedAt: null,
    labels: [],
    body,
    closedSeq: null,
  },
});

/** Issues 1 to 6 stored, so that label rewrites and deletes have rows to act on. */
const STORED: RowWrite[] = [1, 2, 3, 4, 5, 6].map((number) => issue(number));

/** Keys naming every row the generators can write. */
const EVERY_KEY: RowKeys = {
  issues: [1, 2, 3, 4, 5, 6],
  tombstones: [1, 2, 3, 4, 5, 6],
  parents: [1, 2, 3, 4, 5, 6],
  blockers: [1, 2, 3, 4, 5, 6],
  external: ["acme/other#3", "acme/other#4"],
  labelEvents: [1, 2, 3, 4, 5, 6].flatMap((number) =>
    ["agent:ready", "5"].flatMap((label) =>
      (["labeled", "unlabeled"] as const).map((action) => ({
        number,
        label,
        action,
        createdMs: 0,
      })),
    ),
  ),
  comments: [1, 2, 3, 4, 5, 6],
  commentTombstones: [1, 2, 3, 4, 5, 6],
};

describe("GraphStore batched statements", () => {
  it("leave the rows a statement per row leaves, whatever the writes (property)", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("graph-store-batches")) as Stub;
    await runInDurableObject(stub, (_o: RepoObject, state) => {
      const sql = state.storage.sql;
      const store = new GraphStore(sqlTag(sql));
      fc.assert(
        fc.property(
          fc.array(rowWrite, { maxLength: 40 }),
          fc.array(rowWrite, { maxLength: 40 }),
          (before, writes) => {
            wipe(sql);
            writeOneByOne(sql, [...STORED, ...before, ...writes]);
            const expected = tables(sql);
            // Rows there before, then the writes in one call (a run of one kind per statement).
            wipe(sql);
            writeOneByOne(sql, [...STORED, ...before]);
            store.write(writes);
            expect(tables(sql)).toEqual(expected);
          },
        ),
        { numRuns: 200 },
      );
    });
  });

  it("read inside a batch what a fresh read returns, after any writes (property)", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("graph-store-batch-reads")) as Stub;
    await runInDurableObject(stub, (_o: RepoObject, state) => {
      const sql = state.storage.sql;
      const store = new GraphStore(sqlTag(sql));
      fc.assert(
        fc.property(
          fc.array(rowWrite, { maxLength: 30 }),
          fc.array(fc.array(rowWrite, { maxLength: 4 }), { maxLength: 12 }),
          (before, steps) => {
            // Oracle: every read after the writes before it were carried out one by one.
            wipe(sql);
            writeOneByOne(sql, [...STORED, ...before]);
            const expected = steps.map((step) => {
              writeOneByOne(sql, step);
              return store.read(EVERY_KEY);
            });
            const rows = tables(sql);
            wipe(sql);
            writeOneByOne(sql, [...STORED, ...before]);
            const got = store.batch([EVERY_KEY], () =>
              steps.map((step) => {
                store.write(step);
                return store.read(EVERY_KEY);
              }),
            );
            expect(got).toEqual(expected);
            expect(tables(sql)).toEqual(rows);
          },
        ),
        { numRuns: 150 },
      );
    });
  });

  it("bounds the JSON bound in one statement: a page of long bodies takes several", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("graph-store-long-bodies")) as Stub;
    await runInDurableObject(stub, (_o: RepoObject, state) => {
      const sql = state.storage.sql;
      const store = new GraphStore(sqlTag(sql));
      // 100 bodies of 65,536 characters (GitHub's longest), three bytes each in UTF-8: about
      // 19 MB, far over the 2 MB a bound string may have.
      const long = "☃".repeat(65_536);
      const writes = Array.from({ length: 100 }, (_, i) => issue(i + 1, long));
      store.write(writes);
      const stored = sql
        .exec<{ n: number; len: number }>(
          "SELECT COUNT(*) AS n, SUM(length(body)) AS len FROM issues",
        )
        .one();
      expect(stored).toEqual({ n: 100, len: 100 * 65_536 });
    });
  });
});
