import { fnv1a32 } from "../../../shared/graph/hash.ts";
import type { RepoStatus } from "../../../shared/ingest/lifecycle.ts";
import { migrate, type Sql, sqlTag } from "../sql.ts";

// A directory bucket's table (`shard_entries`): the only code that runs SQL on it.

/** A directory entry (repository id, name, installation, status) as a shard answers it. */
export interface ShardEntry {
  repoId: number;
  fullName: string;
  installationId: number;
  status: RepoStatus;
}

/**
 * One write of the directory to a shard key: the repository's row as the directory wrote it
 * under sequence number `seq` (`entry` null: the repository no longer belongs to key `key`,
 * e.g. the old name after a rename). A bucket keeps the highest `seq` per key and repository,
 * so writes arriving out of order, twice, or from a retry end in the directory's latest state.
 */
export interface ShardOp {
  key: string;
  repoId: number;
  seq: number;
  entry: ShardEntry | null;
  updatedMs: number;
}

/** What a shard key answers: whether any write ever reached it, and its entry under the rule. */
export interface ShardAnswer {
  known: boolean;
  entry: ShardEntry | null;
}

const MIGRATIONS: ReadonlyArray<(sql: SqlStorage) => void> = [
  // Version 1 was one object per key (its candidate rows); no object of that layout is read
  // any more (see BUCKETS).
  (sql) => {
    sql.exec(`CREATE TABLE candidates (
      repo_id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, present INTEGER NOT NULL,
      full_name TEXT NOT NULL, installation_id INTEGER NOT NULL, status TEXT NOT NULL,
      updated_ms INTEGER NOT NULL
    )`);
  },
  // Every repository that ever belonged to one of this bucket's keys, with its latest row
  // (`present` 0: it left); a key's answer is the directory's lookup rule over its present rows.
  (sql) => {
    sql.exec("DROP TABLE candidates");
    sql.exec(`CREATE TABLE shard_entries (
      shard_key TEXT NOT NULL, repo_id INTEGER NOT NULL, seq INTEGER NOT NULL,
      present INTEGER NOT NULL, full_name TEXT NOT NULL, installation_id INTEGER NOT NULL,
      status TEXT NOT NULL, updated_ms INTEGER NOT NULL, PRIMARY KEY (shard_key, repo_id)
    )`);
  },
];

/** Shard keys: a lower-cased `owner/name` (GitHub names are case-insensitive), or `#<id>`. */
export const nameShardKey = (fullName: string) => fullName.toLowerCase();
export const idShardKey = (repoId: number) => `#${repoId}`;

/**
 * How many objects hold the shard keys (issue 25). One object per key made every installed
 * repository three new objects (its own and two shards): creating them was most of a large
 * installation's cost, and a local workerd keeps every object's SQLite files open, which
 * stopped a machine at about 2,200 repositories. A bucket serves 1/BUCKETS of the lookups, and
 * fleet-key requests (the agents' traffic) mostly skip lookups (docs/worker.md, Directory).
 * Changing the count moves every key: it needs a directory migration that re-queues every
 * entry, as the one that introduced buckets did.
 */
export const BUCKETS = 256;

/** The bucket of a key: FNV-1a over its UTF-8 bytes, modulo BUCKETS (stable everywhere). */
export const bucketOf = (key: string): number => fnv1a32(key) % BUCKETS;

/** The layout of the shard keys: a directory's "complete" counts only for the same layout. */
export const SHARD_LAYOUT = `names/${BUCKETS}`;

/** The object name of a key's bucket (two slashes: never a repository's name). */
export const bucketName = (key: string) => `${SHARD_LAYOUT}/${bucketOf(key)}`;

type Row = {
  repo_id: number;
  present: number;
  full_name: string;
  installation_id: number;
  status: string;
};

export class NameStore {
  private sql: Sql | null = null;
  private readonly storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.storage = storage;
    // A bucket nobody ever wrote is not created by reading it (a request for a random name
    // stores nothing): the schema is made by the first write.
    const exists = storage.sql
      .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'shard_entries'")
      .toArray();
    if (exists.length > 0) this.open();
  }

  private open(): Sql {
    if (!this.sql) {
      migrate(this.storage, MIGRATIONS);
      this.sql = sqlTag(this.storage.sql);
    }
    return this.sql;
  }

  /** Applies the directory's writes; an op older than what the bucket holds changes nothing. */
  apply(ops: readonly ShardOp[]): void {
    const sql = this.open();
    this.storage.transactionSync(() => {
      for (const op of ops) {
        const e = op.entry;
        sql`INSERT INTO shard_entries (shard_key, repo_id, seq, present, full_name, installation_id, status, updated_ms)
          VALUES (${op.key}, ${op.repoId}, ${op.seq}, ${e ? 1 : 0}, ${e?.fullName ?? ""},
            ${e?.installationId ?? 0}, ${e?.status ?? "removed"}, ${op.updatedMs})
          ON CONFLICT (shard_key, repo_id) DO UPDATE SET seq = excluded.seq, present = excluded.present,
            full_name = excluded.full_name, installation_id = excluded.installation_id,
            status = excluded.status, updated_ms = excluded.updated_ms
          WHERE excluded.seq > shard_entries.seq`;
      }
    });
  }

  /**
   * Key `key`'s answer. `known`: a write for it ever arrived. The entry is the same rule as the
   * directory's lookup (directory-store.ts): a repository still installed (active or suspended)
   * owns the name over any removed one, even a removal stamped later; otherwise the newest row
   * wins (ties: the highest id, as in the directory).
   */
  answer(key: string): ShardAnswer {
    if (!this.sql) return { known: false, entry: null };
    const r = this.sql<Row>`SELECT repo_id, present, full_name, installation_id, status
      FROM shard_entries WHERE shard_key = ${key}
      ORDER BY present DESC, CASE status WHEN 'removed' THEN 1 ELSE 0 END, updated_ms DESC,
        repo_id DESC LIMIT 1`[0];
    if (!r) return { known: false, entry: null };
    const entry: ShardEntry | null = r.present
      ? {
          repoId: r.repo_id,
          fullName: r.full_name,
          installationId: r.installation_id,
          status: r.status as RepoStatus,
        }
      : null;
    return { known: true, entry };
  }
}
