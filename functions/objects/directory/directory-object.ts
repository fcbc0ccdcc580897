import { DurableObject } from "cloudflare:workers";
import type { RepoStatus } from "../../../shared/ingest/lifecycle.ts";
import type { Env } from "../../env.ts";
import { idShardKey, nameShardKey, type ShardOp, shard } from "../names/name-object.ts";
import { migrate, type Sql, sqlTag } from "../sql.ts";

export type { RepoStatus };

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
  },
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

/** Shards written per alarm run while catching up (a backfill, or writes that failed). */
const FLUSH_BATCH = 100;
/** Shard calls in flight at once from one flush. */
const FLUSH_PARALLEL = 16;
const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 60_000;

/** `run` over every item, at most `parallel` at a time; every outcome, in order. */
async function settleAll<T>(
  items: readonly T[],
  parallel: number,
  run: (item: T) => Promise<void>,
): Promise<PromiseSettledResult<void>[]> {
  const results: PromiseSettledResult<void>[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        results[i] = { status: "fulfilled", value: await run(items[i]!) };
      } catch (reason) {
        results[i] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
  return results;
}

/**
 * The one global index (a single instance named "directory"): repository name → numeric id and
 * installation. It is the authority, read by the cron (in pages) and the objects; the `/v1`
 * routes read its shards instead (functions/objects/name-object.ts), which every upsert writes
 * through before it returns: one per lower-cased name (the new one, and the old one after a
 * rename) and one per repository id.
 */
export class DirectoryObject extends DurableObject<Env> {
  private readonly sql: Sql;
  private failures = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, MIGRATIONS);
    this.sql = sqlTag(ctx.storage.sql);
    if (this.pending() > 0) {
      // A backfill, or writes a failed run left: delivered by the alarm.
      void ctx.blockConcurrencyWhile(async () => {
        if ((await ctx.storage.getAlarm()) === null) await ctx.storage.setAlarm(Date.now());
      });
    }
  }

  ping(): boolean {
    return this.sql<{ one: number }>`SELECT 1 AS one`[0]?.one === 1;
  }

  /**
   * Writes `entries` and, before returning, their shards: the name's (and the former name's,
   * on a rename) and the id's. A shard that cannot be written makes the call throw (the entry
   * stays written and its shard write queued; the alarm retries it), so no caller takes an
   * event as applied while a shard still answers the old state.
   */
  async upsert(entries: DirectoryEntry[], atMs: number): Promise<void> {
    const touched = new Set<string>();
    this.ctx.storage.transactionSync(() => {
      const raw = this.ctx.storage.sql;
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
    await this.flush([...touched]);
  }

  /**
   * Delivers the queued writes of `keys` (one call per shard, `FLUSH_PARALLEL` at a time);
   * throws if one fails, after trying them all.
   */
  private async flush(keys: string[]): Promise<void> {
    const results = await settleAll(keys, FLUSH_PARALLEL, async (key) => {
      const rows = this.sql<OutboxRow>`SELECT shard, repo_id, seq, present, full_name,
          installation_id, status, updated_ms FROM shard_outbox WHERE shard = ${key}`;
      if (rows.length === 0) return;
      await shard(this.env, key).apply(rows.map(op));
      this.ctx.storage.transactionSync(() => {
        // A newer write queued meanwhile stays queued.
        for (const r of rows) {
          this
            .sql`DELETE FROM shard_outbox WHERE shard = ${key} AND repo_id = ${r.repo_id} AND seq = ${r.seq}`;
        }
      });
    });
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) {
      this.failures += 1;
      const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (this.failures - 1));
      await this.ctx.storage.setAlarm(Date.now() + delay);
      throw failed.reason;
    }
    this.failures = 0;
  }

  private pending(): number {
    return this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM shard_outbox`[0]?.n ?? 0;
  }

  /** Delivers queued shard writes a batch of shards at a time, re-arming until none is left. */
  override async alarm(): Promise<void> {
    const keys = this.sql<{ shard: string }>`SELECT DISTINCT shard FROM shard_outbox
      ORDER BY shard LIMIT ${FLUSH_BATCH}`.map((r) => r.shard);
    if (keys.length === 0) return;
    try {
      await this.flush(keys);
    } catch (error) {
      console.error("directory: shard writes failed; retrying", error);
      return;
    }
    if (this.pending() > 0) await this.ctx.storage.setAlarm(Date.now());
  }

  /**
   * Whether every shard holds every entry stored before the shards existed (the backfill is
   * delivered). Once true it stays true, so a route may remember it: from then on a shard that
   * never received a write means "no such repository" without asking here.
   */
  shardsComplete(): boolean {
    return (
      this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM shard_outbox WHERE backfill = 1`[0]?.n === 0
    );
  }

  /**
   * A route's fallback for a shard that never received a write: the directory's own answer,
   * and whether the shards are complete (see `shardsComplete`).
   */
  resolve(query: { fullName: string } | { repoId: number }): {
    entry: DirectoryEntry | null;
    shardsComplete: boolean;
  } {
    const found = "fullName" in query ? this.lookup(query.fullName) : this.get(query.repoId);
    return { entry: found, shardsComplete: this.shardsComplete() };
  }

  /**
   * GitHub names are case-insensitive; a renamed repository is found by its latest name. A
   * repository still installed (active or suspended) owns its name over any removed one, even
   * a removal stamped later (a late or replayed removal of the name's former repository);
   * otherwise the newest row wins (ties: the highest id). `NameObject.lookup` is the same rule.
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

  /**
   * Entries by id, filtered; `afterId` and `limit` page through them (the cron reads a bounded
   * page at a time; without a limit, everything that matches).
   */
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

export function directory(env: Env) {
  return env.DIRECTORY.get(env.DIRECTORY.idFromName("directory"));
}
