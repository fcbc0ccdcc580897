import { DurableObject } from "cloudflare:workers";
import {
  BUDGET_HISTORY_MS,
  type BudgetDecision,
  decideBudget,
} from "../../../shared/budget/write-budget.ts";
import { removalVerdict } from "../../../shared/ingest/confirm.ts";
import {
  type InstallationStatus,
  type LifecycleChange,
  lifecycleOutcome,
  type RepoRef,
  type RepoStatus,
  repoStatusFor,
} from "../../../shared/ingest/lifecycle.ts";
import { retryDelayMs } from "../../../shared/schedule/policy.ts";
import { type Env, MissingSettingError, numberSetting } from "../../env.ts";
import { coveringInstallation, installationOnGitHub } from "../../installation-check.ts";
import { directory } from "../directory/directory-object.ts";
import { Journal } from "../journal-store.ts";
import { migrate, type Sql, sqlTag } from "../sql.ts";

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
];

/** An installation change a webhook announced that waits for GitHub's word (`confirmInstallation`). */
type AnnouncedChange = "deleted" | "suspended" | "unsuspended";

/**
 * One per installation (named by its numeric id): lifecycle, its repositories, the write budget
 * that keeps content writes under GitHub's limits, and (in memory only) its installation token.
 */
export class InstallationObject extends DurableObject<Env> {
  private readonly sql: Sql;
  /** Delivery ids (this object keeps no audit log). */
  private readonly journal: Journal;
  /** Installation tokens, in memory only: a raw token is never written to storage. */
  private readonly tokens = new Map<string, string>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, MIGRATIONS);
    this.sql = sqlTag(ctx.storage.sql);
    this.journal = new Journal(this.sql);
  }

  private meta(key: string): string | undefined {
    return this.sql<{ value: string }>`SELECT value FROM meta WHERE key = ${key}`[0]?.value;
  }

  private setMeta(key: string, value: string): void {
    this
      .sql`INSERT INTO meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
  }

  status(): {
    installationId: number | null;
    status: InstallationStatus | null;
    account: string | null;
    repos: Array<RepoRef & { status: RepoStatus }>;
  } {
    const id = this.meta("installationId");
    return {
      installationId: id === undefined ? null : Number(id),
      status: (this.meta("status") as InstallationStatus | undefined) ?? null,
      account: this.meta("account") ?? null,
      repos: this.sql<{
        id: number;
        full_name: string;
        status: string;
      }>`SELECT id, full_name, status FROM repos ORDER BY id`.map((r) => ({
        id: r.id,
        fullName: r.full_name,
        status: r.status as RepoStatus,
      })),
    };
  }

  /**
   * Records a lifecycle change durably and queues the repository transitions it implies; the
   * alarm carries them out, so the webhook is acknowledged without waiting on other objects.
   * A deletion, suspension or unsuspension of the installation and a removal of repositories
   * are only recorded: the alarm asks GitHub first (`confirmInstallation`, `confirmRemovals`),
   * since GitHub signs a delivery's body but not its id or event name.
   */
  async lifecycle(
    installationId: number,
    deliveryId: string,
    change: LifecycleChange,
    nowMs: number,
  ): Promise<"applied" | "duplicate"> {
    const outcome = this.ctx.storage.transactionSync(() => {
      if (this.journal.hasDelivery(deliveryId)) return "duplicate" as const;
      this.journal.recordDelivery(deliveryId, nowMs);
      this.journal.pruneDeliveries(nowMs);
      this.record(installationId, change, nowMs);
      return "applied" as const;
    });
    if (outcome === "applied") await this.ctx.storage.setAlarm(nowMs);
    return outcome;
  }

  /**
   * The cron's installation check found GitHub disagreeing with what this repository holds (a
   * move, removal or addition whose webhooks were lost; functions/installation-check.ts): the
   * change goes the way its webhook would have, a removal confirmed with GitHub again.
   */
  async coverageChanged(
    installationId: number,
    change: Extract<LifecycleChange, { kind: "repos-added" | "repos-removed" }>,
    nowMs: number,
  ): Promise<void> {
    this.ctx.storage.transactionSync(() => this.record(installationId, change, nowMs));
    await this.ctx.storage.setAlarm(nowMs);
  }

  /**
   * A repository found its installation gone on GitHub (`GET /app/installations/{id}` with the
   * App's JWT answered 404): the deletion whose webhook was lost takes the same path as a
   * delivered one (confirmed again by the alarm, then applied).
   */
  async installationGone(installationId: number, nowMs: number): Promise<void> {
    this.ctx.storage.transactionSync(() => this.record(installationId, { kind: "deleted" }, nowMs));
    await this.ctx.storage.setAlarm(nowMs);
  }

  /** A change as received: deletions, suspensions and removals wait for GitHub's confirmation. */
  private record(installationId: number, change: LifecycleChange, nowMs: number): void {
    this.setMeta("installationId", String(installationId));
    if (change.kind === "deleted" || change.kind === "suspended" || change.kind === "unsuspended") {
      // The latest announcement is what is asked about; a deletion is never replaced.
      if (this.meta("confirmChange") !== "deleted") this.setMeta("confirmChange", change.kind);
      this.setMeta("confirmReceived", String(nowMs));
      return;
    }
    if (change.kind === "repos-removed") {
      for (const repo of change.repos) {
        this.sql`INSERT INTO confirm_removed (repo_id, full_name, received_ms)
          VALUES (${repo.id}, ${repo.fullName}, ${nowMs})
          ON CONFLICT (repo_id) DO UPDATE SET full_name = excluded.full_name,
            received_ms = excluded.received_ms`;
      }
      return;
    }
    this.applyChange(change);
  }

  /** Applies a (confirmed) lifecycle change: installation status, repositories, their transitions. */
  private applyChange(change: LifecycleChange): void {
    const current = (this.meta("status") as InstallationStatus | undefined) ?? null;
    // GitHub never reuses an installation id: once deleted, a late or replayed delivery of an
    // earlier event must not bring it (or its repositories) back.
    if (current === "deleted") return;
    const installed = this.sql<{ id: number; full_name: string }>`
        SELECT id, full_name FROM repos WHERE status <> 'removed' ORDER BY id`.map((r) => ({
      id: r.id,
      fullName: r.full_name,
    }));
    const outcome = lifecycleOutcome(current, change, installed);
    this.setMeta("status", outcome.status);
    if (change.kind === "created") this.setMeta("account", change.account);
    for (const repo of outcome.repos) {
      this
        .sql`INSERT INTO repos (id, full_name, status) VALUES (${repo.id}, ${repo.fullName}, ${repo.status})
          ON CONFLICT (id) DO UPDATE SET full_name = excluded.full_name, status = excluded.status`;
      this
        .sql`INSERT INTO pending (repo_id, full_name, status) VALUES (${repo.id}, ${repo.fullName}, ${repo.status})
          ON CONFLICT (repo_id) DO UPDATE SET full_name = excluded.full_name, status = excluded.status,
            attempts = 0, retry_at_ms = 0`;
    }
  }

  /**
   * When a row that failed `attempts` times is tried again: doubling backoff from
   * `SCHEDULE_RETRY_BASE_MS` (default 5 s), at most 15 minutes, never sooner than GitHub's
   * `retry-after` (shared/schedule/policy.ts, as the RepoObject's schedules).
   */
  private retryAt(attempts: number, error: unknown, nowMs: number): number {
    const base = numberSetting(this.env.SCHEDULE_RETRY_BASE_MS);
    return (
      nowMs +
      retryDelayMs(
        attempts,
        {
          missingSetting: error instanceof MissingSettingError,
          retryAfterMs: (error as { retryAfterMs?: number } | null)?.retryAfterMs,
        },
        base !== undefined
          ? { baseMs: base, capMs: 15 * 60_000, missingSettingMs: 10 * 60_000 }
          : undefined,
      )
    );
  }

  /**
   * Asks GitHub about the installation change a webhook announced (`GET /app/installations/{id}`
   * with the App's JWT, redirects not followed, read by `removalVerdict`): 404 or 410 confirms a
   * deletion (whatever was announced: a lost `deleted` ends here too); a suspension is applied
   * only when `suspended_at` is set, an unsuspension only when it is null; anything else
   * changes nothing. Returns when to ask again after a failure, or null.
   */
  private async confirmInstallation(installationId: number, nowMs: number): Promise<number | null> {
    const announced = this.meta("confirmChange") as AnnouncedChange | undefined;
    if (announced === undefined) return null;
    const received = this.meta("confirmReceived");
    const retryAtMs = Number(this.meta("confirmRetryAtMs") ?? 0);
    if (retryAtMs > nowMs) return retryAtMs;
    try {
      const answer = await installationOnGitHub(this.env, installationId);
      const verdict = removalVerdict(answer.status);
      if (verdict === "transferred") {
        throw new Error(`HTTP ${answer.status} says nothing about installation ${installationId}`);
      }
      this.ctx.storage.transactionSync(() => {
        if (verdict === "gone") {
          this.sql`DELETE FROM confirm_removed`;
          this.clearConfirmation();
          this.applyChange({ kind: "deleted" });
          return;
        }
        // A newer announcement arrived meanwhile: it is asked about next (this answer is older).
        if (this.meta("confirmChange") !== announced || this.meta("confirmReceived") !== received)
          return;
        this.clearConfirmation();
        if (announced === "suspended" && answer.suspended) this.applyChange({ kind: "suspended" });
        if (announced === "unsuspended" && !answer.suspended) {
          this.applyChange({ kind: "unsuspended" });
        }
      });
      return null;
    } catch (error) {
      const attempts = Number(this.meta("confirmAttempts") ?? 0) + 1;
      const at = this.retryAt(attempts, error, nowMs);
      this.setMeta("confirmAttempts", String(attempts));
      this.setMeta("confirmRetryAtMs", String(at));
      console.error(
        `installation ${installationId}: confirming its ${announced} failed (attempt ${attempts}, retry in ${at - nowMs} ms)`,
        error,
      );
      return at;
    }
  }

  private clearConfirmation(): void {
    this
      .sql`DELETE FROM meta WHERE key IN ('confirmChange', 'confirmReceived', 'confirmAttempts', 'confirmRetryAtMs')`;
  }

  /**
   * Asks GitHub about each repository a webhook (or the cron) said was removed: which
   * installation covers it (`GET /repositories/{id}/installation` with the App's JWT). None, or
   * another one, confirms the removal; this one means it is still installed and nothing changes.
   * (A read with the installation's token cannot tell: any token reads a public repository.)
   */
  private async confirmRemovals(installationId: number, nowMs: number): Promise<void> {
    const removed = this.sql<{
      repo_id: number;
      full_name: string;
      received_ms: number;
      attempts: number;
    }>`SELECT repo_id, full_name, received_ms, attempts FROM confirm_removed
      WHERE retry_at_ms <= ${nowMs} ORDER BY repo_id`;
    for (const row of removed) {
      try {
        const covering = await coveringInstallation(
          this.env,
          { id: row.repo_id, fullName: row.full_name },
          `confirm the removal of ${row.full_name} from installation ${installationId}`,
        );
        this.ctx.storage.transactionSync(() => {
          this.sql`DELETE FROM confirm_removed WHERE repo_id = ${row.repo_id}`;
          if (covering?.id !== installationId) {
            this.applyChange({
              kind: "repos-removed",
              repos: [{ id: row.repo_id, fullName: row.full_name }],
            });
          }
        });
      } catch (error) {
        const attempts = row.attempts + 1;
        const at = this.retryAt(attempts, error, nowMs);
        this.sql`UPDATE confirm_removed SET attempts = ${attempts}, retry_at_ms = ${at}
          WHERE repo_id = ${row.repo_id}`;
        console.error(
          `installation ${installationId}: confirming ${row.full_name}'s removal failed (attempt ${attempts}, retry in ${at - nowMs} ms)`,
          error,
        );
      }
    }
  }

  /** Carries out queued repository transitions: the RepoObject first, then its directory entry. */
  override async alarm(): Promise<void> {
    const installationId = Number(this.meta("installationId"));
    const nowMs = Date.now();
    try {
      await this.confirmInstallation(installationId, nowMs);
      await this.confirmRemovals(installationId, nowMs);
      const pending = this.sql<{
        repo_id: number;
        full_name: string;
        status: string;
        attempts: number;
      }>`
        SELECT repo_id, full_name, status, attempts FROM pending
        WHERE retry_at_ms <= ${nowMs} ORDER BY repo_id`;
      for (const row of pending) {
        const status = row.status as RepoStatus;
        try {
          const repo = this.env.REPO.get(this.env.REPO.idFromName(String(row.repo_id)));
          const outcome = await repo.setLifecycle({
            repoId: row.repo_id,
            fullName: row.full_name,
            installationId,
            status,
          });
          // The directory follows the repository's accepted outcome only: a transition the
          // repository refused (it belongs to another installation now) must not touch it.
          const accepted = outcome === "applied" ? await repo.identity() : null;
          if (accepted) await directory(this.env).upsert([accepted], Date.now());
          // Only clear the row if no newer transition replaced it meanwhile.
          this.sql`DELETE FROM pending WHERE repo_id = ${row.repo_id} AND status = ${row.status}`;
        } catch (error) {
          const attempts = row.attempts + 1;
          const at = this.retryAt(attempts, error, nowMs);
          this.sql`UPDATE pending SET attempts = ${attempts}, retry_at_ms = ${at}
            WHERE repo_id = ${row.repo_id} AND status = ${row.status}`;
          console.error(
            `installation ${installationId}: repository ${row.full_name} transition failed (attempt ${attempts}, retry in ${at - nowMs} ms)`,
            error,
          );
        }
      }
    } finally {
      const next = this.nextAlarmMs();
      if (next !== null) await this.ctx.storage.setAlarm(next);
    }
  }

  /** The earliest time a recorded row is due (its backoff over), or null when none is left. */
  private nextAlarmMs(): number | null {
    const times = [
      this.sql<{ at: number | null }>`SELECT MIN(retry_at_ms) AS at FROM pending`[0]?.at,
      this.sql<{ at: number | null }>`SELECT MIN(retry_at_ms) AS at FROM confirm_removed`[0]?.at,
      this.meta("confirmChange") !== undefined ? Number(this.meta("confirmRetryAtMs") ?? 0) : null,
    ].filter((t): t is number => typeof t === "number");
    return times.length === 0 ? null : Math.max(Date.now(), Math.min(...times));
  }

  /**
   * A repository learned of through its own webhooks (before or without the installation
   * event): recorded so lifecycle changes reach it. Returns the status it should have.
   */
  registerRepo(repo: RepoRef): RepoStatus {
    const status = (this.meta("status") as InstallationStatus | undefined) ?? "active";
    const repoStatus = repoStatusFor(status);
    this
      .sql`INSERT INTO repos (id, full_name, status) VALUES (${repo.id}, ${repo.fullName}, ${repoStatus})
      ON CONFLICT (id) DO UPDATE SET full_name = excluded.full_name`;
    return (
      (this.sql<{ status: string }>`SELECT status FROM repos WHERE id = ${repo.id}`[0]?.status as
        | RepoStatus
        | undefined) ?? repoStatus
    );
  }

  /** The token cache every GitHub client of this installation shares (see shared/github/auth). */
  tokenCacheGet(key: string): string | undefined {
    return this.tokens.get(key);
  }

  tokenCacheSet(key: string, value: string): void {
    this.tokens.set(key, value);
  }

  /**
   * Reserves up to `requested` content writes under the per-installation budget. Granted
   * writes are recorded now; the rest must wait until `retryAtMs` (they are not dropped).
   */
  reserveWrites(requested: number, nowMs = Date.now()): BudgetDecision {
    return this.ctx.storage.transactionSync(() => {
      this.sql`DELETE FROM writes WHERE at_ms <= ${nowMs - BUDGET_HISTORY_MS}`;
      const past = this.sql<{ at_ms: number }>`SELECT at_ms FROM writes ORDER BY at_ms`.map(
        (r) => r.at_ms,
      );
      const decision = decideBudget(past, requested, nowMs);
      for (let i = 0; i < decision.granted; i++)
        this.sql`INSERT INTO writes (at_ms) VALUES (${nowMs})`;
      return decision;
    });
  }
}
