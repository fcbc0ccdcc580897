import { DurableObject } from "cloudflare:workers";
import {
  BUDGET_HISTORY_MS,
  type BudgetDecision,
  decideBudget,
} from "../../shared/budget/write-budget.ts";
import { GitHubApiError } from "../../shared/github/errors.ts";
import {
  type InstallationStatus,
  type LifecycleChange,
  lifecycleOutcome,
  type RepoRef,
  type RepoStatus,
  repoStatusFor,
} from "../../shared/ingest/lifecycle.ts";
import type { Env } from "../env.ts";
import { installationClient } from "../github-client.ts";
import { directory } from "./directory-object.ts";
import { Journal } from "./journal-store.ts";
import { migrate, type Sql, sqlTag } from "./sql.ts";

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
];

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
   * A deletion of the installation or a removal of repositories is only recorded: the alarm
   * asks GitHub first (`confirmRemovals`), since GitHub signs a delivery's body but not its id.
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

  /** A change as received: deletions and removals wait for GitHub's confirmation. */
  private record(installationId: number, change: LifecycleChange, nowMs: number): void {
    this.setMeta("installationId", String(installationId));
    if (change.kind === "deleted") {
      this.setMeta("confirmDeleted", String(nowMs));
      return;
    }
    if (change.kind === "repos-removed") {
      for (const repo of change.repos) {
        this.sql`INSERT INTO confirm_removed (repo_id, full_name, received_ms)
          VALUES (${repo.id}, ${repo.fullName}, ${nowMs})
          ON CONFLICT (repo_id) DO UPDATE SET full_name = excluded.full_name`;
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
          ON CONFLICT (repo_id) DO UPDATE SET full_name = excluded.full_name, status = excluded.status, attempts = 0`;
    }
  }

  /**
   * Asks GitHub about the removals webhooks announced, with the App's credentials: the
   * installation (`GET /app/installations/{id}`: 404 confirms its deletion) and each repository
   * said to be removed (`GET /repositories/{id}` with the installation's token: 404 or 410
   * confirms it no longer reaches it; 200 means it is still installed and nothing changes).
   * An answer that is neither stays recorded and is asked again.
   */
  private async confirmRemovals(installationId: number): Promise<boolean> {
    const deleted = this.meta("confirmDeleted");
    const removed = this.sql<{ repo_id: number; full_name: string }>`
      SELECT repo_id, full_name FROM confirm_removed ORDER BY repo_id`;
    if (deleted === undefined && removed.length === 0) return false;
    const client = installationClient(
      this.env,
      installationId,
      {
        get: (key) => this.tokens.get(key),
        set: (key, value) => {
          this.tokens.set(key, value);
        },
      },
      `confirm removals of installation ${installationId}`,
    );
    const gone = async (operation: string, route: string, params: Record<string, unknown>) => {
      try {
        await client.send({ operation, route, params, idempotent: true, redirect: "manual" });
        return false;
      } catch (error) {
        if (error instanceof GitHubApiError && error.kind === "not-found") return true;
        throw error;
      }
    };
    let retry = false;
    if (deleted !== undefined) {
      try {
        const confirmed = await gone(
          `confirm the deletion of installation ${installationId}`,
          "GET /app/installations/{installation_id}",
          { installation_id: installationId },
        );
        this.ctx.storage.transactionSync(() => {
          this.sql`DELETE FROM meta WHERE key = 'confirmDeleted'`;
          if (confirmed) this.applyChange({ kind: "deleted" });
        });
      } catch (error) {
        retry = true;
        console.error(`installation ${installationId}: confirming its deletion failed`, error);
      }
    }
    for (const row of removed) {
      try {
        const confirmed = await gone(
          `confirm the removal of ${row.full_name} from installation ${installationId}`,
          "GET /repositories/{repository_id}",
          { repository_id: row.repo_id },
        );
        this.ctx.storage.transactionSync(() => {
          this.sql`DELETE FROM confirm_removed WHERE repo_id = ${row.repo_id}`;
          if (confirmed) {
            this.applyChange({
              kind: "repos-removed",
              repos: [{ id: row.repo_id, fullName: row.full_name }],
            });
          }
        });
      } catch (error) {
        retry = true;
        console.error(
          `installation ${installationId}: confirming ${row.full_name}'s removal failed`,
          error,
        );
      }
    }
    return retry;
  }

  /** Carries out queued repository transitions: the RepoObject first, then its directory entry. */
  override async alarm(): Promise<void> {
    const installationId = Number(this.meta("installationId"));
    let retry = false;
    try {
      retry = await this.confirmRemovals(installationId);
      const pending = this.sql<{
        repo_id: number;
        full_name: string;
        status: string;
        attempts: number;
      }>`
        SELECT repo_id, full_name, status, attempts FROM pending ORDER BY repo_id`;
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
          retry = true;
          this.sql`UPDATE pending SET attempts = attempts + 1 WHERE repo_id = ${row.repo_id}`;
          console.error(
            `installation ${installationId}: repository ${row.full_name} transition failed`,
            error,
          );
        }
      }
    } finally {
      const left =
        this.sql`SELECT 1 FROM pending LIMIT 1`.length > 0 ||
        this.sql`SELECT 1 FROM confirm_removed LIMIT 1`.length > 0 ||
        this.meta("confirmDeleted") !== undefined;
      if (left) await this.ctx.storage.setAlarm(Date.now() + (retry ? 30_000 : 0));
    }
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
