import type { BudgetDecision } from "../../../shared/budget/write-budget.ts";
import {
  markersFreeToFlush,
  nextOwedWrite,
  owesRelease,
  releasesBeforeGrant,
} from "../../../shared/claims/owed.ts";
import { stuckComment } from "../../../shared/claims/rules.ts";
import type { LabelNames } from "../../../shared/config/schema.ts";
import type { GitHubClient } from "../../../shared/github/client.ts";
import { isRetryable } from "../../../shared/github/errors.ts";
import { addLabels, createComment, removeLabel } from "../../../shared/github/writes.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import { renderClaimedBy, renderUnclaimedBy } from "../../../shared/idd/comment-markers.ts";
import { truncateToSecond } from "../../../shared/idd/timestamp.ts";
import type { Claims } from "./claims.ts";
import type { ClaimRow } from "./claims-store.ts";
import type { FleetWrite } from "./fleet-api.ts";
import type { RepoStore } from "./repo-store.ts";
import type { Schedules } from "./schedules-store.ts";

export interface FleetWriteContext {
  client: () => GitHubClient;
  installation: { reserveWrites(n: number): Promise<BudgetDecision> | BudgetDecision };
  /** The repository's current name, read right before each write (a rename may land meanwhile). */
  fullName: () => string;
  schedules: Schedules;
  labels: () => LabelNames;
  stillActive: (generation: number) => boolean;
  generation: number;
}

/**
 * The writes switchyard owes GitHub for the fleet (IDD mirror markers, the processing label,
 * ready-label removals, the dead letter's label and comment), as rows the alarm's `fleet`
 * schedule performs (`flushFleetWrites`). Deciding what is owed is `nextOwedWrite` in
 * shared/claims/owed.ts.
 */
export class OwedWrites {
  private readonly store: RepoStore;
  private readonly claims: Claims;
  /**
   * Writes being performed now, by key (memory only): the alarm's flush and a synchronous grant
   * (fleet.ts, `mirrorGrant`) may both find the same write owed; the second waits for the first
   * instead of posting it again.
   */
  private readonly running = new Map<string, Promise<void>>();
  /**
   * Claims whose `unclaimed-by` a synchronous grant has taken to post (memory only), from its
   * read of what is owed until it has posted them: concurrent grants and the flush leave them
   * alone, so no two paths reserve budget for the same release (the second's room was wasted).
   * The flush leaves every marker of their issues alone too (markersFreeToFlush), so a later
   * claim's `claimed-by` never lands before the release.
   */
  private readonly taken = new Set<string>();
  /**
   * When GitHub last answered an `unclaimed-by` on each issue (memory only): a grant of that
   * issue waits a full second after it, whichever path posted it (`waitBeforeClaimMs`), and the
   * flush holds the issue's `claimed-by` back as long (`nextOwedWrite`'s `releasedMs`).
   */
  private readonly releasedAt = new Map<number, number>();

  constructor(store: RepoStore, claims: Claims) {
    this.store = store;
    this.claims = claims;
  }

  /**
   * The next write switchyard owes GitHub for the fleet, or null, with the time the flush must
   * run again though nothing else is owed (`againAtMs`: a processing label due for renewal, a
   * `claimed-by` held back for the gap after its issue's last release), if any. Writes that
   * became pointless meanwhile are dropped here, which is what makes them coalesce: a claim
   * granted and released between two flushes posts nothing.
   */
  next(nowMs: number): { write: FleetWrite | null; againAtMs: number | null } {
    const rows = this.store.claims;
    return this.store.transaction(() => {
      this.claims.expireDue(nowMs);
      const live = new Set(rows.live(nowMs).map((c) => c.number));
      const issues = new Map(rows.fleetRows().map((f) => [f.number, f]));
      for (const n of live) if (!issues.has(n)) issues.set(n, rows.fleet(n));
      const decision = nextOwedWrite({
        nowMs,
        config: this.store.config(),
        // Not only the taken claims: every marker of their issues waits for the grant's
        // release, or a later claim's claimed-by could land before it (issue 21).
        claims: markersFreeToFlush(rows.markersDue(), this.taken),
        live,
        issues: [...issues.values()],
        labelsOf: (n) => this.store.issueLabels(n),
        // Whichever path posted the issue's last release (a grant or this flush).
        releasedMs: (n) => this.releasedAt.get(n) ?? null,
      });
      for (const claimId of decision.skipMarkers) rows.setMarker(claimId, "skip");
      for (const { number, flag } of decision.settled) rows.setFlag(number, flag, false);
      const later = [decision.renewAtMs, decision.claimAtMs].filter((t) => t !== null);
      const againAtMs = later.length > 0 ? Math.min(...later) : null;
      const write = decision.write;
      if (write?.kind === "stuck-comment") {
        const fleet = rows.fleet(write.number);
        return {
          write: { ...write, attempts: rows.attempts(write.number, fleet.resetFence) },
          againAtMs,
        };
      }
      return { write: write as FleetWrite | null, againAtMs };
    });
  }

