import type { InstallationStatus, RepoRef, RepoStatus } from "../../../shared/ingest/lifecycle.ts";
import { Journal } from "../journal-store.ts";
import { migrate, type Sql, sqlTag } from "../sql.ts";
import { PermitsStore } from "./permits-store.ts";
import { ProjectItemsStore } from "./project-items-store.ts";

// The InstallationObject's tables: the only code that runs SQL on them. `meta` (installation id,
// status, account, the announced change awaiting confirmation), `repos`, `pending` (repository
// transitions to carry out), `confirm_removed` (removals awaiting GitHub's word), `writes`
// (the write budget's window), `deliveries` (journal-store.ts); the project tables
// (project-items-store.ts) and the reconcile permits (permits-store.ts).

const MIGRATIONS: ReadonlyArray<(sql: SqlStorage) => void> = [
  (sql) => {
    sql.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    sql.exec(
      `CREATE TABLE repos (id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, status TEXT NOT NULL)`,
    );
    sql.exec(`CREATE TABLE deliveries (id TEXT PRIMARY KEY, received_ms INTEGER NOT NULL)`);
    /** Repository transitions not yet carried out (done by the alarm, retried until they are). */
    sql.exec(
      `CREATE TABLE pending (repo_id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0)`,
    );
    /** Times of recent content writes, for the sliding-window write budget. */
    sql.exec(`CREATE TABLE writes (seq INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER NOT NULL)`);
    sql.exec(`CREATE INDEX writes_by_time ON writes (at_ms)`);
  },
  (sql) => {
    /**
     * Repositories a webhook said were removed from the installation: applied only once GitHub
     * confirms it (the App's token no longer reaches them), never on the webhook's word alone.
     */
    sql.exec(
      `CREATE TABLE confirm_removed (repo_id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, received_ms INTEGER NOT NULL)`,
    );
  },
  (sql) => {
    /** Failed attempts of a row and when it is tried again (doubling backoff, see `retryAt`). */
    sql.exec(`ALTER TABLE pending ADD COLUMN retry_at_ms INTEGER NOT NULL DEFAULT 0`);
    sql.exec(`ALTER TABLE confirm_removed ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0`);
    sql.exec(`ALTER TABLE confirm_removed ADD COLUMN retry_at_ms INTEGER NOT NULL DEFAULT 0`);
    // An announced deletion recorded before suspensions were confirmed too.
    sql.exec(
      `UPDATE meta SET key = 'confirmChange', value = 'deleted' WHERE key = 'confirmDeleted'`,
    );
  },
  (sql) => {
    /**
     * Priority from organization projects (issue 24; project-items-store.ts): the projects the
     * installation's repositories rank by, and `projects_v2_item` notices waiting to be resolved
     * to their issue and handed to its repository.
     */
    sql.exec(`CREATE TABLE watched_projects (
      project_id TEXT NOT NULL, repo_id INTEGER NOT NULL, PRIMARY KEY (project_id, repo_id)
    )`);
    sql.exec(`CREATE TABLE project_notices (
      item_id TEXT PRIMARY KEY, notice TEXT NOT NULL, at_ms INTEGER NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0, retry_at_ms INTEGER NOT NULL DEFAULT 0
    )`);
  },
  (sql) => {
    /**
     * Paced full reconciles (issue 25; permits-store.ts): the permits asked for (in line by
     * `seq`; `lease_until_ms` set while held; `notified` once the holder was told), the last
     * `x-ratelimit-*` reading per resource, the budget's tallies and averages, and when each
     * repository's first full reconcile completed.
     */
    sql.exec(`CREATE TABLE permits (
      repo_id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, asked_ms INTEGER NOT NULL,
      lease_until_ms INTEGER, notified INTEGER NOT NULL DEFAULT 1
    )`);
    sql.exec(`CREATE UNIQUE INDEX permits_by_seq ON permits (seq)`);
    sql.exec(`CREATE TABLE rate_readings (
      resource TEXT PRIMARY KEY, rate_limit INTEGER NOT NULL, remaining INTEGER NOT NULL,
      reset_ms INTEGER NOT NULL
    )`);
    sql.exec(`CREATE TABLE permit_stats (key TEXT PRIMARY KEY, value REAL NOT NULL)`);
    sql.exec(`ALTER TABLE repos ADD COLUMN reconciled_ms INTEGER`);
  },
  (sql) => {
    /**
     * An ask reads the holders and the head of the line only, not a line of thousands: the
     * holders by lease, the waiting by place (permits-store.ts `decisionState`, `position`).
     */
    sql.exec(
      `CREATE INDEX permits_held ON permits (lease_until_ms) WHERE lease_until_ms IS NOT NULL`,
    );
    sql.exec(`CREATE INDEX permits_waiting ON permits (seq) WHERE lease_until_ms IS NULL`);
  },
];

