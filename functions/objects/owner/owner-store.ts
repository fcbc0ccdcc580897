import {
  type KeyVerdict,
  keySummary,
  keyVerdict,
  shouldRecordUse,
} from "../../../shared/auth/keys.ts";
import type { KeySummary } from "../../../shared/auth/schemas.ts";
import { type RepoHead, RepoHeadSchema, supersedes } from "../../../shared/org/head.ts";
import { MAX_TURNS, type Turn, turnCutoffMs } from "../../../shared/org/turns.ts";
import { Journal } from "../journal-store.ts";
import { type KeyRow, stored } from "../repo/keys-store.ts";
import { migrate, type Sql, sqlTag } from "../sql.ts";

// The owner's object's tables (spec 6.2): the only code that runs SQL on them. `heads`: one row
// per repository of the owner, its latest pushed head (a few dozen items, never more per issue)
// and whether a removal was received (`withdrawn_ms`: out of the queue at once, until GitHub
// denies the removal or the repository is added again); `owner_keys` (hashes only); `turns`
// (order=fair, bounded); `meta`; the audit log.

const MIGRATIONS: ReadonlyArray<(sql: SqlStorage) => void> = [
  (sql) => {
    sql.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    sql.exec(`CREATE TABLE heads (
      repo_id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, installation_id INTEGER NOT NULL,
      version INTEGER NOT NULL, status TEXT NOT NULL, head TEXT NOT NULL, pushed_ms INTEGER NOT NULL,
      withdrawn_ms INTEGER
    )`);
    sql.exec(`CREATE TABLE owner_keys (
      id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
      installation_id INTEGER NOT NULL, created_by TEXT, created_ms INTEGER NOT NULL,
      last_used_ms INTEGER, expires_ms INTEGER, revoked_ms INTEGER
    )`);
    sql.exec(
      `CREATE TABLE turns (agent_id TEXT PRIMARY KEY, repo_id INTEGER NOT NULL, at_ms INTEGER NOT NULL)`,
    );
    sql.exec(`CREATE INDEX turns_by_age ON turns (at_ms)`);
    sql.exec(`CREATE TABLE deliveries (id TEXT PRIMARY KEY, received_ms INTEGER NOT NULL)`);
    sql.exec(`CREATE TABLE audit (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL,
      lane TEXT NOT NULL DEFAULT 'activity'
    )`);
    // The Journal's lanes (shared/schedule/audit-lanes.ts): owner keys stay on record.
    sql.exec(`CREATE INDEX audit_by_lane ON audit (lane, seq)`);
  },
];

/** A repository's head as the owner holds it. */
export interface HeldHead extends RepoHead {
  pushedMs: number;
  withdrawnMs: number | null;
}

type HeadRow = { head: string; pushed_ms: number; withdrawn_ms: number | null };
type OwnerKeyRow = KeyRow & { installation_id: number };
/** A stored owner key as it moves between objects: its hash, never the key. */
export type OwnerKeyMove = OwnerKeyRow & { hash: string };

export interface NewOwnerKey {
  id: string;
  name: string;
  hash: string;
  installationId: number;
  createdBy: string;
  createdMs: number;
  expiresMs: number;
}

export class OwnerStore {
  private readonly sql: Sql;
  private readonly storage: DurableObjectStorage;
  readonly journal: Journal;
  /** Every head, parsed once per change (claim-next reads them all; they are small). */
  private cache: Map<number, HeldHead> | null = null;

  constructor(storage: DurableObjectStorage) {
    this.storage = storage;
    migrate(storage, MIGRATIONS);
    this.sql = sqlTag(storage.sql);
    this.journal = new Journal(this.sql);
  }

  transaction<T>(fn: () => T): T {
    try {
      return this.storage.transactionSync(fn);
    } catch (error) {
      this.cache = null;
      throw error;
    }
  }

  meta(key: "installationId" | "owner"): string | undefined {
    return this.sql<{ value: string }>`SELECT value FROM meta WHERE key = ${key}`[0]?.value;
  }