  /**
   * Takes the `unclaimed-by` markers a synchronous grant of issue `number` posts before its
   * own: the issue's own, then a few of the repository's others that no other path is posting
   * (shared/claims/owed.ts). `give` hands them back once posted (or not). `releasedMs`: when
   * GitHub last answered an `unclaimed-by` on the issue, by any path.
   */
  takeReleasesBefore(
    number: number,
    nowMs: number,
  ): { writes: FleetWrite[]; give: () => void; releasedMs: () => number | null } {
    const busy = (claim: ClaimRow) =>
      this.taken.has(claim.claimId) ||
      this.running.has(OwedWrites.key({ kind: "unclaimed-marker", claim }));
    const { own, others } = this.store.transaction(() =>
      releasesBeforeGrant(
        this.store.claims.markersDue().filter((c) => c.number === number || !busy(c)),
        number,
        nowMs,
      ),
    );
    const claims = [...own, ...others];
    // The issue's own may be taken already (by a path posting it now): only what this call
    // took is handed back by it.
    const took = claims.filter((c) => !this.taken.has(c.claimId));
    for (const c of took) this.taken.add(c.claimId);
    return {
      writes: claims.map((claim) => ({ kind: "unclaimed-marker" as const, claim })),
      give: () => {
        for (const c of took) this.taken.delete(c.claimId);
        // The flush left these issues' markers alone meanwhile (markersFreeToFlush): it runs
        // again for them.
        if (took.length > 0) this.claims.owe(Date.now());
      },
      releasedMs: () => this.releasedAt.get(number) ?? null,
    };
  }

