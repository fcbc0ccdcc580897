import type { RepoStatus } from "../../../shared/ingest/lifecycle.ts";
import { idShardKey, nameShardKey, type ShardOp } from "../names/name-store.ts";
import { migrate, type Sql, sqlTag } from "../sql.ts";

// The directory's tables (`repos`, the shards' `shard_outbox`, `meta`): the only code that runs
// SQL on them.

export interface DirectoryEntry {
  repoId: number;
  fullName: string;
  installationId: number;
  status: RepoStatus;
}

/** Enqueues the shard write of `row` (null: the repository left shard `key`) under `seq`. */
function enqueue(
  sql: SqlStorage,
  key: string,
  repoId: number,
  seq: number,
  row: { fullName: string; installationId: number; status: string; updatedMs: number } | null,
  updatedMs: number,
  backfill: boolean,
) {
  // A newer write for the same (shard, repository) replaces a pending one; a pending backfill
  // stays marked until something for that pair is delivered (see `shardsComplete`).
  sql.exec(
    `INSERT INTO shard_outbox (shard, repo_id, seq, present, full_name, installation_id, status, updated_ms, backfill)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (shard, repo_id) DO UPDATE SET seq = excluded.seq, present = excluded.present,
       full_name = excluded.full_name, installation_id = excluded.installation_id,
       status = excluded.status, updated_ms = excluded.updated_ms,
       backfill = max(shard_outbox.backfill, excluded.backfill)`,
    key,
    repoId,
    seq,
    row ? 1 : 0,
    row?.fullName ?? "",
    row?.installationId ?? 0,
    row?.status ?? "removed",
    updatedMs,
    backfill ? 1 : 0,
  );
}

function nextSeq(sql: SqlStorage): number {
  return sql
    .exec<{ value: number }>(
      `INSERT INTO meta (key, value) VALUES ('seq', 1)
       ON CONFLICT (key) DO UPDATE SET value = value + 1 RETURNING value`,
    )
    .one().value;
}

/**
 * Queues every stored entry for its name's and its id's shard key, marked as a backfill: until
 * it is delivered, the routes ask the directory about a key no write reached (`shardsComplete`).
 */
function queueBackfill(sql: SqlStorage): void {
  const rows = sql
    .exec<Row & { name_key: string; updated_ms: number }>(
      "SELECT id, full_name, name_key, installation_id, status, updated_ms FROM repos",
    )
    .toArray();
  for (const r of rows) {
    const seq = nextSeq(sql);
    const row = {
      fullName: r.full_name,
      installationId: r.installation_id,
      status: r.status,
      updatedMs: r.updated_ms,
    };
    enqueue(sql, r.name_key, r.id, seq, row, r.updated_ms, true);
    enqueue(sql, idShardKey(r.id), r.id, seq, row, r.updated_ms, true);
  }
}

