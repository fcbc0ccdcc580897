import { DurableObject } from "cloudflare:workers";
import type { GitHubClient } from "../../shared/github/client.ts";
import { scan } from "../../shared/graph/scan.ts";
import { formatInstant } from "../../shared/graph/time.ts";
import type { GraphEvent } from "../../shared/ingest/events.ts";
import { type Env, MissingSettingError } from "../env.ts";
import { installationClient } from "../github-client.ts";
import { directory, type RepoStatus } from "./directory-object.ts";
import { Producer } from "./producer.ts";
import { reconcileFull, reconcileIncremental } from "./reconcile.ts";
import { type RepoIdentity, RepoStore } from "./repo-store.ts";
import { type ScheduleName, Schedules } from "./schedules.ts";

export interface Delivery {
  id: string;
  event: string;
  receivedMs: number;
}

export type IngestOutcome = "applied" | "unchanged" | "duplicate" | "ignored";

const HANDLER_ORDER: ScheduleName[] = [
  "reconcile-full",
  "reconcile",
  "outbox",
  "producer",
  "prune",
];
const DAY_MS = 86_400_000;
/** Retry delay after the n-th consecutive failure of a schedule: doubling, at most 15 min. */
const backoffMs = (baseMs: number, attempts: number) =>
  Math.min(15 * 60_000, baseMs * 2 ** Math.max(0, attempts - 1));

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

  /** Installation lifecycle reached this repository (from InstallationObject). */
  async setLifecycle(identity: RepoIdentity): Promise<void> {
    const before = this.store.identity();
    const nowMs = Date.now();
    this.store.transaction(() => {
      if (identity.status === "removed") {
        this.store.wipe();
      } else if (identity.status === "suspended") {
        this.schedules.clear();
      } else if (before?.status !== "active") {
        // Newly installed, re-added or unsuspended: learn the whole graph first. Closes from
        // the last kick window before now still kick; older ones are history.
        this.store.setWatchingSince(
          formatInstant(nowMs - this.store.config().kicks.windowHours * 3_600_000),
        );
        this.schedules.at("reconcile-full", nowMs);
        this.schedules.at("prune", nowMs + DAY_MS);
      }
      this.store.setIdentity(identity);
      this.store.audit("lifecycle", { from: before?.status ?? null, to: identity.status }, nowMs);
    });
    await this.schedules.rearm();
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
    let renamed = false;
    const outcome = this.store.transaction((): IngestOutcome => {
      if (this.store.hasDelivery(delivery.id)) {
        this.store.count("deliveriesDuplicate");
        return "duplicate";
      }
      let identity = this.store.identity();
      if (identity?.status === "removed" || identity?.status === "suspended") return "ignored";
      if (!identity) {
        // Events can outrun the installation event; they prove the App is installed here.
        identity = {
          repoId: repo.id,
          fullName: repo.fullName,
          installationId: repo.installationId,
          status: "active",
        };
        this.store.setIdentity(identity);
        const windowMs = this.store.config().kicks.windowHours * 3_600_000;
        this.store.setWatchingSince(formatInstant(delivery.receivedMs - windowMs));
        renamed = true;
        if (!this.store.watermarks().lastFullReconcileAt)
          this.schedules.at("reconcile-full", delivery.receivedMs);
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
        renamed = true;
      }
      this.store.recordDelivery(delivery.id, delivery.receivedMs);
      const changes = this.store.apply(events);
      this.store.updateWatermarks({ lastEventAt: formatInstant(delivery.receivedMs) });
      if (events.some((e) => e.type === "config-changed"))
        this.schedules.at("reconcile", delivery.receivedMs);
      this.store.count("deliveriesApplied");
      if (changes.length === 0) return "unchanged";
      this.store.audit(
        "webhook",
        { delivery: delivery.id, event: delivery.event, changes },
        delivery.receivedMs,
      );
      this.schedules.at("producer", delivery.receivedMs + this.debounceMs());
      return "applied";
    });
    if (outcome === "applied" || outcome === "unchanged") await this.schedules.rearm();
    if (renamed) {
      // Name-addressed routes find the repository through the directory; keep it current.
      const identity = this.store.identity()!;
      await directory(this.env).upsert([identity], delivery.receivedMs);
    }
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
      config: { status: this.store.configStatus() },
    };
  }

  identity(): RepoIdentity | null {
    return this.store.identity() ?? null;
  }

  auditLog(limit = 100) {
    return this.store.auditLog(limit);
  }

  /** Cron entry: reconcile now, and fully if the last full reconcile is a day old. */
  async armReconcile(nowMs = Date.now()): Promise<boolean> {
    const identity = this.store.identity();
    if (identity?.status !== "active") return false;
    const last = this.store.watermarks().lastFullReconcileAt;
    this.schedules.at(
      last === null || nowMs - Date.parse(last) >= DAY_MS ? "reconcile-full" : "reconcile",
      nowMs,
    );
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
      const due = new Set(this.schedules.takeDue(Date.now()));
      for (const name of HANDLER_ORDER) {
        if (!due.has(name)) continue;
        try {
          await this.runSchedule(name);
          this.schedules.resetAttempts(name);
        } catch (error) {
          this.failed(name, error);
        }
      }
    } finally {
      await this.schedules.rearm();
    }
  }

  /** A failed schedule is retried with backoff; the audit log names what failed and why. */
  private failed(name: ScheduleName, error: unknown): void {
    const nowMs = Date.now();
    const attempts = this.schedules.attempts(name) + 1;
    const base = Number(this.env.SCHEDULE_RETRY_BASE_MS);
    const delay =
      error instanceof MissingSettingError
        ? 10 * 60_000
        : backoffMs(Number.isFinite(base) && base > 0 ? base : 5_000, attempts);
    const retryAfter = (error as { retryAfterMs?: number }).retryAfterMs;
    this.schedules.retry(name, nowMs + Math.max(delay, retryAfter ?? 0));
    const message = error instanceof Error ? error.message : String(error);
    this.store.audit("error", { schedule: name, attempts, error: message }, nowMs);
    console.error(`${this.store.identity()?.fullName ?? "repository"}: ${name} failed: ${message}`);
  }

  private async runSchedule(name: ScheduleName): Promise<void> {
    const nowMs = Date.now();
    if (this.store.identity()?.status !== "active") return;
    switch (name) {
      case "reconcile-full":
      case "reconcile": {
        const client = this.client(`reconcile ${this.store.identity()?.fullName}`);
        const outcome =
          name === "reconcile-full"
            ? await reconcileFull(this.store, client, Date.now)
            : await reconcileIncremental(this.store, client, Date.now);
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
        if (outcome.corrections.length > 0)
          this.schedules.at("producer", Date.now() + this.debounceMs());
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

  /** Sends queued label writes within the installation's write budget. */
  private async flushOutbox(): Promise<void> {
    const pending = this.producer.pending().length;
    if (pending === 0) return;
    const client = this.client(`apply the agent:ready plan of ${this.store.identity()?.fullName}`);
    const budget = await this.installation().reserveWrites(pending);
    const result =
      budget.granted > 0
        ? await this.producer.flush(client, budget.granted, Date.now)
        : { failed: null, left: pending };
    if (result.failed) throw result.failed;
    if (result.left > 0) {
      // Over budget: the writes wait for room, they are not dropped.
      this.schedules.at("outbox", budget.retryAtMs ?? Date.now());
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
