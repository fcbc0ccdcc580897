import { labelLimits, policyDenial } from "../../../shared/claims/policy.ts";
import { preemptCheckAt, preemptedBy } from "../../../shared/claims/preemption.ts";
import {
  claimBranch,
  claimIdFrom,
  claimTtlMs,
  countsAsAttempt,
  fenceIsCurrent,
  grantDecision,
  isLive,
  isStuckAfter,
} from "../../../shared/claims/rules.ts";
import {
  type WriteEnd,
  writeInFlightDenial,
  writeWindow,
} from "../../../shared/claims/write-records.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import { PAUSED_RETRY_AFTER_SECONDS } from "./breaker.ts";
import type { ClaimRow, ClaimsStore } from "./claims-store.ts";
import {
  type ClaimRequest,
  conflict,
  type FenceRequest,
  type FleetResult,
  notFound,
  type ReleaseOutcome,
  staleFence,
} from "./fleet-api.ts";
import type { QueueViews } from "./queue.ts";
import type { RepoStore } from "./repo-store.ts";
import type { Schedules } from "./schedules-store.ts";
import { finishWrite } from "./write-records.ts";
import type { WriteRecord } from "./write-records-store.ts";

/**
 * Where claims are granted, heartbeated, released and expired (spec 6.4), each under one
 * synchronous transaction, so claim-next hands one issue to one agent; the grant rules
 * themselves are `grantDecision` in shared/claims/rules.ts. Ending claims also keeps the dead
 * letter and the `done` suppression the producer and the queue read.
 */
export class Claims {
  private readonly store: RepoStore;
  private readonly rows: ClaimsStore;
  private readonly schedules: Schedules;
  private readonly views: QueueViews;
  private readonly writeDelayMs: () => number;
  private readonly random: (bytes: number) => Uint8Array;

  constructor(
    store: RepoStore,
    schedules: Schedules,
    views: QueueViews,
    options: { writeDelayMs: () => number; random?: (bytes: number) => Uint8Array },
  ) {
    this.store = store;
    this.rows = store.claims;
    this.schedules = schedules;
    this.views = views;
    this.writeDelayMs = options.writeDelayMs;
    this.random = options.random ?? ((n) => crypto.getRandomValues(new Uint8Array(n)));
    // Closed or reopened: a `done` release no longer keeps the issue out of the queue.
    store.onStateChange = (number) => {
      if (this.rows.fleet(number).doneSuppressed) this.liftSuppression([number]);
    };
  }

  /** Asks for the fleet writes a change implies (mirror markers, labels), coalesced. */
  owe(nowMs: number): void {
    this.schedules.at("fleet", nowMs + this.writeDelayMs());
  }