const MIGRATIONS: ReadonlyArray<(sql: SqlStorage) => void> = [
  (sql) => {
    sql.exec(`CREATE TABLE repos (
      id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, name_key TEXT NOT NULL,
      installation_id INTEGER NOT NULL, status TEXT NOT NULL, updated_ms INTEGER NOT NULL
    )`);
    sql.exec(`CREATE INDEX repos_by_name ON repos (name_key)`);
    sql.exec(`CREATE INDEX repos_by_installation ON repos (installation_id)`);
  },
  // Issue 10 item 5: shards (NameObject) answer the routes' lookups; every directory write goes
  // to them through this outbox. Rows stored before it are queued for them once (backfill).
  (sql) => {
    sql.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`);
    sql.exec(`CREATE TABLE shard_outbox (
      shard TEXT NOT NULL, repo_id INTEGER NOT NULL, seq INTEGER NOT NULL, present INTEGER NOT NULL,
      full_name TEXT NOT NULL, installation_id INTEGER NOT NULL, status TEXT NOT NULL,
      updated_ms INTEGER NOT NULL, backfill INTEGER NOT NULL, PRIMARY KEY (shard, repo_id)
    )`);
    queueBackfill(sql);
  },
  // Issue 25: the shard keys moved into BUCKETS objects (name-store.ts); the new buckets start
  // empty, so every entry is queued for them again, as when the shards were introduced.
  (sql) => queueBackfill(sql),
];

type Row = { id: number; full_name: string; installation_id: number; status: string };
const entry = (r: Row): DirectoryEntry => ({
  repoId: r.id,
  fullName: r.full_name,
  installationId: r.installation_id,
  status: r.status as RepoStatus,
});

type OutboxRow = {
  shard: string;
  repo_id: number;
  seq: number;
  present: number;
  full_name: string;
  installation_id: number;
  status: string;
  updated_ms: number;
};

const op = (r: OutboxRow): ShardOp => ({
  key: r.shard,
  repoId: r.repo_id,
  seq: r.seq,
  updatedMs: r.updated_ms,
  entry: r.present
    ? {
        repoId: r.repo_id,
        fullName: r.full_name,
        installationId: r.installation_id,
        status: r.status as RepoStatus,
      }
    : null,
});

/** A shard key's queued writes, as read for delivery. */
export interface QueuedShardWrites {
  ops: ShardOp[];
  seqs: Array<{ repoId: number; seq: number }>;
}

export class DirectoryStore {
  private readonly sql: Sql;
  private readonly storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.storage = storage;
    migrate(storage, MIGRATIONS);
    this.sql = sqlTag(storage.sql);
  }

  ping(): boolean {
    return this.sql<{ one: number }>`SELECT 1 AS one`[0]?.one === 1;
  }

  /**
   * Writes `entries` and queues their shard keys' writes (the name's, the former name's on a
   * rename, and the id's), in one transaction. Returns the keys touched.
   */
  upsert(entries: readonly DirectoryEntry[], atMs: number): string[] {
    const touched = new Set<string>();
    this.storage.transactionSync(() => {
      const raw = this.storage.sql;
      for (const e of entries) {
        const key = nameShardKey(e.fullName);
        const before = this.sql<{
          name_key: string;
        }>`SELECT name_key FROM repos WHERE id = ${e.repoId}`[0];
        this.sql`INSERT INTO repos (id, full_name, name_key, installation_id, status, updated_ms)
          VALUES (${e.repoId}, ${e.fullName}, ${key}, ${e.installationId}, ${e.status}, ${atMs})
          ON CONFLICT (id) DO UPDATE SET full_name = excluded.full_name, name_key = excluded.name_key,
            installation_id = excluded.installation_id, status = excluded.status, updated_ms = excluded.updated_ms`;
        const seq = nextSeq(raw);
        const row = { ...e, updatedMs: atMs };
        enqueue(raw, key, e.repoId, seq, row, atMs, false);
        enqueue(raw, idShardKey(e.repoId), e.repoId, seq, row, atMs, false);
        touched.add(key).add(idShardKey(e.repoId));
        if (before && before.name_key !== key) {
          enqueue(raw, before.name_key, e.repoId, seq, null, atMs, false);
          touched.add(before.name_key);
        }
      }
    });
    return [...touched];
  }

  /** The writes queued for shard key `key`. */
  queued(key: string): QueuedShardWrites {
    const rows = this.sql<OutboxRow>`SELECT shard, repo_id, seq, present, full_name,
        installation_id, status, updated_ms FROM shard_outbox WHERE shard = ${key}`;
    return { ops: rows.map(op), seqs: rows.map((r) => ({ repoId: r.repo_id, seq: r.seq })) };
  }

  /** Delivered: dropped from the queue, unless a newer write was queued meanwhile. */
  delivered(key: string, seqs: QueuedShardWrites["seqs"]): void {
    this.storage.transactionSync(() => {
      for (const { repoId, seq } of seqs) {
        this
          .sql`DELETE FROM shard_outbox WHERE shard = ${key} AND repo_id = ${repoId} AND seq = ${seq}`;
      }
    });
  }

  pending(): number {
    return this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM shard_outbox`[0]?.n ?? 0;
  }

  /** Shard keys with writes queued, the first `limit` of them by name. */
  pendingShards(limit: number): string[] {
    return this.sql<{ shard: string }>`SELECT DISTINCT shard FROM shard_outbox
      ORDER BY shard LIMIT ${limit}`.map((r) => r.shard);
  }

  /** Whether the backfill (of entries stored before the shards, or before buckets) is delivered. */
  backfillDelivered(): boolean {
    return (
      this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM shard_outbox WHERE backfill = 1`[0]?.n === 0
    );
  }

  /**
   * GitHub names are case-insensitive; a renamed repository is found by its latest name. A
   * repository still installed (active or suspended) owns its name over any removed one, even
   * a removal stamped later (a late or replayed removal of the name's former repository);
   * otherwise the newest row wins (ties: the highest id). `NameStore.answer` is the same rule.
   */
  lookup(fullName: string): DirectoryEntry | null {
    const rows = this.sql<Row>`SELECT id, full_name, installation_id, status FROM repos
      WHERE name_key = ${fullName.toLowerCase()}
      ORDER BY CASE status WHEN 'removed' THEN 1 ELSE 0 END, updated_ms DESC, id DESC LIMIT 1`;
    return rows[0] ? entry(rows[0]) : null;
  }

  get(repoId: number): DirectoryEntry | null {
    const rows = this
      .sql<Row>`SELECT id, full_name, installation_id, status FROM repos WHERE id = ${repoId}`;
    return rows[0] ? entry(rows[0]) : null;
  }

  /** Entries by id, filtered; `afterId` and `limit` page through them. */
  list(
    filter: { status?: RepoStatus; installationId?: number; afterId?: number; limit?: number } = {},
  ): DirectoryEntry[] {
    const status = filter.status ?? null;
    const installation = filter.installationId ?? null;
    return this.sql<Row>`SELECT id, full_name, installation_id, status FROM repos
      WHERE id > ${filter.afterId ?? Number.MIN_SAFE_INTEGER}
        AND (${status} IS NULL OR status = ${status})
        AND (${installation} IS NULL OR installation_id = ${installation})
      ORDER BY id LIMIT ${filter.limit ?? -1}`.map(entry);
  }
}
