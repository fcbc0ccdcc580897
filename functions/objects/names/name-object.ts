import { DurableObject } from "cloudflare:workers";
import type { RepoStatus } from "../../../shared/ingest/lifecycle.ts";
import type { Env } from "../../env.ts";
import { migrate, type Sql, sqlTag } from "../sql.ts";

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

/** What a shard answers: whether any write ever reached it, and its entry under the rule. */
export interface ShardAnswer {
  known: boolean;
  entry: ShardEntry | null;
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

type Row = { repo_id: number; full_name: string; installation_id: number; status: string };

/** Shard names: a lower-cased `owner/name` (GitHub names are case-insensitive), or `#<id>`. */
export const nameShardKey = (fullName: string) => fullName.toLowerCase();
export const idShardKey = (repoId: number) => `#${repoId}`;

/**
 * A shard of the directory (issue 10, item 5): the candidate rows of one lower-cased repository
 * name (or of one repository id, `#<id>`), written through by the DirectoryObject on every
 * upsert and read by the `/v1` routes instead of the one global directory. The directory stays
 * the authority; a shard answers the same lookup rule over the same rows.
 */
export class NameObject extends DurableObject<Env> {
  private sql: Sql | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // A shard nobody ever wrote is not created by reading it (a request for a random name
    // stores nothing): the schema is made by the first write.
    const exists = ctx.storage.sql
      .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'candidates'")
      .toArray();
    if (exists.length > 0) this.open();
  }

  private open(): Sql {
    if (!this.sql) {
      migrate(this.ctx.storage, MIGRATIONS);
      this.sql = sqlTag(this.ctx.storage.sql);
    }
    return this.sql;
  }

  /** Applies the directory's writes; an op older than what the shard holds changes nothing. */
  apply(ops: ShardOp[]): void {
    const sql = this.open();
    this.ctx.storage.transactionSync(() => {
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
   * The same rule as `DirectoryObject.lookup`: a repository still installed (active or
   * suspended) owns the name over any removed one, even a removal stamped later; otherwise the
   * newest row wins (ties: the highest id, as in the directory).
   */
  lookup(): ShardAnswer {
    if (!this.sql) return { known: false, entry: null };
    const rows = this.sql<Row>`SELECT repo_id, full_name, installation_id, status FROM candidates
      WHERE present = 1
      ORDER BY CASE status WHEN 'removed' THEN 1 ELSE 0 END, updated_ms DESC, repo_id DESC LIMIT 1`;
    const r = rows[0];
    return {
      known: true,
      entry: r
        ? {
            repoId: r.repo_id,
            fullName: r.full_name,
            installationId: r.installation_id,
            status: r.status as RepoStatus,
          }
        : null,
    };
  }
}

export function shard(env: Env, key: string) {
  return env.NAMES.get(env.NAMES.idFromName(key));
}
