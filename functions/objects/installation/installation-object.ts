import { DurableObject } from "cloudflare:workers";
import {
  askAgainAfterMs,
  decidePermits,
  type InstallProgress,
  installProgress,
  type PermitDecision,
} from "../../../shared/budget/reconcile-permits.ts";
import type { BudgetDecision } from "../../../shared/budget/write-budget.ts";
import { removalVerdict } from "../../../shared/ingest/confirm.ts";
import {
  type InstallationStatus,
  type LifecycleChange,
  lifecycleOutcome,
  type RepoRef,
  type RepoStatus,
  repoStatusFor,
} from "../../../shared/ingest/lifecycle.ts";
import type { ProjectItemNotice } from "../../../shared/queue/project-item.ts";
import { retryDelayMs } from "../../../shared/schedule/policy.ts";
import { githubClock } from "../../clock.ts";
import { type Env, MissingSettingError, numberSetting } from "../../env.ts";
import { installationClient } from "../../github-client.ts";
import { coveringInstallation, installationOnGitHub } from "../../installation-check.ts";
import { directory } from "../directory/directory-object.ts";
import { ownerObject } from "../owner/owner-object.ts";
import type { RepoIdentity } from "../repo/repo-store.ts";
import { InstallationStore, type PendingTransition } from "./installation-store.ts";
import type { PermitReport } from "./permits-store.ts";
import { deliverProjectNotices, receiveProjectItem } from "./project-items.ts";
import { reserveContentWrites, reserveDeferrableWrites } from "./write-budget.ts";

/** The answer to a repository asking for a permit to run a full reconcile. */
export type PermitAnswer =
  | { granted: true; leaseUntilMs: number }
  /** In line: `position` 1 is the next granted; ask again at `retryAtMs` unless told sooner. */
  | { granted: false; position: number; retryAtMs: number };

/** Where a repository stands in its installation's pacing, and the installation's progress. */
export interface Pacing {
  /** Its place in line while it waits for a permit (null: not waiting). */
  position: number | null;
  /** It holds a permit now. */
  holding: boolean;
  installation: InstallProgress;
}

/**
 * Repository transitions carried out at once by the alarm (each creates an object or two, and
 * its directory entries), between which the thread is left to the network (`networkTurn`).
 */
const TRANSITIONS_AT_ONCE = 5;

/**
 * Lets the runtime read the network before the next batch. In one workerd process (`wrangler
 * dev`, the test pool) every object shares one thread and calls between objects never leave it:
 * the runtime polls its sockets only when no object has work ready, so a chain of such calls
 * holds every request that arrives over the network (a webhook, a graph read, GitHub's answers
 * to running reconciles) until it ends. A timer's turn empties the queue. On Cloudflare the
 * objects are spread and this costs a timer tick.
 */
const networkTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** An installation change a webhook announced that waits for GitHub's word (`confirmInstallation`). */
type AnnouncedChange = "deleted" | "suspended" | "unsuspended";

/**
 * One per installation (named by its numeric id): lifecycle, its repositories, the write budget
 * that keeps content writes under GitHub's limits, the permits that pace its repositories' full
 * reconciles, and (in memory only) its installation token.
 */
