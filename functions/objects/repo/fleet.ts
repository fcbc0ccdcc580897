import { nextOwedWrite, type OwedWrite } from "../../../shared/claims/owed.ts";
import {
  type Attempt,
  claimBranch,
  claimIdFrom,
  claimTtlMs,
  countsAsAttempt,
  fenceIsCurrent,
  grantDecision,
  isStuckAfter,
  stuckLabelRemovedByHand,
} from "../../../shared/claims/rules.ts";
import type { Config } from "../../../shared/config/schema.ts";
import { compactOf, releaseAnalysis } from "../../../shared/graph/compact-analysis.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import {
  capabilitySet,
  hasCapabilities,
  isAvailable,
  orderQueue,
  type QueueItem,
  type QueueOrder,
} from "../../../shared/queue/queue.ts";
import type { ClaimRow, ClaimsStore } from "./claims-store.ts";
import {
  buildQueueView,
  buildQueueViewSteps,
  type QueueView,
  VIEW_MAX_AGE_MS,
} from "./queue-view.ts";
import type { RepoStore } from "./repo-store.ts";
import type { Schedules } from "./schedules-store.ts";

/** What a fleet operation answers: the HTTP status and body the route sends as they are. */
export interface FleetResult {
  status: number;
  /** A JSON object (typed loosely: it crosses the RPC boundary and goes out as it is). */
  body?: object;
  headers?: Record<string, string>;
}

export interface QueueRequest {
  machine?: string;
  capabilities?: readonly string[];
  limit: number;
  order?: QueueOrder;
}

export interface ClaimRequest {
  agentId: string;
  ttlSeconds?: number;
  machine?: string;
  capabilities?: readonly string[];
}

export interface FenceRequest {
  claimId: string;
  fence: number;
}

export type ReleaseOutcome = "done" | "abandoned" | "failed";

/** A GitHub write switchyard owes for the fleet (shared/claims/owed.ts), ready to perform. */
export type FleetWrite =
  | Exclude<OwedWrite, { kind: "stuck-comment" }>
  | { kind: "stuck-comment"; number: number; attempts: Attempt[] };

const conflict = (reason: string, message: string, holder?: unknown): FleetResult => ({
  status: 409,
  body: { error: "conflict", reason, message, ...(holder ? { holder } : {}) },
});

const staleFence = (): FleetResult => ({
  status: 409,
  body: {
    error: "stale-fence",
    message:
      "that claim id and fence are not the issue's live claim (expired, released or unknown)",
  },
});

const notFound = (number: number): FleetResult => ({
  status: 404,
  body: { error: "not-found", message: `issue #${number} is not known in this repository` },
});

/**
 * The fleet API's state machine inside a RepoObject: the queue view (rebuilt once per graph
 * change), grants under one synchronous transaction each (so claim-next hands one issue to one
 * agent), heartbeats, releases, expiry, the dead letter, and the writes owed to GitHub.
 */
export class Fleet {
  private view: QueueView | null = null;
  private readonly store: RepoStore;
  readonly claims: ClaimsStore;
  private readonly schedules: Schedules;
  private readonly writeDelayMs: () => number;
  private readonly random: (bytes: number) => Uint8Array;
  private readonly htmlBase: () => string;

  constructor(
    store: RepoStore,
    claims: ClaimsStore,
    schedules: Schedules,
    options: {
      writeDelayMs: () => number;
      htmlBase: () => string;
      random?: (bytes: number) => Uint8Array;
    },
  ) {
    this.store = store;
    this.claims = claims;
    this.schedules = schedules;
    this.writeDelayMs = options.writeDelayMs;
    this.htmlBase = options.htmlBase;
    this.random = options.random ?? ((n) => crypto.getRandomValues(new Uint8Array(n)));
    // Closed or reopened: a `done` release no longer keeps the issue out of the queue.
    store.onStateChange = (number) => {
      if (this.claims.fleet(number).doneSuppressed) this.liftSuppression([number]);
    };
  }

  private config(): Config {
    return this.store.config();
  }

  private owe(nowMs: number): void {
    this.schedules.at("fleet", nowMs + this.writeDelayMs());
  }

  /** Whether the kept queue view still holds at `nowMs`. */
  private viewHolds(nowMs: number): boolean {
    const v = this.view;
    return (
      v !== null &&
      v.version === this.store.rulesVersion &&
      // A graph dropped and made anew without a rule change (the prune) has other titles.
      v.graph === this.store.keptCompactGraph() &&
      nowMs - v.builtMs <= VIEW_MAX_AGE_MS &&
      nowMs >= v.builtMs
    );
  }