  /** Records a write GitHub accepted (or refused for good), so it is never owed again. */
  done(write: FleetWrite, nowMs: number, dropped: string | null = null): void {
    const rows = this.store.claims;
    const labels = this.store.config().labels;
    this.store.transaction(() => {
      switch (write.kind) {
        case "claimed-marker":
          rows.setMarker(write.claim.claimId, "posted");
          // Verified like an IDD agent verifies its claim (shared/claims/preemption.ts).
          if (!dropped) this.claims.markerPosted(write.claim.claimId, nowMs);
          break;
        case "unclaimed-marker":
          rows.setMarker(write.claim.claimId, "released");
          if (!dropped) this.releasedAt.set(write.claim.number, nowMs);
          break;
        case "processing-add":
        case "processing-renew":
          rows.setFlag(write.number, "processing", true);
          rows.setProcessingMs(write.number, nowMs);
          if (!dropped) this.store.applyOwnLabelWrite(write.number, labels.processing, "add");
          break;
        case "processing-remove":
          rows.setFlag(write.number, "processing", false);
          rows.setProcessingMs(write.number, null);
          if (!dropped) this.store.applyOwnLabelWrite(write.number, labels.processing, "remove");
          break;
        case "remove-ready":
          rows.setFlag(write.number, "removeReady", false);
          if (!dropped) this.store.applyOwnLabelWrite(write.number, labels.ready, "remove");
          break;
        case "add-ready":
          rows.setFlag(write.number, "addReady", false);
          if (!dropped) this.store.applyOwnLabelWrite(write.number, labels.ready, "add");
          break;
        case "stuck-label":
          rows.setFlag(write.number, "stuckLabeled", true);
          rows.setStuckMs(write.number, nowMs);
          if (!dropped) this.store.applyOwnLabelWrite(write.number, labels.stuck, "add");
          break;
        case "stuck-comment":
          rows.setFlag(write.number, "stuckCommented", true);
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

  /**
   * Whether a release read as owed a while ago still is: the alarm's flush and a synchronous
   * grant each read what is owed, then wait (for the budget, for GitHub); whichever comes second
   * must not post the same `unclaimed-by` again. The flush reads its other writes afresh.
   */
  stillOwed(write: FleetWrite): boolean {
    if (write.kind !== "unclaimed-marker") return true;
    const row = this.store.claims.get(write.claim.claimId);
    return row !== undefined && owesRelease(row, Date.now());
  }

  /** The write's performance under way, if one is (`performOwed`). */
  inFlight(write: FleetWrite): Promise<void> | undefined {
    return this.running.get(OwedWrites.key(write));
  }

  /** Marks `write` in flight until `performing` settles; returns `performing`. */
  track(write: FleetWrite, performing: Promise<void>): Promise<void> {
    const key = OwedWrites.key(write);
    const settled = performing.then(
      () => undefined,
      () => undefined,
    );
    this.running.set(key, settled);
    void settled.then(() => {
      if (this.running.get(key) === settled) this.running.delete(key);
    });
    return performing;
  }

  private static key(write: FleetWrite): string {
    return "claim" in write
      ? `${write.kind}:${write.claim.claimId}`
      : `${write.kind}:${write.number}`;
  }

  /** Same write still owed? (It may have become pointless while the budget was reserved.) */
  static same(a: FleetWrite | null, b: FleetWrite): boolean {
    if (a === null || a.kind !== b.kind) return false;
    if ("claim" in a && "claim" in b) return a.claim.claimId === b.claim.claimId;
    return "number" in a && "number" in b && a.number === b.number;
  }
}

/** The `claimed-by` marker mirroring a claim. */
export function claimedByBody(c: {
  agentId: string;
  claimId: string;
  branch: string;
  grantedMs: number;
  marker: string;
}): string {
  return renderClaimedBy({
    agentId: c.agentId,
    claimId: c.claimId,
    supersedes: null,
    // Posted again (IDD's reading ignored the first): a claim made now, as IDD reads it.
    timestamp: second(c.marker === "repost" ? Date.now() : c.grantedMs),
    branch: c.branch,
  });
}

/** How many writes one alarm run performs at most before yielding to the next. */
const WRITES_PER_RUN = 50;

const second = (ms: number) => truncateToSecond(formatInstant(ms));

/** Content writes a fleet write makes (a renewal removes and adds the label). */
const costOf = (write: FleetWrite) => (write.kind === "processing-renew" ? 2 : 1);

async function perform(
  write: FleetWrite,
  client: GitHubClient,
  repo: string,
  labels: LabelNames,
): Promise<void> {
  switch (write.kind) {
    case "claimed-marker": {
      await createComment(client, repo, write.claim.number, claimedByBody(write.claim));
      return;
    }
    case "unclaimed-marker": {
      const c = write.claim;
      const body = renderUnclaimedBy({
        agentId: c.agentId,
        claimId: c.claimId,
        timestamp: second(c.endedMs ?? c.expiresMs),
      });
      await createComment(client, repo, c.number, body);
      return;
    }
    case "processing-add":
      await addLabels(client, repo, write.number, [labels.processing]);
      return;
    case "processing-renew":
      // Sweep agents read the label's age from its `labeled` event: only a new one renews it.
      await removeLabel(client, repo, write.number, labels.processing);
      await addLabels(client, repo, write.number, [labels.processing]);
      return;
    case "processing-remove":
      await removeLabel(client, repo, write.number, labels.processing);
      return;
    case "remove-ready":
      await removeLabel(client, repo, write.number, labels.ready);
      return;
    case "add-ready":
      await addLabels(client, repo, write.number, [labels.ready]);
      return;
    case "stuck-label":
      await addLabels(client, repo, write.number, [labels.stuck]);
      return;
    case "stuck-comment":
      await createComment(client, repo, write.number, stuckComment(write.attempts, labels.stuck));
      return;
  }
}

/**
 * Performs one owed write and records it. A retryable failure is thrown (the write stays owed);
 * one GitHub will never accept (the issue is gone, say) is dropped rather than wedge the queue.
 * A write already being performed (by the alarm's flush or a grant) is not sent again: this
 * waits for that one to settle (if it failed, the write is still owed for the next flush).
 */
export async function performOwed(
  owed: OwedWrites,
  write: FleetWrite,
  client: GitHubClient,
  repo: string,
  labels: LabelNames,
): Promise<void> {
  const running = owed.inFlight(write);
  if (running) return running;
  if (!owed.stillOwed(write)) return Promise.resolve();
  return owed.track(
    write,
    (async () => {
      try {
        await perform(write, client, repo, labels);
        owed.done(write, Date.now());
      } catch (error) {
        if (isRetryable(error)) throw error;
        owed.done(write, Date.now(), error instanceof Error ? error.message : String(error));
      }
    })(),
  );
}

/**
 * The `fleet` schedule: performs the writes the fleet owes GitHub, one at a time, each inside
 * the installation's write budget (shared with the producer, on a queue of its own so neither
 * waits behind the other). What became pointless while waiting is never written. A
 * `claimed-by` due less than a second after its issue's last `unclaimed-by` is not waited for
 * here: the rest goes ahead, and the schedule runs again when the gap ends.
 */
export async function flushFleetWrites(owed: OwedWrites, ctx: FleetWriteContext): Promise<void> {
  const nothingOwed = (againAtMs: number | null) => {
    if (againAtMs !== null) ctx.schedules.at("fleet", againAtMs);
  };
  for (let i = 0; i < WRITES_PER_RUN; i++) {
    if (!ctx.stillActive(ctx.generation)) return;
    const { write, againAtMs } = owed.next(Date.now());
    if (write === null) return nothingOwed(againAtMs);
    const cost = costOf(write);
    const budget = await ctx.installation.reserveWrites(cost);
    if (budget.granted < cost) {
      ctx.schedules.at("fleet", budget.retryAtMs ?? Date.now() + 60_000);
      return;
    }
    if (!ctx.stillActive(ctx.generation)) return;
    // What is owed now: a release while waiting for the budget may have made `write` pointless;
    // the room reserved goes to whatever is owed instead, if it fits.
    const { write: current, againAtMs: currentAgainAtMs } = owed.next(Date.now());
    if (current === null) return nothingOwed(currentAgainAtMs);
    const next = OwedWrites.same(current, write) || costOf(current) <= cost ? current : null;
    if (next === null) continue;
    // Name and client read together, after the budget wait: both address this repository now.
    const repo = ctx.fullName();
    const client = ctx.client();
    await performOwed(owed, next, client, repo, ctx.labels());
  }
  ctx.schedules.at("fleet", Date.now());
}
