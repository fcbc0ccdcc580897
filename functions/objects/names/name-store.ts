import type { RepoStatus } from "../../../shared/ingest/lifecycle.ts";
import { migrate, type Sql, sqlTag } from "../sql.ts";

// A directory shard's table (`candidates`): the only code that runs SQL on it.

/** A directory entry (repository id, name, installation, status) as a shard answers it. */
export interface ShardEntry {
  repoId: number;
  fullName: string;
  installationId: number;
  status: RepoStatus;
}

/**
 * One write of the directory to a shard: the repository's row as the directory wrote it under
 * sequence number `seq` (`entry` null: the repository no longer belongs to this shard, e.g. the
 * old name after a rename). A shard keeps the highest `seq` per repository, so writes arriving
 * out of order, twice, or from a retry end in the directory's latest state.
 */
export interface ShardOp {
  repoId: number;
  seq: number;
  entry: ShardEntry | null;
  updatedMs: number;
}

const MIGRATIONS: ReadonlyArray<(sql: SqlStorage) => void> = [
  (sql) => {
    // Every repository that ever belonged to this shard, with its latest row (`present` 0: it
    // left); the shard applies the directory's lookup rule over the present ones.
    sql.exec(`CREATE TABLE candidates (
      repo_id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, present INTEGER NOT NULL,
      full_name TEXT NOT NULL, installation_id INTEGER NOT NULL, status TEXT NOT NULL,
      updated_ms INTEGER NOT NULL
    )`);
  },
];

/** Shard names: a lower-cased `owner/name` (GitHub names are case-insensitive), or `#<id>`. */
export const nameShardKey = (fullName: string) => fullName.toLowerCase();
export const idShardKey = (repoId: number) => `#${repoId}`;

type Row = { repo_id: number; full_name: string; installation_id: number; status: string };

export class NameStore {
  private sql: Sql | null = null;
  private readonly storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.storage = storage;
    // A shard nobody ever wrote is not created by reading it (a request for a random name
    // stores nothing): the schema is made by the first write.
    const exists = storage.sql
      .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'candidates'")
      .toArray();
    if (exists.length > 0) this.open();
  }

  /** Whether any write ever reached this shard. */
  get written(): boolean {
    return this.sql !== null;
  }

  private open(): Sql {
    if (!this.sql) {
      migrate(this.storage, MIGRATIONS);
      this.sql = sqlTag(this.storage.sql);
    }
    return this.sql;
  }

  /** Applies the directory's writes; an op older than what the shard holds changes nothing. */
  apply(ops: readonly ShardOp[]): void {
    const sql = this.open();
    this.storage.transactionSync(() => {
      for (const op of ops) {
        const e = op.entry;
        sql`INSERT INTO candidates (repo_id, seq, present, full_name, installation_id, status, updated_ms)
          VALUES (${op.repoId}, ${op.seq}, ${e ? 1 : 0}, ${e?.fullName ?? ""}, ${e?.installationId ?? 0},
            ${e?.status ?? "removed"}, ${op.updatedMs})
          ON CONFLICT (repo_id) DO UPDATE SET seq = excluded.seq, present = excluded.present,
            full_name = excluded.full_name, installation_id = excluded.installation_id,
            status = excluded.status, updated_ms = excluded.updated_ms
          WHERE excluded.seq > candidates.seq`;
      }
    });
  }

  /**
   * The same rule as the directory's lookup (directory-store.ts): a repository still installed
   * (active or suspended) owns the name over any removed one, even a removal stamped later;
   * otherwise the newest row wins (ties: the highest id, as in the directory).
   */
  winner(): ShardEntry | null {
    if (!this.sql) return null;
    const r = this.sql<Row>`SELECT repo_id, full_name, installation_id, status FROM candidates
      WHERE present = 1
      ORDER BY CASE status WHEN 'removed' THEN 1 ELSE 0 END, updated_ms DESC, repo_id DESC LIMIT 1`[0];
    return r
      ? {
          repoId: r.repo_id,
          fullName: r.full_name,
          installationId: r.installation_id,
          status: r.status as RepoStatus,
        }
      : null;
  }
}