  /** The queue view, rebuilt when the graph changed or it has aged. */
  queueView(nowMs: number): QueueView {
    if (this.viewHolds(nowMs)) return this.view!;
    const built = this.store.transaction(() => {
      this.noticeStuckLabelsRemoved(nowMs);
      return buildQueueView(this.store, this.claims, nowMs);
    });
    return this.keepView(built, nowMs);
  }

  /**
   * Builds the queue view ahead of a synchronous reader, pausing between its steps so webhook
   * acknowledgements go first. A change landing during a pause voids the work: it starts again,
   * and after three tries the reader builds it at once (`queueView`).
   */
  async prepareQueueView(nowMs: number, pause: () => Promise<void>): Promise<void> {
    for (let attempt = 0; attempt < 3 && !this.viewHolds(nowMs); attempt++) {
      const version = this.store.rulesVersion;
      const steps = buildQueueViewSteps(this.store, this.claims, nowMs);
      let built: QueueView | null = null;
      for (;;) {
        const step = steps.next();
        if (step.done) {
          built = step.value;
          break;
        }
        await pause();
        if (this.store.rulesVersion !== version) {
          // Void: its scratch arrays go back for the next attempt (shared/graph/scratch.ts).
          steps.return(undefined as never);
          break;
        }
      }
      if (built === null) continue;
      // The stuck-label check is short and writes: it runs at once, in its transaction.
      this.store.transaction(() => this.noticeStuckLabelsRemoved(nowMs));
      if (this.store.rulesVersion !== version) {
        // Void too, and never seen by a reader: its arrays go back for the next attempt.
        releaseAnalysis(compactOf(built.analysis));
        continue;
      }
      this.keepView(built, nowMs);
    }
  }

  private keepView(built: QueueView, nowMs: number): QueueView {
    if (built.unknownAuthors.length > 0) this.schedules.at("trust", nowMs);
    const before = this.view;
    this.view = built;
    // Read only synchronously once obtained (never across an await): nobody holds it still.
    if (before !== null && before !== built) releaseAnalysis(compactOf(before.analysis));
    return built;
  }

  /** A human took the stuck label off an issue switchyard dead-lettered: attempts start over. */
  private noticeStuckLabelsRemoved(nowMs: number): void {
    const stuckLabel = this.config().labels.stuck;
    for (const f of this.claims.fleetRows()) {
      if (!f.stuck || !f.stuckLabeled || f.stuckMs === null) continue;
      const labels = this.store.issueLabels(f.number);
      if (
        labels !== null &&
        stuckLabelRemovedByHand({
          labels,
          stuckLabel,
          labeledMs: f.stuckMs,
          updatedMs: this.store.issueUpdatedMs(f.number) ?? 0,
          unlabeledMs: this.store.lastUnlabeledMs(f.number, stuckLabel),
        })
      ) {
        this.claims.resetAttempts(f.number);
        this.store.audit("stuck-reset", { number: f.number }, nowMs);
        this.owe(nowMs);
      }
    }
  }

  /** Ends claims past their expiry (a dead claim is dead whether or not the alarm ran). */
  expireDue(nowMs: number): number {
    const expired = this.claims.expiredOpen(nowMs);
    for (const c of expired) {
      this.claims.end(c.claimId, c.expiresMs, "expired", null);
      this.store.audit(
        "claim-expired",
        { number: c.number, claimId: c.claimId, fence: c.fence, agentId: c.agentId },
        nowMs,
      );
      this.afterAttempt(c.number, "expired", nowMs);
    }
    if (expired.length > 0) this.owe(nowMs);
    return expired.length;
  }

  private afterAttempt(number: number, outcome: "expired" | ReleaseOutcome, nowMs: number): void {
    if (!countsAsAttempt(outcome)) return;
    const fleet = this.claims.fleet(number);
    if (fleet.stuck) return;
    const attempts = this.claims.attempts(number, fleet.resetFence);
    if (!isStuckAfter(attempts.length, this.config())) return;
    this.claims.setFlag(number, "stuck", true);
    this.claims.setFlag(number, "removeReady", true);
    this.store.audit("stuck", { number, attempts: attempts.length }, nowMs);
  }