  setMeta(key: "installationId" | "owner", value: string): void {
    this.sql`INSERT INTO meta (key, value) VALUES (${key}, ${value})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
  }

  heads(): HeldHead[] {
    if (this.cache === null) {
      this.cache = new Map();
      for (const r of this.sql<HeadRow>`SELECT head, pushed_ms, withdrawn_ms FROM heads`) {
        const head = JSON.parse(r.head) as RepoHead;
        this.cache.set(head.repoId, {
          ...head,
          pushedMs: r.pushed_ms,
          withdrawnMs: r.withdrawn_ms,
        });
      }
    }
    return [...this.cache.values()];
  }

  head(repoId: number): HeldHead | null {
    this.heads();
    return this.cache!.get(repoId) ?? null;
  }

  /** Stores a push unless a newer one is held (a late push changes nothing): the head, or null. */
  push(input: unknown, nowMs: number): RepoHead | null {
    const head = RepoHeadSchema.parse(input);
    const held = this.head(head.repoId);
    if (!supersedes(held, head)) return null;
    this
      .sql`INSERT INTO heads (repo_id, full_name, installation_id, version, status, head, pushed_ms)
      VALUES (${head.repoId}, ${head.fullName}, ${head.installationId}, ${head.version},
        ${head.status}, ${JSON.stringify(head)}, ${nowMs})
      ON CONFLICT (repo_id) DO UPDATE SET full_name = excluded.full_name,
        installation_id = excluded.installation_id, version = excluded.version,
        status = excluded.status, head = excluded.head, pushed_ms = excluded.pushed_ms`;
    this.cache!.set(head.repoId, {
      ...head,
      pushedMs: nowMs,
      withdrawnMs: held?.withdrawnMs ?? null,
    });
    return head;
  }

  /** A removal was received for these repositories: out of the queue until `restore`. */
  withdraw(repoIds: readonly number[], nowMs: number): void {
    for (const id of repoIds) {
      this
        .sql`UPDATE heads SET withdrawn_ms = ${nowMs} WHERE repo_id = ${id} AND withdrawn_ms IS NULL`;
    }
    this.cache = null;
  }

  restore(repoIds: readonly number[]): void {
    for (const id of repoIds) this.sql`UPDATE heads SET withdrawn_ms = NULL WHERE repo_id = ${id}`;
    this.cache = null;
  }

  /** Whether a repository was withdrawn before its first push (kept as a bare row). */
  withdrawUnknown(
    repo: { repoId: number; fullName: string; installationId: number },
    nowMs: number,
  ) {
    if (this.head(repo.repoId) !== null) return;
    const head: RepoHead = {
      ...repo,
      version: 1,
      status: "removed",
      items: [],
      total: 0,
      claims: [],
    };
    this
      .sql`INSERT INTO heads (repo_id, full_name, installation_id, version, status, head, pushed_ms, withdrawn_ms)
      VALUES (${repo.repoId}, ${repo.fullName}, ${repo.installationId}, 1, 'removed', ${JSON.stringify(head)}, ${nowMs}, ${nowMs})`;
    this.cache = null;
  }

  // --- order=fair turns ---

  turn(agentId: string): Turn | null {
    const r = this.sql<{ repo_id: number; at_ms: number }>`
      SELECT repo_id, at_ms FROM turns WHERE agent_id = ${agentId}`[0];
    return r ? { agentId, repoId: r.repo_id, atMs: r.at_ms } : null;
  }

  /** Records a turn; outlived turns go, and the oldest beyond `MAX_TURNS`. */
  setTurn(turn: Turn): void {
    this
      .sql`INSERT INTO turns (agent_id, repo_id, at_ms) VALUES (${turn.agentId}, ${turn.repoId}, ${turn.atMs})
      ON CONFLICT (agent_id) DO UPDATE SET repo_id = excluded.repo_id, at_ms = excluded.at_ms`;
    this.sql`DELETE FROM turns WHERE at_ms < ${turnCutoffMs(turn.atMs)}`;
    this.sql`DELETE FROM turns WHERE agent_id IN (
      SELECT agent_id FROM turns ORDER BY at_ms DESC LIMIT -1 OFFSET ${MAX_TURNS})`;
  }

  turnCount(): number {
    return this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM turns`[0]!.n;
  }

  // --- owner keys (hashes only; the rules are shared/auth/keys.ts) ---

  createKey(key: NewOwnerKey): KeySummary {
    this
      .sql`INSERT INTO owner_keys (id, name, hash, installation_id, created_by, created_ms, expires_ms)
      VALUES (${key.id}, ${key.name}, ${key.hash}, ${key.installationId}, ${key.createdBy},
        ${key.createdMs}, ${key.expiresMs})`;
    return keySummary({
      id: key.id,
      name: key.name,
      createdBy: key.createdBy,
      createdMs: key.createdMs,
      lastUsedMs: null,
      expiresMs: key.expiresMs,
      revokedMs: null,
    });
  }

  listKeys(): KeySummary[] {
    return this
      .sql<OwnerKeyRow>`SELECT id, name, installation_id, created_by, created_ms, last_used_ms,
      expires_ms, revoked_ms FROM owner_keys ORDER BY created_ms, id`.map((r) =>
      keySummary(stored(r)),
    );
  }

  revokeKey(id: string, nowMs: number): boolean {
    if (this.sql`SELECT id FROM owner_keys WHERE id = ${id}`.length === 0) return false;
    this.sql`UPDATE owner_keys SET revoked_ms = ${nowMs} WHERE id = ${id} AND revoked_ms IS NULL`;
    return true;
  }

  /** Every key row, hashes included (moving keys minted before `ownerKeysObject` existed). */
  keyRows(): OwnerKeyMove[] {
    return this.sql<OwnerKeyMove>`SELECT id, name, hash, installation_id, created_by, created_ms,
      last_used_ms, expires_ms, revoked_ms FROM owner_keys ORDER BY created_ms, id`;
  }

  /** Takes moved rows as they were (a row already here is kept: a repeated move is harmless). */
  adoptKeys(rows: readonly OwnerKeyMove[]): void {
    for (const r of rows) {
      this.sql`INSERT OR IGNORE INTO owner_keys (id, name, hash, installation_id, created_by,
        created_ms, last_used_ms, expires_ms, revoked_ms) VALUES (${r.id}, ${r.name}, ${r.hash},
        ${r.installation_id}, ${r.created_by}, ${r.created_ms}, ${r.last_used_ms},
        ${r.expires_ms}, ${r.revoked_ms})`;
    }
  }

  deleteKeys(ids: readonly string[]): void {
    for (const id of ids) this.sql`DELETE FROM owner_keys WHERE id = ${id}`;
  }

  /**
   * The key with this hash, if valid now and minted for installation `installationId` (the one
   * its shape names); its use is recorded at most once a minute.
   */
  verifyKey(hash: string, installationId: number, nowMs: number): KeyVerdict {
    const row = this.sql<OwnerKeyRow>`SELECT id, name, installation_id, created_by, created_ms,
      last_used_ms, expires_ms, revoked_ms FROM owner_keys WHERE hash = ${hash}`[0];
    const key = row && row.installation_id === installationId ? stored(row) : null;
    const verdict = keyVerdict(key, nowMs);
    if (verdict.ok && key && shouldRecordUse(key.lastUsedMs, nowMs)) {
      this.sql`UPDATE owner_keys SET last_used_ms = ${nowMs} WHERE id = ${key.id}`;
    }
    return verdict;
  }
}
