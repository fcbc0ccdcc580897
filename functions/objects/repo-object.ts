import { DurableObject } from "cloudflare:workers";
import type { GitHubClient } from "../../shared/github/client.ts";
import { scan } from "../../shared/graph/scan.ts";
import { formatInstant } from "../../shared/graph/time.ts";
import type { GraphEvent } from "../../shared/ingest/events.ts";
import { DAY_MS, reconcileKind, retryDelayMs } from "../../shared/schedule/policy.ts";
import { type Env, MissingSettingError } from "../env.ts";
import { installationClient } from "../github-client.ts";
import { refreshConfig } from "./config-sync.ts";
import { directory, type RepoStatus } from "./directory-object.ts";
import { Producer } from "./producer.ts";
import { reconcileFull, reconcileIncremental } from "./reconcile.ts";
import { type RepoIdentity, RepoStore } from "./repo-store.ts";
import { type DueSchedule, type ScheduleName, Schedules } from "./schedules.ts";

export interface Delivery {
  id: string;
  event: string;
  receivedMs: number;
}

export type IngestOutcome = "applied" | "unchanged" | "duplicate" | "ignored";

/** Learn first, then write: reconciles before the outbox and the producer in one alarm run. */
const HANDLER_ORDER: Record<ScheduleName, number> = {
  sync: 0,
  config: 1,
  "reconcile-full": 2,
  reconcile: 3,
  outbox: 4,
  producer: 5,
  prune: 6,
};

/**
 * One per repository (named by GitHub's numeric repository id): the graph, its watermarks,
 * and every schedule that keeps it and the `agent:ready` labels true.
 */
