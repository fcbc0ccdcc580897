import { DurableObject } from "cloudflare:workers";
import { scan } from "../../shared/graph/scan.ts";
import { formatInstant } from "../../shared/graph/time.ts";
import type { GraphEvent } from "../../shared/ingest/events.ts";
import type { Env } from "../env.ts";
import type { RepoStatus } from "./directory-object.ts";
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

/**
 * One per repository (named by GitHub's numeric repository id): the graph, its watermarks,
 * and every schedule that keeps it and the `agent:ready` labels true.
 */
export class RepoObject extends DurableObject<Env> {
  readonly store: RepoStore;
  readonly schedules: Schedules;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new RepoStore(ctx.storage);
    this.schedules = new Schedules(this.store.sql, ctx.storage);
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
        // Newly installed, re-added or unsuspended: learn the whole graph first.
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
    const outcome = this.store.transaction((): IngestOutcome => {
      if (this.store.hasDelivery(delivery.id)) return "duplicate";
      let identity = this.store.identity();
      if (identity?.status === "removed" || identity?.status === "suspended") return "ignored";
      if (!identity || identity.fullName !== repo.fullName) {
        // Events can outrun the installation event; they prove the App is installed here.
        identity = {
          repoId: repo.id,
          fullName: repo.fullName,
          installationId: repo.installationId,
          status: "active",
        };
        this.store.setIdentity(identity);
        if (!this.store.watermarks().lastFullReconcileAt)
          this.schedules.at("reconcile-full", delivery.receivedMs);
      }
      this.store.recordDelivery(delivery.id, delivery.receivedMs);
      const changes = this.store.apply(events);
      this.store.updateWatermarks({ lastEventAt: formatInstant(delivery.receivedMs) });
      if (events.some((e) => e.type === "config-changed"))
        this.schedules.at("reconcile", delivery.receivedMs);
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
    return outcome;
  }

  /** Scan output of the stored graph (spec 3.3) plus the watermarks (the read API). */
  graph(nowMs = Date.now()) {
    const now = formatInstant(nowMs);
    const config = this.store.config();
    const result = scan(this.store.snapshot(now), { config });
    return {
      ...result,
      watermarks: this.store.watermarks(),
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
    try {
      const due = new Set(this.schedules.takeDue(Date.now()));
      for (const name of HANDLER_ORDER) {
        if (due.has(name)) await this.runSchedule(name);
      }
    } finally {
      await this.schedules.rearm();
    }
  }

  private async runSchedule(name: ScheduleName): Promise<void> {
    const nowMs = Date.now();
    switch (name) {
      case "prune":
        this.store.pruneDeliveries(nowMs);
        this.schedules.at("prune", nowMs + DAY_MS);
        return;
      default:
        return;
    }
  }

  status(): {
    identity: RepoIdentity | null;
    status: RepoStatus | null;
    schedules: ReturnType<Schedules["list"]>;
  } {
    const identity = this.store.identity() ?? null;
    return { identity, status: identity?.status ?? null, schedules: this.schedules.list() };
  }
}