  /** Arms the alarm for the earliest live claim's expiry. */
  private armExpiry(): void {
    const next = this.claims.nextExpiryMs();
    if (next !== null) this.schedules.at("claims", next);
  }

  // --- queue --------------------------------------------------------------------------------

  /** Excluded per request: live claims, live IDD claims, dead letters, `done` until kicked. */
  private availability(nowMs: number, view: QueueView) {
    const live = new Set(this.claims.live(nowMs).map((c) => c.number));
    const parked = new Set<number>();
    for (const f of this.claims.fleetRows()) if (f.stuck || f.doneSuppressed) parked.add(f.number);
    return (item: QueueItem) => isAvailable(item.number, { live, parked, idd: view.idd, nowMs });
  }

  queue(request: QueueRequest, nowMs: number): FleetResult {
    const view = this.queueView(nowMs);
    const order = request.order ?? view.config.queue.order;
    const available = this.availability(nowMs, view);
    const capabilities = capabilitySet(request.capabilities);
    const attempts = this.claims.attemptCounts();
    const items = orderQueue(view.items, order, request.machine).filter(
      (item) => available(item) && hasCapabilities(item, capabilities),
    );
    return {
      status: 200,
      body: {
        repo: this.store.identity()?.fullName ?? null,
        order,
        total: items.length,
        items: items.slice(0, request.limit).map((item) => ({
          number: item.number,
          // Read now: a retitling keeps the view (RepoStore.rulesVersion).
          title: view.analysis.graph.issue(item.number)?.title ?? item.title,
          url: this.issueUrl(item.number),
          reason: item.reason,
          labels: item.labels,
          requires: item.requires,
          impact: item.impact,
          attempts: attempts.get(item.number) ?? 0,
        })),
      },
    };
  }

  /** The issue's page on GitHub (or GitHub Enterprise, or the simulator). */
  issueUrl(number: number): string {
    return `${this.htmlBase()}/${this.store.identity()?.fullName ?? "unknown/unknown"}/issues/${number}`;
  }

  // --- claims -------------------------------------------------------------------------------

  /**
   * Grants a claim on issue `number`, or on the queue's first available item when `number` is
   * null (204 when there is none). One synchronous transaction: no other request runs between
   * choosing the issue, taking the next fence and recording the claim.
   */
  grant(number: number | null, request: ClaimRequest, nowMs: number): FleetResult {
    return this.store.transaction(() => {
      this.expireDue(nowMs);
      const view = this.queueView(nowMs);
      const config = view.config;
      const limits = { maxPerAgent: config.claims.maxPerAgent, maxActive: config.claims.maxActive };
      let target = number;
      if (target === null) {
        const agentLive = this.claims.liveCount(nowMs, request.agentId);
        const repoLive = this.claims.liveCount(nowMs);
        if (limits.maxPerAgent !== null && agentLive >= limits.maxPerAgent)
          return conflict("agent-limit", `the agent already holds ${agentLive} live claims`);
        if (limits.maxActive !== null && repoLive >= limits.maxActive)
          return conflict("repo-limit", `the repository already has ${repoLive} live claims`);
        const available = this.availability(nowMs, view);
        const capabilities = capabilitySet(request.capabilities);
        const next = orderQueue(view.items, config.queue.order, request.machine).find(
          (item) => available(item) && hasCapabilities(item, capabilities),
        );
        if (next === undefined) return { status: 204 };
        target = next.number;
      }
      const issue = view.analysis.graph.issue(target);
      const live = this.claims.liveOn(target, nowMs);
      const idd = view.idd.get(target);
      const fleet = this.claims.fleet(target);
      const decision = grantDecision({
        state: issue?.state,
        facts: view.analysis.factsOf(target),
        stuck: fleet.stuck,
        live: live ? { agentId: live.agentId, expiresAt: formatInstant(live.expiresMs) } : null,
        idd: idd && idd.staleAtMs > nowMs ? { agentId: idd.agentId, staleAt: idd.staleAt } : null,
        agentLive: this.claims.liveCount(nowMs, request.agentId),
        repoLive: this.claims.liveCount(nowMs),
        limits,
      });
      if (!decision.ok) {
        if (decision.reason === "not-found") return notFound(target);
        return conflict(decision.reason, decision.message, decision.holder);
      }
      const fence = this.claims.nextFence();
      const claimId = claimIdFrom(this.random(10));
      const ttlMs = claimTtlMs(request.ttlSeconds, config);
      const branch = claimBranch(config, target, issue!.title);
      const expiresMs = nowMs + ttlMs;
      this.claims.insert({
        claimId,
        number: target,
        agentId: request.agentId,
        machine: request.machine ?? null,
        fence,
        branch,
        ttlMs,
        grantedMs: nowMs,
        expiresMs,
      });
      this.store.audit(
        "claim",
        {
          number: target,
          claimId,
          fence,
          agentId: request.agentId,
          machine: request.machine ?? null,
        },
        nowMs,
      );
      this.armExpiry();
      if (config.idd.mirrorClaims) this.owe(nowMs);
      const item = view.itemOf.get(target);
      return {
        status: 201,
        body: {
          claimId,
          fence,
          expiresAt: formatInstant(expiresMs),
          branch,
          issue: {
            number: target,
            title: issue!.title,
            url: this.issueUrl(target),
            ...(item
              ? {
                  reason: item.reason,
                  labels: item.labels,
                  requires: item.requires,
                  impact: item.impact,
                }
              : {}),
          },
        },
      };
    });
  }