export class InstallationObject extends DurableObject<Env> {
  private readonly store: InstallationStore;
  /** Installation tokens, in memory only: a raw token is never written to storage. */
  private readonly tokens = new Map<string, string>();
  /**
   * The clock of the permits and their budget: GitHub's rate-limit resets are GitHub's times,
   * so it is the one a test moves with the simulator's (functions/clock.ts).
   */
  private readonly now = githubClock.now;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new InstallationStore(ctx.storage);
  }

  status(): {
    installationId: number | null;
    status: InstallationStatus | null;
    account: string | null;
    repos: Array<RepoRef & { status: RepoStatus }>;
  } {
    const id = this.store.meta("installationId");
    return {
      installationId: id === undefined ? null : Number(id),
      status: this.store.status(),
      account: this.store.meta("account") ?? null,
      repos: this.store.repos(),
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
    const outcome = this.store.transaction(() => {
      const journal = this.store.journal;
      if (journal.hasDelivery(deliveryId)) return "duplicate" as const;
      journal.recordDelivery(deliveryId, nowMs);
      journal.pruneDeliveries(nowMs);
      this.record(installationId, change, nowMs);
      return "applied" as const;
    });
    if (outcome === "applied") {
      await this.withdrawOnReceipt(installationId, change, nowMs);
      await this.ctx.storage.setAlarm(nowMs);
    }
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
    this.store.transaction(() => this.record(installationId, change, nowMs));
    await this.withdrawOnReceipt(installationId, change, nowMs);
    await this.ctx.storage.setAlarm(nowMs);
  }

  /**
   * Removal fails closed for the org queue (spec 6.2): a repository whose removal (or whose
   * installation's deletion) was received leaves its owner's queue at once, while its data waits
   * for GitHub's confirmation; a denial or a later addition brings it back (`restoreToOwner`).
   */
  private async withdrawOnReceipt(
    installationId: number,
    change: LifecycleChange,
    nowMs: number,
  ): Promise<void> {
    const repos =
      change.kind === "repos-removed"
        ? change.repos
        : change.kind === "deleted"
          ? this.store.installedRepos()
          : [];
    const byOwner = new Map<
      string,
      Array<{ repoId: number; fullName: string; installationId: number }>
    >();
    for (const r of repos) {
      const owner = r.fullName.split("/")[0]!.toLowerCase();
      const list = byOwner.get(owner) ?? [];
      list.push({ repoId: r.id, fullName: r.fullName, installationId });
      byOwner.set(owner, list);
    }
    for (const [owner, list] of byOwner) {
      try {
        await ownerObject(this.env, owner).withdraw(list, nowMs);
      } catch (error) {
        // The repository's own object refuses org grants once the removal is applied.
        console.error(
          `installation ${installationId}: withdrawing from ${owner}'s queue failed`,
          error,
        );
      }
    }
  }

  private async restoreToOwner(repo: { repoId: number; fullName: string }): Promise<void> {
    try {
      await ownerObject(this.env, repo.fullName.split("/")[0]!).restore([repo.repoId]);
    } catch (error) {
      console.error(`restoring ${repo.fullName} to its owner's queue failed`, error);
    }
  }

  /**
   * A repository found its installation gone on GitHub (`GET /app/installations/{id}` with the
   * App's JWT answered 404): the deletion whose webhook was lost takes the same path as a
   * delivered one (confirmed again by the alarm, then applied).
   */
  async installationGone(installationId: number, nowMs: number): Promise<void> {
    this.store.transaction(() => this.record(installationId, { kind: "deleted" }, nowMs));
    await this.ctx.storage.setAlarm(nowMs);
  }

  /** A change as received: deletions, suspensions and removals wait for GitHub's confirmation. */
  private record(installationId: number, change: LifecycleChange, nowMs: number): void {
    this.store.setMeta("installationId", String(installationId));
    if (change.kind === "deleted" || change.kind === "suspended" || change.kind === "unsuspended") {
      // The latest announcement is what is asked about; a deletion is never replaced.
      if (this.store.meta("confirmChange") !== "deleted") {
        this.store.setMeta("confirmChange", change.kind);
      }
      this.store.setMeta("confirmReceived", String(nowMs));
      return;
    }
    if (change.kind === "repos-removed") {
      for (const repo of change.repos) this.store.announceRemoval(repo, nowMs);
      return;
    }
    this.applyChange(change);
  }

  /** Applies a (confirmed) lifecycle change: installation status, repositories, their transitions. */
  private applyChange(change: LifecycleChange): void {
    const current = this.store.status();
    // GitHub never reuses an installation id: once deleted, a late or replayed delivery of an
    // earlier event must not bring it (or its repositories) back.
    if (current === "deleted") return;
    const outcome = lifecycleOutcome(current, change, this.store.installedRepos());
    this.store.setMeta("status", outcome.status);
    if (change.kind === "created") this.store.setMeta("account", change.account);
    for (const repo of outcome.repos) this.store.setRepo(repo);
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
    const announced = this.store.meta("confirmChange") as AnnouncedChange | undefined;
    if (announced === undefined) return null;
    const received = this.store.meta("confirmReceived");
    const retryAtMs = Number(this.store.meta("confirmRetryAtMs") ?? 0);
    if (retryAtMs > nowMs) return retryAtMs;
    try {
      const answer = await installationOnGitHub(this.env, installationId);
      const verdict = removalVerdict(answer.status);
      if (verdict === "transferred") {
        throw new Error(`HTTP ${answer.status} says nothing about installation ${installationId}`);
      }
      // A deletion GitHub denies (replayed, or forged from a signed body): the repositories the
      // announcement withdrew from their owner's queue come back.
      if (announced === "deleted" && verdict !== "gone") {
        for (const r of this.store.installedRepos()) {
          await this.restoreToOwner({ repoId: r.id, fullName: r.fullName });
        }
      }
      this.store.transaction(() => {
        if (verdict === "gone") {
          this.store.clearRemovals();
          this.store.clearConfirmation();
          this.applyChange({ kind: "deleted" });
          return;
        }
        // A newer announcement arrived meanwhile: it is asked about next (this answer is older).
        if (
          this.store.meta("confirmChange") !== announced ||
          this.store.meta("confirmReceived") !== received
        )
          return;
        this.store.clearConfirmation();
        if (announced === "suspended" && answer.suspended) this.applyChange({ kind: "suspended" });
        if (announced === "unsuspended" && !answer.suspended) {
          this.applyChange({ kind: "unsuspended" });
        }
      });
      return null;
    } catch (error) {
      const attempts = Number(this.store.meta("confirmAttempts") ?? 0) + 1;
      const at = this.retryAt(attempts, error, nowMs);
      this.store.setMeta("confirmAttempts", String(attempts));
      this.store.setMeta("confirmRetryAtMs", String(at));
      console.error(
        `installation ${installationId}: confirming its ${announced} failed (attempt ${attempts}, retry in ${at - nowMs} ms)`,
        error,
      );
      return at;
    }
  }

  /**
   * Asks GitHub about each repository a webhook (or the cron) said was removed: which
   * installation covers it (`GET /repositories/{id}/installation` with the App's JWT). None, or
   * another one, confirms the removal; this one means it is still installed and nothing changes.
   * (A read with the installation's token cannot tell: any token reads a public repository.)
   */
  private async confirmRemovals(installationId: number, nowMs: number): Promise<void> {
    for (const row of this.store.dueRemovals(nowMs)) {
      try {
        const covering = await coveringInstallation(
          this.env,
          { id: row.repoId, fullName: row.fullName },
          `confirm the removal of ${row.fullName} from installation ${installationId}`,
        );
        this.store.transaction(() => {
          this.store.removalAnswered(row.repoId);
          if (covering?.id !== installationId) {
            this.applyChange({
              kind: "repos-removed",
              repos: [{ id: row.repoId, fullName: row.fullName }],
            });
          }
        });
        // Still this installation's: the withdrawal on receipt is undone.
        if (covering?.id === installationId) await this.restoreToOwner(row);
      } catch (error) {
        const attempts = row.attempts + 1;
        const at = this.retryAt(attempts, error, nowMs);
        this.store.removalFailed(row.repoId, attempts, at);
        console.error(
          `installation ${installationId}: confirming ${row.fullName}'s removal failed (attempt ${attempts}, retry in ${at - nowMs} ms)`,
          error,
        );
      }
    }
  }

  /**
   * A `projects_v2_item` delivery (no repository in it): kept for the alarm when a repository of
   * this installation ranks by its project, else ignored (project-items.ts).
   */
  async projectItem(
    installationId: number,
    deliveryId: string,
    notice: ProjectItemNotice,
    nowMs: number,
  ): Promise<"applied" | "duplicate" | "ignored"> {
    this.store.setMeta("installationId", String(installationId));
    const outcome = receiveProjectItem(this.store, deliveryId, notice, nowMs);
    if (outcome === "applied") await this.ctx.storage.setAlarm(nowMs);
    return outcome;
  }

  /** Repository `repoId` ranks by project `projectId` (its node id), or by none (null). */
  watchProject(repoId: number, projectId: string | null): void {
    this.store.transaction(() => this.store.projects.watch(repoId, projectId));
  }

  /** Carries out queued repository transitions: the RepoObject first, then its directory entry. */
  override async alarm(): Promise<void> {
    const installationId = Number(this.store.meta("installationId"));
    const nowMs = this.now();
    try {
      await this.confirmInstallation(installationId, nowMs);
      await this.confirmRemovals(installationId, nowMs);
      await deliverProjectNotices({
        env: this.env,
        store: this.store,
        client: () =>
          installationClient(
            this.env,
            installationId,
            { get: (k) => this.tokens.get(k), set: (k, v) => void this.tokens.set(k, v) },
            `resolve project items of installation ${installationId}`,
          ),
        nowMs,
        retryAt: (attempts, error) => this.retryAt(attempts, error, nowMs),
      });
      await this.tellGrants(nowMs);
      // A few at a time: each is a repository object (created on an installation) and a
      // directory write, so an organization's thousands of repositories are not carried out
      // one after another (at about 100 ms each) while their webhooks already arrive.
      const due = this.store.dueTransitions(nowMs);
      for (let i = 0; i < due.length; i += TRANSITIONS_AT_ONCE) {
        // Requests that arrived meanwhile are read first: without this turn, 1,000
        // repositories' creation held every webhook and graph read for its whole 30-50 s
        // under `wrangler dev` (issue 25).
        if (i > 0) await networkTurn();
        await this.transitions(due.slice(i, i + TRANSITIONS_AT_ONCE), installationId, nowMs);
      }
      // The repositories just installed wait in line: the first ones are told once all are
      // created, not between batches. In one workerd process a reconcile started meanwhile had
      // GitHub's answers read only between batches: a batch longer than the client's timeout
      // (1.5 s in the tests, under load) timed its requests out, each retry billed by GitHub
      // yet seen by no reading, and the ten first reconciles sent four times their requests and
      // spent a scaled-down window (issue 25). Elsewhere it costs the first reconciles the
      // creation's time (tens of seconds for 1,000 repositories).
      if (due.length > 0) await this.tellGrants(this.now());
    } finally {
      const next = this.nextAlarmMs();
      if (next !== null) await this.ctx.storage.setAlarm(next);
    }
  }

  /**
   * A batch of repository transitions: each RepoObject first, then the directory entries of
   * those it accepted in one write, then (for active ones) their owners' queues in one call
   * per owner. Batched: on a large installation these calls, one per repository, cost more
   * than creating the repositories' objects.
   */
  private async transitions(
    rows: PendingTransition[],
    installationId: number,
    nowMs: number,
  ): Promise<void> {
    const applied = await Promise.all(
      rows.map(async (row) => {
        try {
          return { row, accepted: await this.transitionRepo(row, installationId) };
        } catch (error) {
          this.transitionFailed(row, installationId, error, nowMs);
          return null;
        }
      }),
    );
    const done = applied.filter((a): a is NonNullable<typeof a> => a !== null);
    try {
      const accepted = done.flatMap((d) => (d.accepted ? [d.accepted] : []));
      if (accepted.length > 0) await directory(this.env).upsert(accepted, Date.now());
      const byOwner = new Map<string, number[]>();
      for (const a of accepted.filter((a) => a.status === "active")) {
        const owner = a.fullName.split("/")[0]!.toLowerCase();
        byOwner.set(owner, [...(byOwner.get(owner) ?? []), a.repoId]);
      }
      for (const [owner, repoIds] of byOwner) {
        try {
          await ownerObject(this.env, owner).restore(repoIds);
        } catch (error) {
          console.error(
            `restoring ${repoIds.length} repositories to ${owner}'s queue failed`,
            error,
          );
        }
      }
      // Only clear a row if no newer transition replaced it meanwhile.
      for (const d of done) this.store.transitionDone(d.row);
    } catch (error) {
      for (const d of done) this.transitionFailed(d.row, installationId, error, nowMs);
    }
  }

  /**
   * One repository's transition in its object; its identity if it accepted it. The directory
   * follows the repository's accepted outcome only: a transition the repository refused (it
   * belongs to another installation now) must not touch it.
   */
  private async transitionRepo(
    row: PendingTransition,
    installationId: number,
  ): Promise<RepoIdentity | null> {
    const repo = this.env.REPO.get(this.env.REPO.idFromName(String(row.repoId)));
    // A repository without a full reconcile behind it is put in line here, in the order it was
    // installed, and waits to be told (`permitGranted`) instead of asking: an organization's
    // thousands of repositories installed at once do not all ask this object at the same
    // moment (they did, and it was overloaded: issue 25).
    const paced = row.status === "active" && !this.store.permits.isReconciled(row.repoId);
    const outcome = await repo.setLifecycle(
      { repoId: row.repoId, fullName: row.fullName, installationId, status: row.status },
      { paced },
    );
    const accepted = outcome === "applied" ? ((await repo.identity()) ?? null) : null;
    if (paced && accepted?.status === "active") {
      this.store.transaction(() => this.store.permits.enqueue(row.repoId, this.now()));
    }
    return accepted;
  }

  private transitionFailed(
    row: PendingTransition,
    installationId: number,
    error: unknown,
    nowMs: number,
  ): void {
    const attempts = row.attempts + 1;
    const at = this.retryAt(attempts, error, nowMs);
    this.store.transitionFailed(row, attempts, at);
    console.error(
      `installation ${installationId}: repository ${row.fullName} transition failed (attempt ${attempts}, retry in ${at - nowMs} ms)`,
      error,
    );
  }

  /** The earliest time a recorded row is due (its backoff over), or null when none is left. */
  private nextAlarmMs(): number | null {
    const times = [
      this.store.earliestDueMs(),
      this.store.projects.earliestDueMs(),
      this.store.meta("confirmChange") !== undefined
        ? Number(this.store.meta("confirmRetryAtMs") ?? 0)
        : null,
      this.permitsDueMs(),
    ].filter((t): t is number => typeof t === "number");
    return times.length === 0 ? null : Math.max(this.now(), Math.min(...times));
  }

  /**
   * A repository learned of through its own webhooks (before or without the installation
   * event): recorded so lifecycle changes reach it. Returns the status it should have.
   */
  registerRepo(repo: RepoRef): RepoStatus {
    const repoStatus = repoStatusFor(this.store.status() ?? "active");
    this.store.registerRepo(repo, repoStatus);
    return this.store.repoStatus(repo.id) ?? repoStatus;
  }

  /** The token cache every GitHub client of this installation shares (see shared/github/auth). */
  tokenCacheGet(key: string): string | undefined {
    return this.tokens.get(key);
  }

  tokenCacheSet(key: string, value: string): void {
    this.tokens.set(key, value);
  }

  /**
   * Reserves `requested` content writes, all or none (a write of several calls, a fleet flush's
   * label renewal: part of it is no use). write-budget.ts.
   */
  reserveWrites(requested: number, nowMs = Date.now()): BudgetDecision {
    return reserveContentWrites(this.store, requested, nowMs, true);
  }

  /** Reserves up to `requested` content writes (a synchronous grant's releases). write-budget.ts. */
  reserveWritesUpTo(requested: number, nowMs = Date.now()): BudgetDecision {
    return reserveContentWrites(this.store, requested, nowMs, false);
  }

  /** Label writes the producer queued (they can wait). write-budget.ts. */
  reserveLabelWrites(requested: number, nowMs = this.now()): BudgetDecision {
    return reserveDeferrableWrites(this.store, requested, nowMs);
  }

  /**
   * A repository asks for a permit before a full reconcile (or a step of one), and holding one,
   * renews its lease with the same call. Repositories are granted in the order they first
   * asked, at most `PERMIT_BOUND` at a time, within the hourly budget less the webhooks'
   * reserve (shared/budget/reconcile-permits.ts). One that waits is told when its turn comes
   * (`RepoObject.permitGranted`, from the alarm) and asks again then.
   */
  async askPermit(repoId: number, nowMs = this.now()): Promise<PermitAnswer> {
    const answer = this.store.transaction((): PermitAnswer => {
      const permits = this.store.permits;
      permits.enqueue(repoId, nowMs);
      const settings = permits.settings();
      const own = permits.permit(repoId);
      if (own?.leaseUntilMs != null && own.leaseUntilMs > nowMs) {
        permits.renew(repoId, nowMs + settings.leaseMs);
      }
      this.decidePermits(nowMs, repoId);
      const held = permits.permit(repoId)?.leaseUntilMs;
      if (held != null) return { granted: true, leaseUntilMs: held };
      const position = permits.position(repoId, nowMs) ?? 1;
      // Told when granted; asking again later is the fallback if that word is lost, spread by
      // place in line so a long line does not ask again all at once.
      return {
        granted: false,
        position,
        retryAtMs: nowMs + askAgainAfterMs(repoId, position, settings),
      };
    });
    await this.armAlarm();
    return answer;
  }

  /** The same as asking: a holder's lease moves on; one that lost it is back in its place. */
  renewPermit(repoId: number, nowMs = this.now()): Promise<PermitAnswer> {
    return this.askPermit(repoId, nowMs);
  }

  /**
   * A repository gives its permit back (its full reconcile completed, failed, or is no longer
   * wanted), reporting what it spent and the last rate-limit reading it saw; the next in line
   * are granted and told.
   */
  async releasePermit(repoId: number, report: PermitReport, nowMs = this.now()): Promise<void> {
    this.store.transaction(() => {
      this.store.permits.release(repoId, report, nowMs);
      this.decidePermits(nowMs, null);
    });
    await this.armAlarm();
  }

  /** Where `repoId` stands in line, and the installation's progress (graph API, status page). */
  pacing(repoId: number | null, nowMs = this.now()): Pacing {
    const permits = this.store.permits;
    const settings = permits.settings();
    const state = permits.decisionState(settings.bound);
    const position = repoId === null ? null : permits.position(repoId, nowMs);
    const counts = permits.counts();
    const inFlight = permits.held(nowMs);
    return {
      position,
      holding: repoId !== null && permits.permit(repoId)?.leaseUntilMs != null && position === null,
      installation: installProgress(
        {
          reconciled: counts.reconciled,
          waiting: counts.waiting,
          inFlight,
          state,
          avgReconcileMs: permits.averageReconcileMs() ?? 0,
        },
        nowMs,
        settings,
      ),
    };
  }

  /** Decides the permits now and stores the outcome; new grants wait for the alarm to tell them. */
  private decidePermits(nowMs: number, asker: number | null): PermitDecision {
    const permits = this.store.permits;
    const settings = permits.settings();
    const decision = decidePermits(permits.decisionState(settings.bound), nowMs, settings);
    permits.apply(decision, asker);
    return decision;
  }

  /**
   * When the permits need the alarm: a grant to tell (or to make: a repository put in line with
   * a permit free) now, else when a lease ends or budget frees.
   */
  private permitsDueMs(): number | null {
    const permits = this.store.permits;
    const nowMs = this.now();
    if (permits.unnotified().length > 0) return nowMs;
    const settings = permits.settings();
    const decision = decidePermits(permits.decisionState(settings.bound), nowMs, settings);
    return decision.granted.length > 0 ? nowMs : decision.nextMs;
  }

  /**
   * Leases that ran out go back in line (their holders vanished: an evicted object), the next
   * in line are granted, and every holder not told yet is told (`permitGranted` schedules its
   * full reconcile now). A repository that is gone gives its permit back at once.
   */
  private async tellGrants(nowMs: number): Promise<void> {
    this.store.transaction(() => this.decidePermits(nowMs, null));
    const told = this.store.permits.unnotified();
    await Promise.all(
      told.map(async (repoId) => {
        try {
          const repo = this.env.REPO.get(this.env.REPO.idFromName(String(repoId)));
          const outcome = await repo.permitGranted();
          this.store.transaction(() => {
            if (outcome === "gone") {
              this.store.permits.drop(repoId);
              this.decidePermits(this.now(), null);
            } else this.store.permits.notified(repoId);
          });
        } catch (error) {
          // Not retried in a loop: the holder asks again by itself after a lease's time, and an
          // unused permit's lease runs out.
          this.store.permits.notified(repoId);
          console.error(`installation: telling repository ${repoId} of its permit failed`, error);
        }
      }),
    );
    // Those the drops above granted are told on the next run (the alarm is set for now).
  }

  private async armAlarm(): Promise<void> {
    const next = this.nextAlarmMs();
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }
}