export class RepoObject extends DurableObject<Env> {
  readonly store: RepoStore;
  readonly schedules: Schedules;
  readonly producer: Producer;
  /** The alarm run in progress: a second trigger joins it instead of running alongside. */
  private alarmRun: Promise<void> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new RepoStore(ctx.storage);
    this.schedules = new Schedules(this.store.sql, ctx.storage);
    this.producer = new Producer(this.store);
    // A run cut short leaves leased schedules behind; make sure an alarm will find them.
    void ctx.blockConcurrencyWhile(() => this.schedules.rearm());
  }

  private installation() {
    const identity = this.store.identity();
    if (!identity) throw new Error("the repository's installation is not known yet");
    return this.env.INSTALLATION.get(
      this.env.INSTALLATION.idFromName(String(identity.installationId)),
    );
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
    );
  }

  private debounceMs(): number {
    const configured = Number(this.env.PRODUCER_DEBOUNCE_MS);
    return Number.isFinite(configured) && configured >= 0 ? configured : 2_000;
  }

  /** Starts watching: learn the whole graph, prune delivery ids daily, kick only recent closes. */
  private activate(nowMs: number): void {
    this.store.setWatchingSince(
      formatInstant(nowMs - this.store.config().kicks.windowHours * 3_600_000),
    );
    this.schedules.at("reconcile-full", nowMs);
    this.schedules.ensure("prune", nowMs + DAY_MS);
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
    const nowMs = Date.now();
    this.store.transaction(() => {
      if (identity.status !== "active") {
        // Work in flight (a fetch, a write) must not land after this: see `stillActive`. Queued
        // writes belong to a plan of a graph that may be stale when (if) it comes back.
        this.store.bumpGeneration();
        this.store.dropProducerQueue();
        if (identity.status === "removed") this.store.wipe();
        this.schedules.clear();
      } else if (before?.status !== "active") {
        this.activate(nowMs);
      }
      this.store.setIdentity(identity);
      this.store.audit("lifecycle", { from: before?.status ?? null, to: identity.status }, nowMs);
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
  ): Promise<IngestOutcome> {
    const outcome = this.store.transaction((): IngestOutcome => {
      if (this.store.hasDelivery(delivery.id)) {
        this.store.count("deliveriesDuplicate");
        return "duplicate";
      }
      let identity = this.store.identity();
      if (identity?.status === "removed" || identity?.status === "suspended") return "ignored";
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
      } else if (
        identity.fullName !== repo.fullName ||
        identity.installationId !== repo.installationId
      ) {
        this.store.audit(
          "renamed",
          { from: identity.fullName, to: repo.fullName },
          delivery.receivedMs,
        );
        identity = { ...identity, fullName: repo.fullName, installationId: repo.installationId };
        this.store.setIdentity(identity);
        this.schedules.at("sync", delivery.receivedMs);
      }
      this.store.recordDelivery(delivery.id, delivery.receivedMs);
      const { changes, graphChanged } = this.store.applyEvents(events);
      this.store.updateWatermarks({ lastEventAt: formatInstant(delivery.receivedMs) });
      if (events.some((e) => e.type === "config-changed"))
        this.schedules.at("config", delivery.receivedMs);
      // A label renamed or deleted carries no time to order it against issue events: let a full
      // read settle it.
      if (events.some((e) => e.type === "label-renamed" || e.type === "label-deleted")) {
        this.schedules.at("reconcile-full", delivery.receivedMs + 60_000);
      }
      this.store.count("deliveriesApplied");
      if (changes.length === 0) return "unchanged";
      this.store.audit(
        "webhook",
        { delivery: delivery.id, event: delivery.event, changes },
        delivery.receivedMs,
      );
      if (graphChanged) this.schedules.at("producer", delivery.receivedMs + this.debounceMs());
      return "applied";
    });
    if (outcome === "applied" || outcome === "unchanged") await this.schedules.rearm();
    return outcome;
  }

  /** Scan output of the stored graph (spec 3.3) plus the watermarks (the read API). */
  graph(nowMs = Date.now(), machine?: string) {
    const now = formatInstant(nowMs);
    const config = this.store.config();
    const result = scan(this.store.snapshot(now), { config, ...(machine ? { machine } : {}) });
    return {
      ...result,
      watermarks: this.store.watermarks(),
      deliveries: {
        applied: this.store.counter("deliveriesApplied"),
        duplicate: this.store.counter("deliveriesDuplicate"),
      },
      config: { status: this.store.configStatus(), effective: config },
    };
  }

  identity(): RepoIdentity | null {
    return this.store.identity() ?? null;
  }

  auditLog(limit = 100) {
    return this.store.auditLog(limit);
  }

  /** Cron entry: reconcile now (fully when a day has passed); keeps the daily prune alive. */
  async armReconcile(nowMs = Date.now()): Promise<boolean> {
    const identity = this.store.identity();
    if (identity?.status !== "active") return false;
    this.schedules.at(reconcileKind(this.store.watermarks().lastFullReconcileAt, nowMs), nowMs);
    this.schedules.ensure("prune", nowMs + DAY_MS);
    await this.schedules.rearm();
    return true;
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
          this.failed(schedule, error);
        }
      }
    } finally {
      await this.schedules.rearm();
    }
  }

  /** A failed schedule is retried with backoff; the audit log names what failed and why. */
  private failed(schedule: DueSchedule, error: unknown): void {
    const nowMs = Date.now();
    // Suspended or removed while the handler ran: nothing to retry.
    if (this.store.identity()?.status !== "active") return;
    const attempts = schedule.attempts + 1;
    const base = Number(this.env.SCHEDULE_RETRY_BASE_MS);
    const delay = retryDelayMs(
      attempts,
      {
        missingSetting: error instanceof MissingSettingError,
        retryAfterMs: (error as { retryAfterMs?: number }).retryAfterMs,
      },
      Number.isFinite(base) && base > 0
        ? { baseMs: base, capMs: 15 * 60_000, missingSettingMs: 10 * 60_000 }
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
    if (identity?.status !== "active") return;
    switch (name) {
      case "sync": {
        // The directory (name → id, for routes and the cron) and the installation (for
        // lifecycle) must know every repository this object serves.
        const status = await this.installation().registerRepo({
          id: identity.repoId,
          fullName: identity.fullName,
        });
        await directory(this.env).upsert([{ ...identity, status }], nowMs);
        if (status !== "active") await this.setLifecycle({ ...identity, status });
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
        if (name === "reconcile-full") {
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
        const outcome = await reconcile(this.store, client, Date.now);
        if (outcome === null) return; // the repository stopped being active meanwhile
        this.store.audit(
          "reconcile",
          {
            kind: outcome.kind,
            requests: outcome.requests,
            corrected: outcome.corrections,
            unavailable: outcome.unavailable,
          },
          Date.now(),
        );
        // After the first full read the producer may act at last; after others, if they changed anything.
        if (outcome.kind === "full" || outcome.corrections.length > 0) {
          this.schedules.at("producer", Date.now() + this.debounceMs());
        }
        return;
      }
      case "producer": {
        this.producer.plan(nowMs);
        if (this.producer.pending().length > 0) await this.flushOutbox();
        return;
      }
      case "outbox":
        await this.flushOutbox();
        return;
      case "prune":
        this.store.pruneDeliveries(nowMs);
        this.schedules.at("prune", nowMs + DAY_MS);
        return;
    }
  }

  /** Sends queued label writes, each within the installation's write budget. */
  private async flushOutbox(): Promise<void> {
    if (this.producer.pending().length === 0) return;
    const client = this.client(`apply the agent:ready plan of ${this.store.identity()?.fullName}`);
    const installation = this.installation();
    const result = await this.producer.flush(client, () => installation.reserveWrites(1), Date.now);
    if (result.failed) throw result.failed;
    if (result.stopped) return;
    if (result.left > 0) {
      // Over budget (or stopped): the writes wait for room, they are not dropped.
      this.schedules.at("outbox", result.retryAtMs ?? Date.now() + 60_000);
    } else {
      // The run is complete; plan again for whatever changed while it was writing.
      this.schedules.at("producer", Date.now());
    }
  }

  /** Identity, schedules, queued writes, and whether an alarm run is in progress right now. */
  status(): {
    identity: RepoIdentity | null;
    status: RepoStatus | null;
    schedules: ReturnType<Schedules["list"]>;
    pendingWrites: number;
    running: boolean;
  } {
    const identity = this.store.identity() ?? null;
    return {
      identity,
      status: identity?.status ?? null,
      schedules: this.schedules.list(),
      pendingWrites: this.producer.pending().length,
      running: this.alarmRun !== null,
    };
  }
}