  /** The claim `{claimId, fence}` names, if it is issue `number`'s live claim. */
  currentClaim(number: number, request: FenceRequest, nowMs: number): ClaimRow | null {
    return this.store.transaction(() => {
      this.expireDue(nowMs);
      const claim = this.claims.get(request.claimId);
      return fenceIsCurrent(claim, request, number, nowMs) ? (claim as ClaimRow) : null;
    });
  }

  heartbeat(number: number, request: FenceRequest, nowMs: number): FleetResult {
    return this.store.transaction(() => {
      this.expireDue(nowMs);
      const claim = this.claims.get(request.claimId);
      if (!fenceIsCurrent(claim, request, number, nowMs)) return staleFence();
      const row = claim as ClaimRow;
      const expiresMs = nowMs + row.ttlMs;
      this.claims.extend(row.claimId, expiresMs);
      this.armExpiry();
      return {
        status: 200,
        body: { claimId: row.claimId, fence: row.fence, expiresAt: formatInstant(expiresMs) },
      };
    });
  }

  release(
    number: number,
    request: FenceRequest & { outcome: ReleaseOutcome; note?: string },
    nowMs: number,
  ): FleetResult {
    return this.store.transaction(() => {
      this.expireDue(nowMs);
      const claim = this.claims.get(request.claimId);
      if (!fenceIsCurrent(claim, request, number, nowMs)) return staleFence();
      this.claims.end(request.claimId, nowMs, request.outcome, request.note ?? null);
      if (request.outcome === "done") {
        this.claims.setFlag(number, "doneSuppressed", true);
        this.claims.setFlag(number, "removeReady", true);
      }
      this.afterAttempt(number, request.outcome, nowMs);
      this.store.audit(
        "release",
        {
          number,
          claimId: request.claimId,
          fence: request.fence,
          outcome: request.outcome,
          note: request.note ?? null,
        },
        nowMs,
      );
      this.owe(nowMs);
      return {
        status: 200,
        body: {
          claimId: request.claimId,
          fence: request.fence,
          outcome: request.outcome,
          releasedAt: formatInstant(nowMs),
        },
      };
    });
  }

  listClaims(nowMs: number): FleetResult {
    return {
      status: 200,
      body: {
        claims: this.claims.live(nowMs).map((c) => ({
          claimId: c.claimId,
          number: c.number,
          agentId: c.agentId,
          machine: c.machine,
          fence: c.fence,
          branch: c.branch,
          grantedAt: formatInstant(c.grantedMs),
          expiresAt: formatInstant(c.expiresMs),
        })),
      },
    };
  }

  /** The alarm's `claims` schedule: end expired claims, then wait for the next expiry. */
  runExpiry(nowMs: number): void {
    this.store.transaction(() => this.expireDue(nowMs));
    this.armExpiry();
  }

  /** Issues the producer must not label ready: `done` until kicked, and dead letters. */
  exclusions(): { suppressed: Set<number>; excluded: Set<number> } {
    const suppressed = new Set<number>();
    const excluded = new Set<number>();
    for (const f of this.claims.fleetRows()) {
      if (f.doneSuppressed) suppressed.add(f.number);
      if (f.stuck) excluded.add(f.number);
    }
    return { suppressed, excluded };
  }

