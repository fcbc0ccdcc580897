import { DurableObject } from "cloudflare:workers";
import type { KeyVerdict } from "../../../shared/auth/keys.ts";
import type { KeySummary } from "../../../shared/auth/schemas.ts";
import { htmlBaseFor } from "../../../shared/claims/rules.ts";
import type { GitHubClient } from "../../../shared/github/client.ts";
import { GitHubApiError, RepositoryMismatchError } from "../../../shared/github/errors.ts";
import { MAX_PAGE_SIZE, splitRepo } from "../../../shared/github/fetch-snapshot.ts";
import { collaboratorPermission } from "../../../shared/github/permissions.ts";
import { DAY_MS, formatInstant, HOUR_MS, MINUTE_MS } from "../../../shared/graph/time.ts";
import { permissionGrantsWrite } from "../../../shared/idd/trust.ts";
import { removalVerdict } from "../../../shared/ingest/confirm.ts";
import type { GraphEvent } from "../../../shared/ingest/events.ts";
import type { RepositoryAction } from "../../../shared/ingest/from-webhook.ts";
import {
  type InstallationCheckAction,
  installationCheckAction,
} from "../../../shared/schedule/installation-check.ts";
import {
  producerDueMs,
  producerWindowMs,
  reconcileKind,
  retryDelayMs,
  scanRequestWaitMs,
} from "../../../shared/schedule/policy.ts";
import { retentionCutoffs } from "../../../shared/schedule/retention.ts";
import { type Env, MissingSettingError, numberSetting } from "../../env.ts";
import { installationClient } from "../../github-client.ts";
import {
  askInstallation,
  coveringInstallation,
  installationCovers,
  installationOnGitHub,
} from "../../installation-check.ts";
import { directory, type RepoStatus } from "../directory/directory-object.ts";
import { refreshConfig } from "./config-sync.ts";
import {
  type CrossRepoDelivery,
  deliverNotices,
  receiveNotices,
  recordStateChanges,
} from "./cross-repo.ts";
import { type FencedOp, fencedWrite } from "./fenced-write.ts";
import {
  type ClaimRequest,
  type FenceRequest,
  Fleet,
  type FleetResult,
  type QueueRequest,
  type ReleaseOutcome,
} from "./fleet.ts";
import { flushFleetWrites } from "./fleet-writes.ts";
import { type GraphPageRequest, GraphScans, scanOverview, scanPage } from "./graph-scans.ts";
import { KeysStore, type NewKey } from "./keys-store.ts";
import { rereadMarkerComments } from "./marker-reread.ts";
import { Producer } from "./producer.ts";
import {
  DEFAULT_FULL_RECONCILE,
  type FullReconcileSettings,
  reconcileFull,
  reconcileIncremental,
} from "./reconcile-fetch.ts";
import type { ReconcileProgress } from "./reconcile-progress-store.ts";
import { type RepoIdentity, RepoStore } from "./repo-store.ts";
import type { DueSchedule, ScheduleName, Schedules } from "./schedules-store.ts";
import { type StatusView, statusView } from "./status-view.ts";

/** How old a graph API scan may be while a full reconcile is in progress (see `readerScan`). */
const RECONCILING_SCAN_MAX_AGE_MS = 5_000;

export interface Delivery {
  id: string;
  event: string;
  receivedMs: number;
}

export type IngestOutcome = "applied" | "unchanged" | "duplicate" | "ignored";

/** Learn first, then write: reconciles before the outbox and the producer in one alarm run. */
/** The graph API lists this many parked writes at most (the most recent), and counts them all. */
const PARKED_WRITES_SHOWN = 100;

/** Lets the object take other requests (webhook acknowledgements) before going on. */
const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

const HANDLER_ORDER: Record<ScheduleName, number> = {
  sync: 0,
  config: 1,
  "reconcile-full": 2,
  reconcile: 3,
  claims: 4,
  trust: 5,
  outbox: 6,
  producer: 7,
  fleet: 8,
  prune: 9,
  "cross-repo": 10,
};

/**
 * One per repository (named by GitHub's numeric repository id): the graph, its watermarks,
 * and every schedule that keeps it and the `agent:ready` labels true.
 */