  /**
   * Grants a claim on issue `number`, or on the queue's first available item when `number` is
   * null (204 when there is none). One synchronous transaction: no other request runs between
   * choosing the issue, taking the next fence and recording the claim.
   */
  grant(number: number | null, request: ClaimRequest, nowMs: number): FleetResult {
    return this.store.transaction(() => {
      this.expireDue(nowMs);
      const view = this.views.current(nowMs);
      const config = view.config;
      const limits = { maxPerAgent: config.claims.maxPerAgent, maxActive: config.claims.maxActive };
      let target = number;
      if (target === null) {
        const agentLive = this.rows.liveCount(nowMs, request.agentId);
        const repoLive = this.rows.liveCount(nowMs);
        if (limits.maxPerAgent !== null && agentLive >= limits.maxPerAgent)
          return conflict("agent-limit", `the agent already holds ${agentLive} live claims`);
        if (limits.maxActive !== null && repoLive >= limits.maxActive)
          return conflict("repo-limit", `the repository already has ${repoLive} live claims`);
        const next = this.views.next(view, request, nowMs);
        if (next === undefined) return this.noWork(nowMs);
        target = next.number;
      }
      const issue = view.analysis.graph.issue(target);
      const live = this.rows.liveOn(target, nowMs);
      const idd = view.idd.get(target);
      const fleet = this.rows.fleet(target);
      const decision = grantDecision({
        state: issue?.state,
        facts: view.analysis.factsOf(target),
        stuck: fleet.stuck,
        live: live ? { agentId: live.agentId, expiresAt: formatInstant(live.expiresMs) } : null,
        idd: idd && idd.staleAtMs > nowMs ? { agentId: idd.agentId, staleAt: idd.staleAt } : null,
        agentLive: this.rows.liveCount(nowMs, request.agentId),
        repoLive: this.rows.liveCount(nowMs),
        limits,
      });
      if (!decision.ok) {
        if (decision.reason === "not-found") return notFound(target);
        return conflict(decision.reason, decision.message, decision.holder);
      }
      // A write of an earlier claim may still reach GitHub: nobody gets the issue until its
      // record closes (claim-next skips such issues: QueueViews.availability).
      const inFlight = this.store.writes.openOn(target, nowMs);
      if (inFlight) {
        const denial = writeInFlightDenial(inFlight.closeAtMs, nowMs);
        const result = conflict("write-in-flight", denial.message);
        return {
          ...result,
          headers: { ...result.headers, "retry-after": String(denial.retryAfterSeconds) },
        };
      }
      // The queue policy (shared/claims/policy.ts): the breaker's pause, per-label limits.
      const pause = this.views.paused(nowMs);
      const denial = policyDenial({
        kind: "work",
        labels: issue!.labels,
        paused: pause === null ? null : { failing: pause.failing.map((f) => f.name) },
        repairLabel: config.breaker?.repairLabel ?? "",
        limits: labelLimits(config.claims),
        live: this.views.liveByLabel(view, nowMs),
      });
      if (denial !== null) {
        const result = conflict(denial.reason, denial.message);
        if (denial.reason === "label-limit") return withBody(result, { label: denial.label });
        return pause === null ? result : withPauseHeaders(result, pause.since);
      }
      const fence = this.rows.nextFence(nowMs);
      const claimId = claimIdFrom(this.random(10));
      const ttlMs = claimTtlMs(request.ttlSeconds, config);
      const branch = claimBranch(config, target, issue!.title);
      const expiresMs = nowMs + ttlMs;
      this.rows.insert({
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
            url: this.views.issueUrl(target),
            ...(item
              ? {
                  reason: item.reason,
                  labels: item.labels,
                  requires: item.requires,
                  impact: item.impact,
                  priority: item.priority,
                }
              : {}),
          },
        },
      };
    });
  }

  /** claim-next found nothing to hand out: 204, saying so when the breaker is why. */
  private noWork(nowMs: number): FleetResult {
    const pause = this.views.paused(nowMs);
    return pause === null ? { status: 204 } : withPauseHeaders({ status: 204 }, pause.since);
  }

  /** The claim `{claimId, fence}` names, if it is issue `number`'s live claim. */
  current(number: number, request: FenceRequest, nowMs: number): ClaimRow | null {
    return this.store.transaction(() => {
      this.expireDue(nowMs);
      const claim = this.rows.get(request.claimId);
      return fenceIsCurrent(claim, request, number, nowMs) ? (claim as ClaimRow) : null;
    });
  }

  /**
   * Records a write of the claim `{claimId, fence}` about to be sent, if that claim is issue
   * `number`'s live claim: one transaction, so no grant comes between the fence check and the
   * record (which keeps the issue from any grant until it closes). Null for a stale fence.
   */
  openWrite(
    number: number,
    request: FenceRequest,
    kind: string,
    nowMs: number,
    marginMs: number,
  ): WriteRecord | null {
    return this.store.transaction(() => {
      this.expireDue(nowMs);
      const claim = this.rows.get(request.claimId);
      if (!fenceIsCurrent(claim, request, number, nowMs)) return null;
      const window = writeWindow({ startMs: nowMs, claimExpiresMs: claim.expiresMs, marginMs });
      const record = this.store.writes.open({
        number,
        claimId: request.claimId,
        fence: request.fence,
        kind,
        startedMs: nowMs,
        ...window,
      });
      this.schedules.at("writes", window.closeAtMs);
      return record;
    });
  }

  /**
   * The 409 for a fence that is not the live claim: `stale-fence`, with `reason: "preempted"`
   * and the IDD holder when the claim ended because an earlier IDD claim holds the issue.
   */
  stale(request: FenceRequest): FleetResult {
    const claim = this.rows.get(request.claimId);
    if (claim?.fence !== request.fence || claim.outcome !== "preempted") return staleFence();
    const result = staleFence();
    return {
      ...result,
      body: {
        ...result.body,
        reason: "preempted",
        message: `an IDD claim earlier than this claim's marker holds the issue (${claim.note}); this claim ended`,
        holder: { agentId: claim.note, source: "idd", expiresAt: null },
      },
    };
  }

  /** switchyard's `claimed-by` marker of a claim landed: its issue is re-read after IDD's settle delay. */
  markerPosted(claimId: string, nowMs: number): void {
    const at = preemptCheckAt(nowMs);
    this.rows.setVerify(claimId, at);
    this.schedules.at("verify", at);
  }

  /**
   * Ends a live claim an earlier IDD claim holds the issue against (preemption.ts): its
   * heartbeat and writes answer 409 `stale-fence`, `reason: "preempted"`; its `unclaimed-by`
   * is owed. False when the claim is no longer live (nothing to end).
   */
  preempt(claimId: string, holder: { agentId: string }, nowMs: number): boolean {
    return this.store.transaction(() => {
      this.expireDue(nowMs);
      const claim = this.rows.get(claimId);
      this.rows.setVerify(claimId, null);
      if (!claim || !preemptedBy({ claimLive: isLive(claim, nowMs), iddHolder: holder })) {
        return false;
      }
      this.rows.end(claimId, nowMs, "preempted", holder.agentId);
      this.store.audit(
        "preempted",
        { number: claim.number, claimId, fence: claim.fence, holder: holder.agentId },
        nowMs,
      );
      this.owe(nowMs);
      return true;
    });
  }

  /**
   * Synchronous mirroring (fleet.ts): the grant's marker is being posted by the grant itself,
   * so the `fleet` schedule leaves it alone meanwhile (`skip`), and then it landed (`posted`,
   * verified like any marker) or it did not: the claim ends as never granted (`mirror-failed`,
   * no attempt counted), with its `unclaimed-by` owed when the post may have been applied.
   */
  mirroring(claimId: string): void {
    this.store.transaction(() => this.rows.setMarker(claimId, "skip"));
  }

  mirrored(claimId: string, nowMs: number): void {
    this.store.transaction(() => {
      this.rows.setMarker(claimId, "posted");
      this.markerPosted(claimId, nowMs);
      this.owe(nowMs);
    });
  }

  mirrorFailed(claimId: string, mayBeApplied: boolean, why: string, nowMs: number): void {
    this.store.transaction(() => {
      const claim = this.rows.get(claimId);
      if (!claim) return;
      if (claim.endedMs === null) this.rows.end(claimId, nowMs, "mirror-failed", why);
      this.rows.setMarker(claimId, mayBeApplied ? "posted" : "skip");
      this.store.audit(
        "mirror-failed",
        { number: claim.number, claimId, fence: claim.fence, mayBeApplied, error: why },
        nowMs,
      );
      this.owe(nowMs);
    });
  }

  /** IDD's reading names nobody though the claim is live: its `claimed-by` is owed again. */
  repostMarker(claimId: string, nowMs: number): void {
    this.store.transaction(() => {
      const claim = this.rows.get(claimId);
      this.rows.setVerify(claimId, null);
      if (!claim || !isLive(claim, nowMs)) return;
      this.rows.setMarker(claimId, "repost");
      this.store.audit(
        "marker-reposted",
        { number: claim.number, claimId, fence: claim.fence },
        nowMs,
      );
      this.owe(nowMs);
    });
  }

  /** The write of `record` ended: its record closes now, or a margin later (write-records.ts). */
  finishWrite(record: WriteRecord, end: WriteEnd, nowMs: number, marginMs: number): void {
    finishWrite(this.store, this.schedules, record, end, nowMs, marginMs);
  }

  heartbeat(number: number, request: FenceRequest, nowMs: number): FleetResult {
    return this.store.transaction(() => {
      this.expireDue(nowMs);
      const claim = this.rows.get(request.claimId);
      if (!fenceIsCurrent(claim, request, number, nowMs)) return this.stale(request);
      const row = claim as ClaimRow;
      const expiresMs = nowMs + row.ttlMs;
      this.rows.extend(row.claimId, expiresMs);
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
      const claim = this.rows.get(request.claimId);
      if (!fenceIsCurrent(claim, request, number, nowMs)) return this.stale(request);
      this.rows.end(request.claimId, nowMs, request.outcome, request.note ?? null);
      if (request.outcome === "done") {
        this.rows.setFlag(number, "doneSuppressed", true);
        this.rows.setFlag(number, "removeReady", true);
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

  list(nowMs: number): FleetResult {
    return {
      status: 200,
      body: {
        claims: this.rows.live(nowMs).map((c) => ({
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

  /** Ends claims past their expiry (a dead claim is dead whether or not the alarm ran). */
  expireDue(nowMs: number): number {
    const expired = this.rows.expiredOpen(nowMs);
    for (const c of expired) {
      this.rows.end(c.claimId, c.expiresMs, "expired", null);
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

  /** The alarm's `claims` schedule: end expired claims, then wait for the next expiry. */
  runExpiry(nowMs: number): void {
    this.store.transaction(() => this.expireDue(nowMs));
    this.armExpiry();
  }

  private afterAttempt(number: number, outcome: "expired" | ReleaseOutcome, nowMs: number): void {
    if (!countsAsAttempt(outcome)) return;
    const fleet = this.rows.fleet(number);
    if (fleet.stuck) return;
    const attempts = this.rows.attempts(number, fleet.resetFence);
    if (!isStuckAfter(attempts.length, this.store.config())) return;
    this.rows.setFlag(number, "stuck", true);
    this.rows.setFlag(number, "removeReady", true);
    this.store.audit("stuck", { number, attempts: attempts.length }, nowMs);
  }

  /** Arms the alarm for the earliest live claim's expiry. */
  private armExpiry(): void {
    const next = this.rows.nextExpiryMs();
    if (next !== null) this.schedules.at("claims", next);
  }

  /** Issues the producer must not label ready: `done` until kicked, and dead letters. */
  exclusions(): { suppressed: Set<number>; excluded: Set<number> } {
    const suppressed = new Set<number>();
    const excluded = new Set<number>();
    for (const f of this.rows.fleetRows()) {
      if (f.doneSuppressed) suppressed.add(f.number);
      if (f.stuck) excluded.add(f.number);
    }
    return { suppressed, excluded };
  }

  /** A kick targets these issues again: a `done` release no longer keeps them out. */
  liftSuppression(numbers: Iterable<number>): void {
    for (const n of numbers) {
      this.rows.setFlag(n, "doneSuppressed", false);
      // The `done` release's owed removal of the ready label is moot now: it must not strip the
      // label the producer puts back for this kick.
      if (!this.rows.fleet(n).stuck) this.rows.setFlag(n, "removeReady", false);
    }
  }
}

/** While the breaker is red: since when (`X-Switchyard-Paused`) and when to ask again. */
function withPauseHeaders(result: FleetResult, since: string): FleetResult {
  return {
    ...result,
    headers: {
      ...result.headers,
      "x-switchyard-paused": since,
      "retry-after": String(PAUSED_RETRY_AFTER_SECONDS),
    },
  };
}

function withBody(result: FleetResult, extra: object): FleetResult {
  return { ...result, body: { ...result.body, ...extra } };
}