  /** A kick targets these issues again: a `done` release no longer keeps them out. */
  liftSuppression(numbers: Iterable<number>): void {
    for (const n of numbers) {
      this.claims.setFlag(n, "doneSuppressed", false);
      // The `done` release's owed removal of the ready label is moot now: it must not strip the
      // label the producer puts back for this kick.
      if (!this.claims.fleet(n).stuck) this.claims.setFlag(n, "removeReady", false);
    }
  }

  // --- writes owed to GitHub ----------------------------------------------------------------

  /**
   * The next write switchyard owes GitHub for the fleet, or null (with the time a processing
   * label is due for renewal, if one is). Writes that became pointless meanwhile are dropped
   * here, which is what makes them coalesce: a claim granted and released between two flushes
   * posts nothing.
   */
  nextWrite(nowMs: number): { write: FleetWrite | null; renewAtMs: number | null } {
    return this.store.transaction(() => {
      this.expireDue(nowMs);
      const live = new Set(this.claims.live(nowMs).map((c) => c.number));
      const issues = new Map(this.claims.fleetRows().map((f) => [f.number, f]));
      for (const n of live) if (!issues.has(n)) issues.set(n, this.claims.fleet(n));
      const decision = nextOwedWrite({
        nowMs,
        config: this.config(),
        claims: this.claims.markersDue(),
        live,
        issues: [...issues.values()],
        labelsOf: (n) => this.store.issueLabels(n),
      });
      for (const claimId of decision.skipMarkers) this.claims.setMarker(claimId, "skip");
      for (const { number, flag } of decision.settled) this.claims.setFlag(number, flag, false);
      const write = decision.write;
      if (write?.kind === "stuck-comment") {
        const fleet = this.claims.fleet(write.number);
        return {
          write: { ...write, attempts: this.claims.attempts(write.number, fleet.resetFence) },
          renewAtMs: decision.renewAtMs,
        };
      }
      return { write: write as FleetWrite | null, renewAtMs: decision.renewAtMs };
    });
  }

  /** Records a write GitHub accepted (or refused for good), so it is never owed again. */
  writeDone(write: FleetWrite, nowMs: number, dropped: string | null = null): void {
    const labels = this.config().labels;
    this.store.transaction(() => {
      switch (write.kind) {
        case "claimed-marker":
          this.claims.setMarker(write.claim.claimId, "posted");
          break;
        case "unclaimed-marker":
          this.claims.setMarker(write.claim.claimId, "released");
          break;
        case "processing-add":
        case "processing-renew":
          this.claims.setFlag(write.number, "processing", true);
          this.claims.setProcessingMs(write.number, nowMs);
          if (!dropped) this.store.applyOwnLabelWrite(write.number, labels.processing, "add");
          break;
        case "processing-remove":
          this.claims.setFlag(write.number, "processing", false);
          this.claims.setProcessingMs(write.number, null);
          if (!dropped) this.store.applyOwnLabelWrite(write.number, labels.processing, "remove");
          break;
        case "remove-ready":
          this.claims.setFlag(write.number, "removeReady", false);
          if (!dropped) this.store.applyOwnLabelWrite(write.number, labels.ready, "remove");
          break;
        case "add-ready":
          this.claims.setFlag(write.number, "addReady", false);
          if (!dropped) this.store.applyOwnLabelWrite(write.number, labels.ready, "add");
          break;
        case "stuck-label":
          this.claims.setFlag(write.number, "stuckLabeled", true);
          this.claims.setStuckMs(write.number, nowMs);
          if (!dropped) this.store.applyOwnLabelWrite(write.number, labels.stuck, "add");
          break;
        case "stuck-comment":
          this.claims.setFlag(write.number, "stuckCommented", true);
          break;
      }
      const number = "claim" in write ? write.claim.number : write.number;
      this.store.audit(
        dropped ? "fleet-write-dropped" : "fleet-write",
        { kind: write.kind, number, ...(dropped ? { error: dropped } : {}) },
        nowMs,
      );
    });
  }

  /** Same write still owed? (It may have become pointless while the budget was reserved.) */
  static sameWrite(a: FleetWrite | null, b: FleetWrite): boolean {
    if (a === null || a.kind !== b.kind) return false;
    if ("claim" in a && "claim" in b) return a.claim.claimId === b.claim.claimId;
    return "number" in a && "number" in b && a.number === b.number;
  }
}