export class RepoObject extends DurableObject<Env> {
  readonly store: RepoStore;
  readonly schedules: Schedules;
  readonly producer: Producer;
  /** The scan of the stored graph, kept since its last change (graph API and producer share it). */
  readonly scans: GraphScans;
  readonly fleet: Fleet;
  /** The alarm run in progress: a second trigger joins it instead of running alongside. */
  private alarmRun: Promise<void> | null = null;
  /** When this instance last began a producer run (the debounce window; null after a restart). */
  private lastProducerRunMs: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new RepoStore(ctx.storage);
    this.schedules = this.store.schedules;
    this.fleet = new Fleet(this.store, this.store.claims, this.schedules, {
      writeDelayMs: () => this.envMs("FLEET_WRITE_DELAY_MS", 2_000),
      htmlBase: () => htmlBaseFor(this.env.GITHUB_API_URL ?? "https://api.github.com"),
    });
    this.scans = new GraphScans(this.store);
    this.producer = new Producer(this.store, this.fleet, this.scans);
    // A run cut short leaves leased schedules behind: this instance is new, so none of them is
    // running; they run again after the retry backoff (a full reconcile resumes from its cursor).
    void ctx.blockConcurrencyWhile(() => {
      const base = numberSetting(this.env.SCHEDULE_RETRY_BASE_MS);
      const policy =
        base !== undefined
          ? { baseMs: base, capMs: 15 * MINUTE_MS, missingSettingMs: 10 * MINUTE_MS }
          : undefined;
      this.schedules.releaseLeases(Date.now(), (attempts) =>
        retryDelayMs(attempts, { missingSetting: false }, policy),
      );
      return this.schedules.rearm();
    });
  }

  private installation() {
    const identity = this.store.identity();
    if (!identity) throw new Error("the repository's installation is not known yet");
    return this.installationObject(identity.installationId);
  }

  private installationObject(installationId: number) {
    return this.env.INSTALLATION.get(this.env.INSTALLATION.idFromName(String(installationId)));
  }

  /**
   * Whether installation `installationId` covers this repository now, asked by id with the
   * App's JWT (`GET /repositories/{id}/installation`, functions/installation-check.ts). A read
   * with that installation's token would not tell: any installation token reads a public
   * repository. A repository belongs to one account and so to at most one installation.
   */
  private covers(installationId: number, repo: { id: number; fullName: string }): Promise<boolean> {
    return installationCovers(this.env, installationId, repo);
  }

  /** A client for this repository's installation; tokens live in the InstallationObject's memory. */
  private client(operation: string): GitHubClient {
    const identity = this.store.identity();
    if (!identity) throw new Error(`${operation}: the repository's installation is not known yet`);
    const installation = this.installation();
    return installationClient(
      this.env,
      identity.installationId,
      {
        get: (key) => installation.tokenCacheGet(key),
        set: (key, value) => installation.tokenCacheSet(key, value),
      },
      operation,
      // Every request about this repository goes by its id, never by its (reusable) name.
      { id: identity.repoId, fullName: identity.fullName },
    );
  }

  /** Archived on GitHub: read-only, so no writes are planned or made (the graph API says so). */
  private archived(): boolean {
    return this.store.meta.get("repository")?.archived === true;
  }

  /**
   * First asks GitHub which installation covers the repository (by id, with the App's JWT: a
   * read with the installation's token cannot tell, any token reads a public repository). None
   * means deleted or no longer installed: the repository is removed, unless the installation
   * itself is gone (`GET /app/installations/{id}` 404), which takes the installation's deletion
   * path. Another installation: the repository moves there (`adoptCandidate`). Then reads the
   * repository by id (`GET /repositories/{id}`): its current name (a rename or a transfer),
   * archived state and visibility. A webhook never changes these by itself; it only asks for
   * this read. The directory follows only a transition this object applied.
   */
  private async checkRepository(identity: RepoIdentity): Promise<void> {
    const generation = this.store.generation();
    const ref = { id: identity.repoId, fullName: identity.fullName };
    const covering = await coveringInstallation(this.env, ref);
    if (covering !== null && covering.id !== identity.installationId) {
      if (!this.store.stillActive(generation)) return;
      this.store.meta.set("installationCandidate", covering.id);
      await this.adoptCandidate(identity, Date.now());
      return;
    }
    if (covering === null) {
      const installation = await installationOnGitHub(this.env, identity.installationId);
      if (!this.store.stillActive(generation)) return;
      if (removalVerdict(installation.status) === "gone") {
        // A lost `installation.deleted`: the installation's deletion path removes every
        // repository of it, this one included.
        await this.installationObject(identity.installationId).installationGone(
          identity.installationId,
          Date.now(),
        );
        return;
      }
      this.store.audit("repository-gone", { repoId: identity.repoId }, Date.now());
      // The object decides first; the directory follows only what it applied.
      if ((await this.setLifecycle({ ...identity, status: "removed" })) === "applied") {
        await directory(this.env).upsert([this.store.identity()!], Date.now());
      }
      return;
    }
    const client = this.client(`read repository ${identity.repoId} (${identity.fullName}) by id`);
    const repo = (
      await client.send<{ full_name: string; archived?: boolean; private?: boolean }>({
        operation: `read repository ${identity.repoId} (${identity.fullName}) by id`,
        route: "GET /repositories/{repository_id}",
        params: { repository_id: identity.repoId },
        idempotent: true,
      })
    ).data;
    const nowMs = Date.now();
    let renamed: RepoIdentity | null = null;
    let resumed = false;
    this.store.transaction(() => {
      if (!this.store.stillActive(generation)) return;
      const current = this.store.identity()!;
      if (current.fullName !== repo.full_name) {
        this.store.audit("renamed", { from: current.fullName, to: repo.full_name }, nowMs);
        renamed = { ...current, fullName: repo.full_name };
        this.store.setIdentity(renamed);
      }
      const before = this.store.meta.get("repository");
      const archived = repo.archived === true;
      if (before?.archived !== archived || before?.private !== (repo.private ?? null)) {
        this.store.audit("repository", { archived, private: repo.private ?? null }, nowMs);
      }
      this.store.meta.set("repository", {
        archived,
        private: repo.private ?? null,
        checkedAt: formatInstant(nowMs),
      });
      if (before?.archived === true && !archived) resumed = true;
    });
    if (renamed) {
      const { repoId, fullName } = renamed as RepoIdentity;
      // The installation (lifecycle) and the directory (routes, the cron) follow the new name.
      await this.installation().registerRepo({ id: repoId, fullName });
      await directory(this.env).upsert([renamed], nowMs);
    }
    if (resumed) {
      // Unarchived: plan and write again.
      this.schedules.at("producer", nowMs);
      this.schedules.at("fleet", nowMs);
    }
  }

  private debounceMs(): number {
    return this.envMs("PRODUCER_DEBOUNCE_MS", 2_000);
  }

  /** When the producer should run for a change learned at `atMs` (shared/schedule/policy.ts). */
  private producerDue(atMs: number): number {
    // Closes learned past the producer watermark are kicks waiting to be materialized.
    const kicksOwed =
      (this.store.meta.get("closedSeq") ?? 0) > this.store.watermarks().producer.seq;
    return producerDueMs(
      atMs,
      this.lastProducerRunMs,
      producerWindowMs(this.debounceMs(), kicksOwed),
    );
  }

  /** Issues a page and pages an alarm run of the full reconcile (settings, else the defaults). */
  private fullReconcileSettings(): FullReconcileSettings {
    const pageSize = numberSetting(this.env.RECONCILE_PAGE_SIZE);
    const pagesPerRun = numberSetting(this.env.RECONCILE_PAGES_PER_RUN);
    return {
      pageSize: Math.min(
        MAX_PAGE_SIZE,
        Math.max(1, Math.floor(pageSize ?? DEFAULT_FULL_RECONCILE.pageSize)),
      ),
      pagesPerRun: Math.max(1, Math.floor(pagesPerRun ?? DEFAULT_FULL_RECONCILE.pagesPerRun)),
    };
  }

  private envMs(key: "PRODUCER_DEBOUNCE_MS" | "FLEET_WRITE_DELAY_MS", fallback: number): number {
    return numberSetting(this.env[key], { allowZero: true }) ?? fallback;
  }

  /** Starts watching: learn the whole graph, prune delivery ids daily, kick only recent closes. */
  private activate(nowMs: number): void {
    this.store.setWatchingSince(
      formatInstant(nowMs - this.store.config().kicks.windowHours * HOUR_MS),
    );
    this.schedules.at("reconcile-full", nowMs);
    this.schedules.ensure("prune", nowMs + DAY_MS);
    // Back from a suspension: claims may have expired meanwhile and fleet writes may be owed.
    this.schedules.at("claims", nowMs);
    this.schedules.at("fleet", nowMs);
  }

  /** Installation lifecycle reached this repository (from InstallationObject). */
  async setLifecycle(identity: RepoIdentity): Promise<"applied" | "ignored"> {
    const before = this.store.identity();
    // A repository moved to another installation: the old one's suspension or removal is not
    // about it any more (its activation by the new one is).
    if (
      before &&
      identity.status !== "active" &&
      before.installationId !== identity.installationId
    ) {
      return "ignored";
    }
    // Another installation's activation: a move, or a late or replayed event of a former
    // installation. Only GitHub can tell: accepted if that installation covers it now.
    if (
      before &&
      identity.status === "active" &&
      before.installationId !== identity.installationId &&
      !(await this.covers(identity.installationId, {
        id: identity.repoId,
        fullName: identity.fullName,
      }))
    ) {
      this.store.audit(
        "installation-refused",
        { installation: identity.installationId, current: before.installationId },
        Date.now(),
      );
      return "ignored";
    }
    const nowMs = Date.now();
    this.store.transaction(() => {
      if (identity.status !== "active") {
        // Work in flight (a fetch, a write) must not land after this: see `stillActive`. Queued
        // writes belong to a plan of a graph that may be stale when (if) it comes back.
        this.store.bumpGeneration();
        this.store.dropProducerQueue();
        this.schedules.clear();
      } else if (before?.status !== "active") {
        this.activate(nowMs);
      }
      this.store.audit("lifecycle", { from: before?.status ?? null, to: identity.status }, nowMs);
      // Removed: every stored row goes, this audit entry too (see `wipe` for what stays).
      if (identity.status === "removed") this.wipe();
      // The name in a lifecycle payload is a hint (a replayed `added` carries an old one): the
      // stored name stays, and `sync` reads the repository by id to learn the real one.
      const renamed = before !== undefined && before.fullName !== identity.fullName;
      this.store.setIdentity(renamed ? { ...identity, fullName: before.fullName } : identity);
      if (renamed && identity.status === "active") this.schedules.at("sync", nowMs);
    });
    await this.schedules.rearm();
    return "applied";
  }

  /**
   * Applies one webhook delivery's events atomically: a delivery seen before changes nothing,
   * and a failure leaves no partial state. Never calls GitHub (this is the acknowledgement path).
   */
  async ingest(
    delivery: Delivery,
    repo: { id: number; fullName: string; installationId: number },
    events: GraphEvent[],
    extra: { repositoryAction?: RepositoryAction; confirmIssueRemoved?: number } = {},
  ): Promise<IngestOutcome> {
    const { repositoryAction, confirmIssueRemoved } = extra;
    const outcome = this.store.transaction((): IngestOutcome | "moved" => {
      if (this.store.hasDelivery(delivery.id)) {
        this.store.count("deliveriesDuplicate");
        return "duplicate";
      }
      let identity = this.store.identity();
      if (identity && identity.installationId !== repo.installationId) {
        // An event of another installation: the repository moved (and its `added` has not
        // arrived), or a late or replayed event of a former installation. Nothing is applied;
        // `sync` asks GitHub whether that installation covers it now and, if so, moves it there
        // (a full reconcile then learns what this event said).
        this.store.meta.set("installationCandidate", repo.installationId);
        this.schedules.at("sync", delivery.receivedMs);
        this.store.audit(
          "webhook-other-installation",
          { delivery: delivery.id, installation: repo.installationId },
          delivery.receivedMs,
        );
        return "moved";
      }
      if (identity?.status === "removed" || identity?.status === "suspended") return "ignored";
      // A deletion of a repository never seen says nothing worth keeping.
      if (!identity && repositoryAction === "deleted") return "ignored";
      if (!identity) {
        // Events can outrun the installation event; they prove the App is installed here. The
        // directory and the installation learn of the repository by the `sync` schedule.
        identity = {
          repoId: repo.id,
          fullName: repo.fullName,
          installationId: repo.installationId,
          status: "active",
        };
        this.store.setIdentity(identity);
        this.activate(delivery.receivedMs);
        this.schedules.at("sync", delivery.receivedMs);
      } else {
        // Another name in a payload is a hint, not a fact (a replayed delivery carries an old
        // name): the name changes only when GitHub, asked by id, says so (`sync`).
        if (identity.fullName !== repo.fullName) this.schedules.at("sync", delivery.receivedMs);
      }
      this.store.recordDelivery(delivery.id, delivery.receivedMs);
      if (repositoryAction !== undefined || confirmIssueRemoved !== undefined) {
        // Destructive or identity-changing claims: recorded now, applied by `sync` once GitHub,
        // asked by id, confirms them.
        if (confirmIssueRemoved !== undefined) {
          const pending = this.store.meta.get("pendingIssueRemovals") ?? [];
          if (!pending.includes(confirmIssueRemoved)) {
            this.store.meta.set("pendingIssueRemovals", [...pending, confirmIssueRemoved]);
          }
        }
        this.store.count("deliveriesApplied");
        this.store.audit(
          "webhook",
          {
            delivery: delivery.id,
            event: delivery.event,
            ...(repositoryAction ? { action: repositoryAction } : {}),
            ...(confirmIssueRemoved ? { toConfirm: { issueRemoved: confirmIssueRemoved } } : {}),
          },
          delivery.receivedMs,
        );
        this.schedules.at("sync", delivery.receivedMs);
        return "applied";
      }
      // A label renamed or deleted is a hint, not a fact: it carries no time to order it against
      // issue events, and a replayed one would take a hold or needs-human label off every issue.
      // Stored labels are not rewritten (the producer and the fleet queue keep them); a full
      // read, now, learns what GitHub says.
      const isHint = (e: GraphEvent) => e.type === "label-renamed" || e.type === "label-deleted";
      const hints = events.filter(isHint);
      const facts = hints.length === 0 ? events : events.filter((e) => !isHint(e));
      const { changes, graphChanged, stateChanges } = this.store.applyEvents(facts);
      // Closes and reopens here are told to the installation's other repositories (cross-repo.ts).
      recordStateChanges(this.store, this.schedules, stateChanges, delivery.receivedMs);
      this.store.updateWatermarks({ lastEventAt: formatInstant(delivery.receivedMs) });
      if (events.some((e) => e.type === "config-changed"))
        this.schedules.at("config", delivery.receivedMs);
      if (hints.length > 0) {
        this.store.meta.set("fullReconcileRestartMs", delivery.receivedMs);
        this.schedules.at("reconcile-full", delivery.receivedMs);
      }
      this.store.count("deliveriesApplied");
      if (changes.length === 0 && hints.length === 0) return "unchanged";
      this.store.audit(
        "webhook",
        {
          delivery: delivery.id,
          event: delivery.event,
          changes,
          ...(hints.length > 0 ? { toConfirm: { labels: hints } } : {}),
        },
        delivery.receivedMs,
      );
      if (graphChanged) this.schedules.at("producer", this.producerDue(delivery.receivedMs));
      return "applied";
    });
    if (outcome === "moved") {
      await this.schedules.rearm();
      return "ignored";
    }
    if (outcome === "applied" || outcome === "unchanged") await this.schedules.rearm();
    return outcome;
  }

  /**
   * Scan output of the stored graph (spec 3.3) plus the watermarks (the read API): `blocked`,
   * `ready` and `kicks` cut to their first `limit` items (`pages` has each list's total and next
   * cursor; `graphPage` serves the rest). Kicks are those of the closes learned since the
   * producer watermark (spec 3.2), the causes the producer plans with: what it will do next, not
   * what a time window would show. Served from the scan kept since the last graph change.
   */
  async graph(nowMs = Date.now(), machine?: string, limit?: number) {
    const scan = await this.readerScan(nowMs);
    const config = this.store.config();
    const watermarks = this.store.watermarks();
    const result = scanOverview(scan, nowMs, config.kicks.windowHours, machine || undefined, limit);
    return {
      ...result,
      watermarks,
      /** The full reconcile in progress (null when none is): pages done, issues seen, run id. */
      reconcile: this.store.reconcileProgress(),
      /**
       * Label writes set aside after they kept failing (the 100 most recent; the count says how
       * many there are); planned again after a full reconcile.
       */
      parkedWrites: this.producer.parked(PARKED_WRITES_SHOWN),
      parkedWritesCount: this.producer.parkedCount(),
      deliveries: {
        applied: this.store.counter("deliveriesApplied"),
        duplicate: this.store.counter("deliveriesDuplicate"),
      },
      config: { status: this.store.configStatus(), effective: config },
      /** The repository as GitHub last answered for its id; `writes` says why none are made. */
      repository: {
        ...(this.store.meta.get("repository") ?? {
          archived: false,
          private: null,
          checkedAt: null,
        }),
        writes: this.archived() ? ("paused: the repository is archived" as const) : ("on" as const),
      },
    };
  }

  /**
   * The scan the graph API reads. While a full reconcile streams pages in, every page voids the
   * kept scan; a scan up to `RECONCILING_SCAN_MAX_AGE_MS` old is shown instead of a new one per
   * request, so polling readers cannot starve the reconcile (the producer always plans fresh).
   */
  private async readerScan(nowMs: number) {
    if (this.store.reconcileProgress() !== null) {
      const recent = this.scans.recent(nowMs, RECONCILING_SCAN_MAX_AGE_MS);
      if (recent !== null) return recent;
    }
    await this.store.prepareGraph(pause);
    await this.scans.prepare(nowMs, pause);
    return this.scans.current(nowMs);
  }

  /** One page of one long list of the graph scan (`GET .../graph?list=`). */
  async graphPage(
    request: Required<Pick<GraphPageRequest, "list">> & GraphPageRequest,
    nowMs = Date.now(),
    machine?: string,
  ) {
    return scanPage(
      await this.readerScan(nowMs),
      nowMs,
      machine || undefined,
      request.list,
      request.cursor,
      request.limit,
    );
  }

  identity(): RepoIdentity | null {
    return this.store.identity() ?? null;
  }

  auditLog(limit = 100) {
    return this.store.auditLog(limit);
  }

  /** Cron entry: reconcile now (fully when a day has passed); keeps the daily prune alive. */
  /**
   * `POST /v1/.../scan`: an incremental reconcile now (a full one when a day has passed), at
   * most once a minute per repository.
   */
  async requestScan(nowMs = Date.now()): Promise<FleetResult> {
    const inactive = this.inactive();
    if (inactive) return inactive;
    const wait = scanRequestWaitMs(this.store.meta.get("scanRequestedMs") ?? null, nowMs);
    if (wait !== null) {
      const seconds = Math.ceil(wait / 1000);
      return {
        status: 429,
        body: {
          error: "rate-limited",
          message: `a reconcile was requested less than a minute ago; retry in ${seconds} s`,
        },
        headers: { "retry-after": String(seconds) },
      };
    }
    const kind = reconcileKind(this.store.watermarks().lastFullReconcileAt, nowMs);
    this.store.transaction(() => {
      this.store.meta.set("scanRequestedMs", nowMs);
      this.schedules.at(kind, nowMs);
      this.store.audit("scan-requested", { kind }, nowMs);
    });
    await this.schedules.rearm();
    return { status: 202, body: { scheduled: kind, at: formatInstant(nowMs) } };
  }

  async armReconcile(nowMs = Date.now()): Promise<boolean> {
    const identity = this.store.identity();
    if (identity?.status !== "active") return false;
    this.schedules.at(reconcileKind(this.store.watermarks().lastFullReconcileAt, nowMs), nowMs);
    this.schedules.ensure("prune", nowMs + DAY_MS);
    await this.schedules.rearm();
    return true;
  }

  /**
   * Cron entry, once a day per repository (shared/schedule/installation-check.ts): asks GitHub
   * which installation covers this repository and, where that differs from what this object or
   * the directory holds, starts the installation transition its lost webhook would have. The
   * decision is made on the state read after GitHub answered.
   */
  async checkInstallation(): Promise<InstallationCheckAction["kind"] | null> {
    const before = this.store.identity();
    if (!before) return null;
    const answer = await askInstallation(
      this.env,
      { id: before.repoId, fullName: before.fullName },
      before,
      (installationId) => {
        const installation = this.installationObject(installationId);
        return {
          get: (key) => installation.tokenCacheGet(key),
          set: (key, value) => installation.tokenCacheSet(key, value),
        };
      },
    );
    const identity = this.store.identity()!;
    const action = installationCheckAction(
      identity,
      await directory(this.env).get(identity.repoId),
      answer,
    );
    const nowMs = Date.now();
    // A removed repository keeps no audit log (see `wipe`).
    if (action.kind !== "none" && identity.status !== "removed") {
      this.store.audit("installation-check", { answer, action }, nowMs);
    }
    const ref = { id: identity.repoId, fullName: identity.fullName };
    switch (action.kind) {
      case "directory":
        await directory(this.env).upsert([identity], nowMs);
        break;
      case "removed":
        await this.installationObject(action.installationId).coverageChanged(
          action.installationId,
          { kind: "repos-removed", repos: [ref] },
          nowMs,
        );
        break;
      case "added":
        await this.installationObject(action.installationId).coverageChanged(
          action.installationId,
          { kind: "repos-added", repos: [{ ...ref, fullName: action.fullName }] },
          nowMs,
        );
        break;
    }
    return action.kind;
  }

  override async alarm(): Promise<void> {
    // The runtime's alarm is spent now, even if this call joins a run already in progress.
    this.schedules.fired();
    this.alarmRun ??= this.runDueSchedules().finally(() => {
      this.alarmRun = null;
    });
    return this.alarmRun;
  }

  private async runDueSchedules(): Promise<void> {
    try {
      const due = this.schedules
        .takeDue(Date.now())
        .sort((a, b) => HANDLER_ORDER[a.name] - HANDLER_ORDER[b.name]);
      for (const schedule of due) {
        try {
          await this.runSchedule(schedule.name);
          this.schedules.complete(schedule);
        } catch (error) {
          if (error instanceof RepositoryMismatchError) this.mismatch(error);
          this.failed(schedule, error);
        }
      }
    } finally {
      await this.schedules.rearm();
    }
  }

  /**
   * An installation other than the repository's sent an event about it (see `ingest`): if
   * GitHub says that installation covers the repository now, the repository moves there (with
   * the status that installation gives it), the directory follows, and a full reconcile learns
   * what the events it ignored meanwhile said. True when it moved.
   */
  private async adoptCandidate(identity: RepoIdentity, nowMs: number): Promise<boolean> {
    const candidate = this.store.meta.get("installationCandidate");
    if (candidate === undefined) return false;
    const clear = () => this.store.meta.delete("installationCandidate");
    if (candidate === identity.installationId) {
      clear();
      return false;
    }
    if (!(await this.covers(candidate, { id: identity.repoId, fullName: identity.fullName }))) {
      clear();
      this.store.audit("installation-refused", { installation: candidate }, nowMs);
      return false;
    }
    const status = await this.installationObject(candidate).registerRepo({
      id: identity.repoId,
      fullName: identity.fullName,
    });
    clear();
    const moved = { ...identity, installationId: candidate, status };
    if ((await this.setLifecycle(moved)) !== "applied") return false;
    const accepted = this.store.identity()!;
    await directory(this.env).upsert([accepted], Date.now());
    if (accepted.status === "active") {
      this.schedules.at("reconcile-full", Date.now());
      this.schedules.at("sync", Date.now());
    }
    return true;
  }

  /**
   * Issues a webhook said were deleted or transferred away, asked about one by one (by
   * repository id, redirects not followed): 301 means transferred, 404 or 410 gone, and then the
   * issue is removed as of the answer's `Date`; 200 means it is still here and nothing changes.
   */
  private async confirmIssueRemovals(): Promise<void> {
    const pending = this.store.meta.get("pendingIssueRemovals") ?? [];
    if (pending.length === 0) return;
    const identity = this.store.identity()!;
    const generation = this.store.generation();
    const client = this.client(`confirm issue removals in ${identity.fullName}`);
    const { owner, name: repo } = splitRepo(identity.fullName);
    for (const number of pending) {
      let status: number;
      let date: string | undefined;
      try {
        const res = await client.send({
          operation: `confirm the removal of ${identity.fullName}#${number}`,
          route: "GET /repos/{owner}/{repo}/issues/{issue_number}",
          params: { owner, repo, issue_number: number },
          idempotent: true,
          redirect: "manual",
        });
        status = res.status;
        date = res.headers.date;
      } catch (error) {
        if (!(error instanceof GitHubApiError) || error.kind !== "not-found") throw error;
        status = error.status ?? 404;
        date = error.responseDate;
      }
      const verdict = removalVerdict(status);
      const nowMs = Date.now();
      this.store.transaction(() => {
        if (!this.store.stillActive(generation)) return;
        const left = (this.store.meta.get("pendingIssueRemovals") ?? []).filter(
          (n) => n !== number,
        );
        this.store.meta.set("pendingIssueRemovals", left);
        if (verdict === "here") {
          this.store.audit("removal-denied", { issue: number, status }, nowMs);
          return;
        }
        const atMs = date && !Number.isNaN(Date.parse(date)) ? Date.parse(date) : nowMs;
        const { changes, graphChanged } = this.store.applyEvents([
          { type: "issue-removed", number, at: formatInstant(Math.floor(atMs / 1000) * 1000) },
        ]);
        this.store.audit("removal-confirmed", { issue: number, verdict, status, changes }, nowMs);
        if (graphChanged) this.schedules.at("producer", this.producerDue(nowMs));
      });
    }
  }

  /**
   * A read by name answered for another repository (renamed or deleted, its name reused): work
   * in flight must not land and queued writes go (their plan may be about the other one), until
   * `sync` has read the repository again by id.
   */
  private mismatch(error: RepositoryMismatchError): void {
    const nowMs = Date.now();
    this.store.transaction(() => {
      this.store.bumpGeneration();
      this.store.dropProducerQueue();
      this.store.audit(
        "repository-mismatch",
        { name: error.fullName, expected: error.expectedId, found: error.foundId },
        nowMs,
      );
      this.schedules.at("sync", nowMs);
    });
  }

  /** A failed schedule is retried with backoff; the audit log names what failed and why. */
  private failed(schedule: DueSchedule, error: unknown): void {
    const nowMs = Date.now();
    // Suspended or removed while the handler ran: nothing to retry.
    if (this.store.identity()?.status !== "active") return;
    const attempts = schedule.attempts + 1;
    const base = numberSetting(this.env.SCHEDULE_RETRY_BASE_MS);
    const delay = retryDelayMs(
      attempts,
      {
        missingSetting: error instanceof MissingSettingError,
        retryAfterMs: (error as { retryAfterMs?: number }).retryAfterMs,
      },
      base !== undefined
        ? { baseMs: base, capMs: 15 * MINUTE_MS, missingSettingMs: 10 * MINUTE_MS }
        : undefined,
    );
    this.schedules.retry(schedule, nowMs + delay);
    const message = error instanceof Error ? error.message : String(error);
    this.store.audit(
      "error",
      { schedule: schedule.name, attempts, retryInMs: delay, error: message },
      nowMs,
    );
    console.error(
      `${this.store.identity()?.fullName ?? "repository"}: ${schedule.name} failed: ${message}`,
    );
  }

  private async runSchedule(name: ScheduleName): Promise<void> {
    const nowMs = Date.now();
    const identity = this.store.identity();
    if (!identity) return;
    // A removed or suspended repository still answers whether another installation took it.
    if (identity.status !== "active") {
      if (name === "sync") await this.adoptCandidate(identity, nowMs);
      return;
    }
    switch (name) {
      case "sync": {
        if (await this.adoptCandidate(identity, nowMs)) return;
        // The directory (name → id, for routes and the cron) and the installation (for
        // lifecycle) must know every repository this object serves.
        const status = await this.installation().registerRepo({
          id: identity.repoId,
          fullName: identity.fullName,
        });
        if (status !== "active") {
          // The directory follows the outcome this object accepted, never the request.
          if ((await this.setLifecycle({ ...identity, status })) === "applied") {
            await directory(this.env).upsert([this.store.identity()!], nowMs);
          }
          return;
        }
        await directory(this.env).upsert([identity], nowMs);
        await this.checkRepository(identity);
        await this.confirmIssueRemovals();
        return;
      }
      case "config": {
        const outcome = await refreshConfig(
          this.store,
          this.client(`read the config of ${identity.fullName}`),
          nowMs,
        );
        // New label names or queue mode: re-read the graph (label histories depend on the
        // names) and let the producer act on the new rules.
        if (outcome === "updated" || outcome === "removed")
          this.schedules.at("reconcile-full", Date.now());
        return;
      }
      case "reconcile-full":
      case "reconcile": {
        const client = this.client(`reconcile ${identity.fullName}`);
        // The config first (a free 304 when unchanged): its label names shape what is fetched.
        // A full run in progress goes on with the names it began with (a change restarts it).
        const inProgress = this.store.reconcileRuns.current();
        const continuing = inProgress?.generation === this.store.generation();
        if (name === "reconcile-full" && !continuing) {
          try {
            await refreshConfig(this.store, client, nowMs);
          } catch (error) {
            // Reading the config must not block learning the graph (a missing Contents
            // permission, an outage): the last good config stands; the `config` schedule retries.
            const message = error instanceof Error ? error.message : String(error);
            this.store.audit("config", { outcome: "unreadable", error: message }, Date.now());
            this.schedules.at("config", Date.now() + 15 * 60_000);
          }
        }
        const reconcile = name === "reconcile-full" ? reconcileFull : reconcileIncremental;
        const outcome = await reconcile(this.store, client, Date.now, this.fullReconcileSettings());
        if (outcome === null) return; // the repository stopped being active meanwhile
        if (outcome.kind === "full-step") {
          // A bounded share of the pages per alarm run: the next share in the next run, so the
          // producer and the other schedules get their turn in between.
          this.schedules.at("reconcile-full", Date.now());
          // What a page corrected may unblock something, once the producer plans at all (it
          // plans nothing before the first full reconcile completes).
          if (outcome.changed && this.store.watermarks().lastFullReconcileAt !== null) {
            this.schedules.at("producer", this.producerDue(Date.now()));
          }
          return;
        }
        // A full read also re-reads the comments of issues whose IDD claims matter (own client:
        // its requests are counted apart from the graph fetch's).
        const markers =
          outcome.kind === "full"
            ? await rereadMarkerComments(
                this.store,
                this.fleet.claims,
                this.client(`re-read marker comments of ${identity.fullName}`),
                Date.now,
              )
            : null;
        this.store.audit(
          "reconcile",
          {
            kind: outcome.kind,
            requests: outcome.requests,
            corrected: outcome.corrections,
            ...(outcome.correctionCount > outcome.corrections.length
              ? { correctedCount: outcome.correctionCount }
              : {}),
            unavailable: outcome.unavailable,
            ...(outcome.run ? { run: outcome.run } : {}),
            ...(markers ? { markers } : {}),
          },
          Date.now(),
        );
        // After the first full read the producer may act at last; after others, if they changed anything.
        if (outcome.kind === "full" || outcome.corrections.length > 0) {
          this.schedules.at("producer", this.producerDue(Date.now()));
        }
        return;
      }
      case "producer": {
        this.lastProducerRunMs = nowMs;
        if (this.archived()) return; // read-only on GitHub: nothing to plan for
        // After a start, the graph is read from the tables a chunk at a time, webhooks between.
        await this.store.prepareGraph(pause);
        // The scan is made in steps too; the plan below reads it (unless a change voided it).
        await this.scans.prepare(nowMs, pause);
        this.producer.plan(nowMs);
        // The queue view is a second analysis: made in steps too, webhooks between.
        await this.fleet.prepareQueueView(nowMs, pause);
        // Notices a stuck label taken off by hand and asks for whatever fleet writes it implies.
        this.fleet.queueView(nowMs);
        if (this.producer.pending().length > 0) await this.flushOutbox();
        return;
      }
      case "outbox":
        if (this.archived()) return;
        await this.flushOutbox();
        return;
      case "claims":
        this.fleet.runExpiry(nowMs);
        return;
      case "fleet":
        if (this.archived()) return;
        await flushFleetWrites(this.fleet, {
          client: () => this.client(`apply the fleet writes of ${identity.fullName}`),
          installation: this.installation(),
          fullName: () => this.store.identity()?.fullName ?? identity.fullName,
          schedules: this.schedules,
          labels: () => this.store.config().labels,
          stillActive: (generation) => this.store.stillActive(generation),
          generation: this.store.generation(),
        });
        return;
      case "trust":
        await this.checkMarkerAuthors(identity.fullName, nowMs);
        return;
      case "prune":
        this.prune(nowMs);
        this.schedules.at("prune", nowMs + DAY_MS);
        return;
      case "cross-repo":
        await deliverNotices(this.store, identity, this.env, (repoId) =>
          this.env.REPO.get(this.env.REPO.idFromName(String(repoId))),
        );
        return;
    }
  }

  /**
   * The daily prune: every table to its bound (shared/schedule/retention.ts; the table of bounds
   * is in docs/worker.md). Each store prunes its own tables.
   */
  prune(nowMs = Date.now()): void {
    const cutoffs = retentionCutoffs(nowMs);
    this.store.transaction(() => {
      this.store.prune(cutoffs);
      this.fleet.claims.prune(cutoffs);
      this.fleetKeys.prune(cutoffs.fleetKeysMs);
    });
  }

  /**
   * Uninstalled (or the repository removed from the installation): deletes every stored row of
   * the repository, audit and deliveries included, but the fencing counter (`fence`: fences never
   * go backwards, even across a reinstall) and the `identity` and `generation` meta rows (what
   * says "removed", and what work begun before checks). Every table must be wiped here: the
   * retention test lists them all.
   */
  private wipe(): void {
    this.store.wipe();
    this.fleet.claims.wipe();
    this.fleetKeys.wipe();
    this.schedules.clear();
  }

  /** Sends queued label writes, each within the installation's write budget. */
  private async flushOutbox(): Promise<void> {
    if (this.producer.pending().length === 0) return;
    const client = this.client(`apply the agent:ready plan of ${this.store.identity()?.fullName}`);
    const installation = this.installation();
    const result = await this.producer.flush(client, () => installation.reserveWrites(1), Date.now);
    // Suspended, removed or replaced meanwhile: the run's kicks are planned again later.
    if (result.stopped) return;
    // Retried with the schedule's backoff; after MAX_WRITE_ATTEMPTS the write is parked.
    if (result.failed) throw result.failed;
    if (result.left > 0) {
      // Over budget (or stopped): the writes wait for room, they are not dropped.
      this.schedules.at("outbox", result.retryAtMs ?? Date.now() + 60_000);
    } else {
      // The run is complete; plan again for whatever changed while it was writing.
      this.schedules.at("producer", Date.now());
    }
  }

  // --- fleet API (spec 6.4) ----------------------------------------------------------------

  /** Fleet calls on a repository that is not active answer like an unknown one. */
  private inactive(): FleetResult | null {
    if (this.store.identity()?.status === "active") return null;
    return {
      status: 404,
      body: { error: "not-found", message: "the repository is not installed" },
    };
  }

  private async fleetCall(
    run: () => FleetResult,
    viewAt: number | null = null,
  ): Promise<FleetResult> {
    if (this.inactive() === null) {
      await this.store.prepareGraph(pause);
      // The queue and a grant read the queue view synchronously: it is made ahead, in steps.
      if (viewAt !== null) await this.fleet.prepareQueueView(viewAt, pause);
    }
    const result = this.inactive() ?? run();
    await this.schedules.rearm();
    return result;
  }

  /** The claimable issues for one caller (named so: `queue` is a Durable Object handler's name). */
  workQueue(request: QueueRequest, nowMs = Date.now()): Promise<FleetResult> {
    return this.fleetCall(() => this.fleet.queue(request, nowMs), nowMs);
  }

  /** Claims issue `number`, or the queue's first available issue when `number` is null. */
  claim(number: number | null, request: ClaimRequest, nowMs = Date.now()): Promise<FleetResult> {
    return this.fleetCall(() => this.fleet.grant(number, request, nowMs), nowMs);
  }

  heartbeat(number: number, request: FenceRequest, nowMs = Date.now()): Promise<FleetResult> {
    return this.fleetCall(() => this.fleet.heartbeat(number, request, nowMs));
  }

  release(
    number: number,
    request: FenceRequest & { outcome: ReleaseOutcome; note?: string },
    nowMs = Date.now(),
  ): Promise<FleetResult> {
    return this.fleetCall(() => this.fleet.release(number, request, nowMs));
  }

  liveClaims(nowMs = Date.now()): FleetResult {
    return this.inactive() ?? this.fleet.listClaims(nowMs);
  }

  /** A GitHub write on behalf of a claim holder, done only while its fence is current. */
  async write(
    number: number,
    request: FenceRequest,
    op: FencedOp,
    nowMs = Date.now(),
  ): Promise<FleetResult> {
    const start = Date.now();
    const inactive = this.inactive();
    if (inactive) return inactive;
    if (this.archived()) {
      return {
        status: 409,
        body: { error: "archived", message: "the repository is archived: it is read-only" },
      };
    }
    // The name is read when the write goes out, not now: a rename may land during the budget wait.
    const fullName = () => this.store.identity()!.fullName;
    return fencedWrite(this.fleet, this.store, {
      number,
      request,
      op,
      fullName,
      client: () => this.client(`write to ${fullName()}#${number} for a claim`),
      installation: this.installation(),
      now: () => nowMs + (Date.now() - start),
    });
  }

  /**
   * Another repository of the installation says one of its issues closed or reopened: applied
   * where a blocker edge here names it, then the producer runs (functions/objects/cross-repo.ts).
   */
  async externalStates(delivery: CrossRepoDelivery): Promise<{ applied: number }> {
    const result = receiveNotices(this.store, this.schedules, delivery, Date.now(), (atMs) =>
      this.producerDue(atMs),
    );
    await this.schedules.rearm();
    return result;
  }

  /** Asks GitHub whether marker authors of unknown standing have write access (spec 5). */
  private async checkMarkerAuthors(fullName: string, nowMs: number): Promise<void> {
    const unknown = this.fleet.queueView(nowMs).unknownAuthors;
    if (unknown.length === 0) return;
    const client = this.client(`check marker authors' access to ${fullName}`);
    for (const login of unknown.slice(0, 20)) {
      const permission = await collaboratorPermission(client, fullName, login);
      this.store.transaction(() => {
        this.fleet.claims.setTrust(login, permissionGrantsWrite(permission), Date.now());
        this.store.noteChange();
      });
    }
    if (unknown.length > 20) this.schedules.at("trust", Date.now());
  }

  /** Identity, schedules, queued writes, and whether an alarm run is in progress right now. */
  status(): {
    identity: RepoIdentity | null;
    status: RepoStatus | null;
    schedules: ReturnType<Schedules["list"]>;
    pendingWrites: number;
    running: boolean;
    /** The full reconcile in progress (pages done, issues seen, run id); null when none is. */
    reconcile: ReconcileProgress | null;
  } {
    const identity = this.store.identity() ?? null;
    return {
      identity,
      status: identity?.status ?? null,
      schedules: this.schedules.list(),
      pendingWrites: this.producer.pending().length,
      running: this.alarmRun !== null,
      reconcile: this.store.reconcileProgress(),
    };
  }

  /** The full reconcile in progress, for the status page; null when none is. */
  reconcileProgress(): ReconcileProgress | null {
    return this.store.reconcileProgress();
  }

  // --- fleet keys ---
  // Spec 6.4. Only hashes reach this object: the route mints a key, shows it once and passes
  // its SHA-256; `fleet_keys` is read and written by keys-store.ts alone.
  private fleetKeysStore: KeysStore | null = null;
  private get fleetKeys(): KeysStore {
    this.fleetKeysStore ??= new KeysStore(this.ctx.storage);
    return this.fleetKeysStore;
  }

  createKey(key: NewKey): KeySummary {
    return this.store.transaction(() => {
      const created = this.fleetKeys.create(key);
      this.store.audit(
        "key-created",
        { id: key.id, name: key.name, by: key.createdBy },
        key.createdMs,
      );
      return created;
    });
  }

  listKeys(): KeySummary[] {
    return this.fleetKeys.list();
  }

  /** False for an unknown id; revoking twice keeps the first revocation. */
  revokeKey(id: string, nowMs = Date.now()): boolean {
    return this.store.transaction(() => {
      const revoked = this.fleetKeys.revoke(id, nowMs);
      if (revoked) this.store.audit("key-revoked", { id }, nowMs);
      return revoked;
    });
  }

  /** The key whose SHA-256 is `hash`, if valid at `nowMs` (its use recorded once a minute). */
  verifyKey(hash: string, nowMs = Date.now()): KeyVerdict {
    return this.fleetKeys.verify(hash, nowMs);
  }
  // --- end of fleet keys ---

  /** The status page's read beyond `graph()` (functions/objects/status-view.ts). */
  async statusView(nowMs = Date.now()): Promise<StatusView> {
    // What it reads is made ahead in steps (webhooks between), as for the graph API and grants.
    await this.store.prepareGraph(pause);
    await this.scans.prepare(nowMs, pause);
    await this.fleet.prepareQueueView(nowMs, pause);
    const view = statusView(this.store, this.fleet, this.scans, nowMs);
    // Reading the queue may notice a stuck label taken off by hand and owe writes for it.
    await this.schedules.rearm();
    return view;
  }
}