/** Keys of the `meta` table. */
export type InstallationMetaKey =
  | "installationId"
  | "status"
  | "account"
  /** An installation change a webhook announced that waits for GitHub's word. */
  | "confirmChange"
  | "confirmReceived"
  | "confirmAttempts"
  | "confirmRetryAtMs";

export interface PendingTransition {
  repoId: number;
  fullName: string;
  status: RepoStatus;
  attempts: number;
}

export interface AnnouncedRemoval {
  repoId: number;
  fullName: string;
  receivedMs: number;
  attempts: number;
}

export class InstallationStore {
  private readonly sql: Sql;
  private readonly storage: DurableObjectStorage;
  /** Delivery ids (this object keeps no audit log). */
  readonly journal: Journal;
  /** The project tables (watched projects, item notices). */
  readonly projects: ProjectItemsStore;
  /** The reconcile permits and the hourly budget's state. */
  readonly permits: PermitsStore;

  constructor(storage: DurableObjectStorage) {
    this.storage = storage;
    migrate(storage, MIGRATIONS);
    this.sql = sqlTag(storage.sql);
    this.journal = new Journal(this.sql);
    this.projects = new ProjectItemsStore(this.sql);
    this.permits = new PermitsStore(this.sql);
  }

  transaction<T>(fn: () => T): T {
    return this.storage.transactionSync(fn);
  }

  meta(key: InstallationMetaKey): string | undefined {
    return this.sql<{ value: string }>`SELECT value FROM meta WHERE key = ${key}`[0]?.value;
  }

