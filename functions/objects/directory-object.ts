import { DurableObject } from "cloudflare:workers";
import type { RepoStatus } from "../../shared/ingest/lifecycle.ts";
import type { Env } from "../env.ts";
import { migrate, type Sql, sqlTag } from "./sql.ts";

export type { RepoStatus };

export interface DirectoryEntry {
  repoId: number;
  fullName: string;
  installationId: number;
  status: RepoStatus;
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
];

type Row = { id: number; full_name: string; installation_id: number; status: string };
const entry = (r: Row): DirectoryEntry => ({
  repoId: r.id,
  fullName: r.full_name,
  installationId: r.installation_id,
  status: r.status as RepoStatus,
});

/**
 * The one global index (a single instance named "directory"): repository name → numeric id and
 * installation, so name-addressed API routes and the cron can find each RepoObject.
 */
export class DirectoryObject extends DurableObject<Env> {
  private readonly sql: Sql;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, MIGRATIONS);
    this.sql = sqlTag(ctx.storage.sql);
  }

  ping(): boolean {
    return this.sql<{ one: number }>`SELECT 1 AS one`[0]?.one === 1;
  }

  upsert(entries: DirectoryEntry[], atMs: number): void {
    this.ctx.storage.transactionSync(() => {
      for (const e of entries) {
        this.sql`INSERT INTO repos (id, full_name, name_key, installation_id, status, updated_ms)
          VALUES (${e.repoId}, ${e.fullName}, ${e.fullName.toLowerCase()}, ${e.installationId}, ${e.status}, ${atMs})
          ON CONFLICT (id) DO UPDATE SET full_name = excluded.full_name, name_key = excluded.name_key,
            installation_id = excluded.installation_id, status = excluded.status, updated_ms = excluded.updated_ms`;
      }
    });
  }

  /**
   * GitHub names are case-insensitive; a renamed repository is found by its latest name. A
   * repository still installed (active or suspended) owns its name over any removed one, even
   * a removal stamped later (a late or replayed removal of the name's former repository);
   * otherwise the newest row wins.
   */
  lookup(fullName: string): DirectoryEntry | null {
    const rows = this.sql<Row>`SELECT id, full_name, installation_id, status FROM repos
      WHERE name_key = ${fullName.toLowerCase()}
      ORDER BY CASE status WHEN 'removed' THEN 1 ELSE 0 END, updated_ms DESC LIMIT 1`;
    return rows[0] ? entry(rows[0]) : null;
  }

  get(repoId: number): DirectoryEntry | null {
    const rows = this
      .sql<Row>`SELECT id, full_name, installation_id, status FROM repos WHERE id = ${repoId}`;
    return rows[0] ? entry(rows[0]) : null;
  }

  list(filter: { status?: RepoStatus; installationId?: number } = {}): DirectoryEntry[] {
    return this.sql<Row>`SELECT id, full_name, installation_id, status FROM repos ORDER BY id`
      .map(entry)
      .filter(
        (e) =>
          (filter.status === undefined || e.status === filter.status) &&
          (filter.installationId === undefined || e.installationId === filter.installationId),
      );
  }
}

export function directory(env: Env) {
  return env.DIRECTORY.get(env.DIRECTORY.idFromName("directory"));
}