  setMeta(key: InstallationMetaKey, value: string): void {
    this
      .sql`INSERT INTO meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
  }

  clearConfirmation(): void {
    this
      .sql`DELETE FROM meta WHERE key IN ('confirmChange', 'confirmReceived', 'confirmAttempts', 'confirmRetryAtMs')`;
  }

  status(): InstallationStatus | null {
    return (this.meta("status") as InstallationStatus | undefined) ?? null;
  }

  repos(): Array<RepoRef & { status: RepoStatus }> {
    return this.sql<{ id: number; full_name: string; status: string }>`
      SELECT id, full_name, status FROM repos ORDER BY id`.map((r) => ({
      id: r.id,
      fullName: r.full_name,
      status: r.status as RepoStatus,
    }));
  }

  installedRepos(): RepoRef[] {
    return this.sql<{ id: number; full_name: string }>`
      SELECT id, full_name FROM repos WHERE status <> 'removed' ORDER BY id`.map((r) => ({
      id: r.id,
      fullName: r.full_name,
    }));
  }

  repoStatus(repoId: number): RepoStatus | undefined {
    return this.sql<{ status: string }>`SELECT status FROM repos WHERE id = ${repoId}`[0]?.status as
      | RepoStatus
      | undefined;
  }

  /** A repository and the transition it is owed (a newer one replaces a pending one). */
  setRepo(repo: RepoRef & { status: RepoStatus }): void {
    // A removed repository's data is wiped: if it comes back, it is reconciled from scratch.
    this
      .sql`INSERT INTO repos (id, full_name, status) VALUES (${repo.id}, ${repo.fullName}, ${repo.status})
        ON CONFLICT (id) DO UPDATE SET full_name = excluded.full_name, status = excluded.status,
          reconciled_ms = CASE WHEN excluded.status = 'removed' THEN NULL ELSE reconciled_ms END`;
    if (repo.status === "removed") this.permits.drop(repo.id);
    this
      .sql`INSERT INTO pending (repo_id, full_name, status) VALUES (${repo.id}, ${repo.fullName}, ${repo.status})
        ON CONFLICT (repo_id) DO UPDATE SET full_name = excluded.full_name, status = excluded.status,
          attempts = 0, retry_at_ms = 0`;
  }

  /** A repository learned of by its own webhooks: recorded with `status` unless known. */
  registerRepo(repo: RepoRef, status: RepoStatus): void {
    this
      .sql`INSERT INTO repos (id, full_name, status) VALUES (${repo.id}, ${repo.fullName}, ${status})
      ON CONFLICT (id) DO UPDATE SET full_name = excluded.full_name`;
  }

  /** Transitions due at `nowMs` (their backoff over). */
  dueTransitions(nowMs: number): PendingTransition[] {
    return this.sql<{ repo_id: number; full_name: string; status: string; attempts: number }>`
      SELECT repo_id, full_name, status, attempts FROM pending
      WHERE retry_at_ms <= ${nowMs} ORDER BY repo_id`.map((r) => ({
      repoId: r.repo_id,
      fullName: r.full_name,
      status: r.status as RepoStatus,
      attempts: r.attempts,
    }));
  }

  /** Carried out: cleared, unless a newer transition replaced it meanwhile. */
  transitionDone(t: PendingTransition): void {
    this.sql`DELETE FROM pending WHERE repo_id = ${t.repoId} AND status = ${t.status}`;
  }

  transitionFailed(t: PendingTransition, attempts: number, retryAtMs: number): void {
    this.sql`UPDATE pending SET attempts = ${attempts}, retry_at_ms = ${retryAtMs}
      WHERE repo_id = ${t.repoId} AND status = ${t.status}`;
  }

  announceRemoval(repo: RepoRef, nowMs: number): void {
    this.sql`INSERT INTO confirm_removed (repo_id, full_name, received_ms)
      VALUES (${repo.id}, ${repo.fullName}, ${nowMs})
      ON CONFLICT (repo_id) DO UPDATE SET full_name = excluded.full_name,
        received_ms = excluded.received_ms`;
  }

  /** Announced removals due at `nowMs` (their backoff over). */
  dueRemovals(nowMs: number): AnnouncedRemoval[] {
    return this.sql<{ repo_id: number; full_name: string; received_ms: number; attempts: number }>`
      SELECT repo_id, full_name, received_ms, attempts FROM confirm_removed
      WHERE retry_at_ms <= ${nowMs} ORDER BY repo_id`.map((r) => ({
      repoId: r.repo_id,
      fullName: r.full_name,
      receivedMs: r.received_ms,
      attempts: r.attempts,
    }));
  }

  removalAnswered(repoId: number): void {
    this.sql`DELETE FROM confirm_removed WHERE repo_id = ${repoId}`;
  }

  clearRemovals(): void {
    this.sql`DELETE FROM confirm_removed`;
  }

  removalFailed(repoId: number, attempts: number, retryAtMs: number): void {
    this.sql`UPDATE confirm_removed SET attempts = ${attempts}, retry_at_ms = ${retryAtMs}
      WHERE repo_id = ${repoId}`;
  }

  /** The earliest time a transition or an announced removal is due, if any is recorded. */
  earliestDueMs(): number | null {
    const times = [
      this.sql<{ at: number | null }>`SELECT MIN(retry_at_ms) AS at FROM pending`[0]?.at,
      this.sql<{ at: number | null }>`SELECT MIN(retry_at_ms) AS at FROM confirm_removed`[0]?.at,
    ].filter((t): t is number => typeof t === "number");
    return times.length === 0 ? null : Math.min(...times);
  }

  /** Times of the content writes still inside the budget's history, oldest first. */
  recentWrites(nowMs: number, historyMs: number): number[] {
    this.sql`DELETE FROM writes WHERE at_ms <= ${nowMs - historyMs}`;
    return this.sql<{ at_ms: number }>`SELECT at_ms FROM writes ORDER BY at_ms`.map((r) => r.at_ms);
  }

  recordWrites(count: number, nowMs: number): void {
    for (let i = 0; i < count; i++) this.sql`INSERT INTO writes (at_ms) VALUES (${nowMs})`;
  }
}
