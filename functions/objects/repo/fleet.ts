import type { BudgetDecision } from "../../../shared/budget/write-budget.ts";
import { grantWaitsForReleases, waitBeforeClaimMs } from "../../../shared/claims/owed.ts";
import {
  MIRROR_FAILED_RETRY_SECONDS,
  mirrorsSynchronously,
} from "../../../shared/claims/preemption.ts";
import { WRITE_SETTLE_MARGIN_MS } from "../../../shared/claims/write-records.ts";
import { GitHubApiError } from "../../../shared/github/errors.ts";
import { createComment } from "../../../shared/github/writes.ts";
import type { RepoContext } from "./context.ts";
import { type FencedOp, fencedWrite } from "./fenced-write.ts";
import type {
  ClaimRequest,
  FenceRequest,
  FleetResult,
  QueueRequest,
  ReleaseOutcome,
} from "./fleet-api.ts";
import { conflict } from "./fleet-api.ts";
import { claimedByBody, flushFleetWrites, performOwed } from "./fleet-writes.ts";
import { owePush } from "./owner-push.ts";
import { pause } from "./pause.ts";

// The fleet API's calls on a RepoObject (spec 6.4): each waits for what it reads synchronously
// (the compact graph, the queue view) to be made in steps, webhooks between, then runs in one
// transaction. The queue is queue.ts, grants and fences claims.ts, GitHub writes for a holder
// fenced-write.ts, and the writes switchyard owes for the fleet fleet-writes.ts.

/** A repository that is not active answers like an unknown one. */
export function inactive(c: RepoContext): FleetResult | null {
  if (c.active()) return null;
  return {
    status: 404,
    body: { error: "not-found", message: "the repository is not installed" },
  };
}

async function fleetCall(
  c: RepoContext,
  run: () => FleetResult,
  viewAt: number | null = null,
  /** Whether a success changes what anyone may claim (the owner's head is pushed again). */
  changes = false,
): Promise<FleetResult> {
  if (inactive(c) === null) {
    await c.store.prepareGraph(pause);
    // The queue and a grant read the queue view synchronously: it is made ahead, in steps.
    if (viewAt !== null) await c.views.prepare(viewAt, pause);
  }
  const result = inactive(c) ?? run();
  if (changes && result.status >= 200 && result.status < 300) owePush(c, Date.now());
  await c.schedules.rearm();
  return result;
}

/** The claimable issues for one caller. */
export function workQueue(c: RepoContext, request: QueueRequest, nowMs: number) {
  return fleetCall(c, () => c.views.answer(request, nowMs), nowMs);
}

/**
 * Claims issue `number`, or the queue's first available issue when `number` is null. Where IDD
 * agents work (trusted markers seen within `idd.staleHours`), the grant's `claimed-by` marker
 * is posted before the answer; if it cannot be, nothing is granted (503 `mirror-failed`).
 */
export async function claim(
  c: RepoContext,
  number: number | null,
  request: ClaimRequest,
  nowMs: number,
): Promise<FleetResult> {
  const start = Date.now();
  const result = await fleetCall(c, () => c.claims.grant(number, request, nowMs), nowMs, true);
  return mirrorIfIddWorks(c, result, nowMs, start);
}

/**
 * Synchronous mirroring for a grant just made: where IDD agents work (trusted markers seen
 * within `idd.staleHours`), its `claimed-by` is posted before the answer (mirrorGrant).
 */
async function mirrorIfIddWorks(
  c: RepoContext,
  result: FleetResult,
  nowMs: number,
  start: number,
): Promise<FleetResult> {
  if (result.status !== 201) return result;
  const view = c.views.current(nowMs);
  const sync = mirrorsSynchronously({
    mirrorClaims: view.config.idd.mirrorClaims,
    iddSeenMs: view.iddSeenMs,
    nowMs,
    staleHours: view.config.idd.staleHours,
  });
  if (!sync) return result;
  return mirrorGrant(c, result, () => nowMs + (Date.now() - start));
}

/** Posts a grant's `claimed-by` marker before answering (synchronous mirroring). */
async function mirrorGrant(
  c: RepoContext,
  granted: FleetResult,
  now: () => number,
): Promise<FleetResult> {
  const { claimId } = granted.body as { claimId: string };
  const row = c.store.claims.get(claimId)!;
  c.claims.mirroring(claimId);
  const failed = async (mayBeApplied: boolean, why: string, retryAtMs?: number | null) => {
    c.claims.mirrorFailed(claimId, mayBeApplied, why, now());
    await c.schedules.rearm();
    const seconds =
      retryAtMs == null
        ? MIRROR_FAILED_RETRY_SECONDS
        : Math.max(1, Math.ceil((retryAtMs - Date.now()) / 1000));
    return {
      status: 503,
      body: {
        error: "unavailable",
        reason: "mirror-failed",
        message: `IDD agents work on this repository, so a grant is mirrored as a claimed-by marker before it is answered, and that failed: ${why}; nothing was granted`,
      },
      headers: { "retry-after": String(seconds) },
    };
  };
  // Owed `unclaimed-by` markers go first: the issue's own (or IDD's reading would ignore this
  // claim's marker), then a few of the repository's others (or grants would outrun releases for
  // the budget). All of them and this marker must fit the budget, or the grant waits; GitHub
  // refusing a release does not hold it back (the marker's verification mends IDD's reading
  // then: preemption.ts). shared/claims/owed.ts, releasesBeforeGrant.
  const fullName = c.store.identity()!.fullName;
  const client = c.client(`mirror the claim on ${fullName}#${row.number}`);
  const owed = c.owed.takeReleasesBefore(row.number, now());
  const releases = owed.writes;
  let budget: BudgetDecision | { unreachable: string };
  try {
    budget = await c.installation().reserveWritesUpTo(1 + releases.length);
    for (const release of releases.slice(0, budget.granted)) {
      await performOwed(c.owed, release, client, fullName, c.store.config().labels).catch(
        () => undefined,
      );
    }
  } catch (error) {
    // The InstallationObject did not answer (unreachable, its storage failing): no room, as
    // with a spent budget, and the claim must not stay granted without its marker.
    budget = { unreachable: error instanceof Error ? error.message : String(error) };
  } finally {
    owed.give();
  }
  if ("unreachable" in budget) {
    return failed(
      false,
      `the installation's GitHub write budget could not be reached: ${budget.unreachable}`,
    );
  }
  if (grantWaitsForReleases(budget.granted, releases.length)) {
    const why =
      releases.length > 0
        ? `the installation's GitHub write budget is spent (the unclaimed-by markers of ${releases.length} earlier claim(s) go first)`
        : "the installation's GitHub write budget is spent";
    return failed(false, why, budget.retryAtMs);
  }
  // The marker lands in a later second than the last release, whichever path posted it
  // (IDD reads a second's claims first).
  const waitMs = waitBeforeClaimMs(owed.releasedMs(), Date.now());
  if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  try {
    await createComment(client, fullName, row.number, claimedByBody(row));
  } catch (error) {
    const mayBeApplied = !(error instanceof GitHubApiError) || error.outcome === "unknown";
    return failed(mayBeApplied, error instanceof Error ? error.message : String(error));
  }
  c.claims.mirrored(claimId, now());
  await c.schedules.rearm();
  return granted;
}

/**
 * A grant for the owner's org claim-next (functions/objects/owner/): only while the repository
 * belongs to installation `installationId` (a repository transferred or removed is out of reach
 * at once), and, for a pushed item (`number`), only if this caller's claim-next could take it
 * now: a stale push (claimed since, closed, released `done`, over a limit) is refused with
 * `reason: stale` and the head is pushed again. `number` null: this repository's claim-next.
 */
export async function orgClaim(
  c: RepoContext,
  number: number | null,
  request: ClaimRequest,
  installationId: number,
  nowMs: number,
): Promise<FleetResult> {
  const start = Date.now();
  const result = await fleetCall(
    c,
    () => {
      if (c.store.identity()?.installationId !== installationId) {
        return {
          status: 403,
          body: {
            error: "forbidden",
            message: "the repository does not belong to that installation (any more)",
          },
        };
      }
      if (number !== null && !c.views.offers(c.views.current(nowMs), number, request, nowMs)) {
        owePush(c, nowMs);
        return conflict("stale", `issue #${number} is no longer claimable here`);
      }
      return c.claims.grant(number, request, nowMs);
    },
    nowMs,
    true,
  );
  // Its grant is mirrored like any other (synchronously where IDD agents work).
  return mirrorIfIddWorks(c, result, nowMs, start);
}

export function heartbeat(c: RepoContext, number: number, request: FenceRequest, nowMs: number) {
  return fleetCall(c, () => c.claims.heartbeat(number, request, nowMs), null, true);
}

export function release(
  c: RepoContext,
  number: number,
  request: FenceRequest & { outcome: ReleaseOutcome; note?: string },
  nowMs: number,
): Promise<FleetResult> {
  return fleetCall(c, () => c.claims.release(number, request, nowMs), null, true);
}

export function liveClaims(c: RepoContext, nowMs: number): FleetResult {
  return inactive(c) ?? c.claims.list(nowMs);
}

/** A GitHub write on behalf of a claim holder, done only while its fence is current. */
export async function write(
  c: RepoContext,
  number: number,
  request: FenceRequest,
  op: FencedOp,
  nowMs: number,
): Promise<FleetResult> {
  const start = Date.now();
  const notActive = inactive(c);
  if (notActive) return notActive;
  if (c.archived()) {
    return {
      status: 409,
      body: { error: "archived", message: "the repository is archived: it is read-only" },
    };
  }
  // The name is read when the write goes out, not now: a rename may land during the budget wait.
  const fullName = () => c.store.identity()!.fullName;
  return fencedWrite(c.claims, c.views, c.store, {
    number,
    request,
    op,
    fullName,
    client: () => c.client(`write to ${fullName()}#${number} for a claim`),
    installation: c.installation(),
    now: () => nowMs + (Date.now() - start),
    marginMs: c.envMs("FENCED_WRITE_MARGIN_MS", WRITE_SETTLE_MARGIN_MS),
    rearm: () => c.schedules.rearm(),
  });
}

/** The `fleet` schedule: the writes switchyard owes GitHub for the fleet (fleet-writes.ts). */
export async function flushOwedWrites(c: RepoContext, fullName: string): Promise<void> {
  if (c.archived()) return;
  await flushFleetWrites(c.owed, {
    client: () => c.client(`apply the fleet writes of ${fullName}`),
    installation: c.installation(),
    fullName: () => c.store.identity()?.fullName ?? fullName,
    schedules: c.schedules,
    labels: () => c.store.config().labels,
    stillActive: (generation) => c.store.stillActive(generation),
    generation: c.store.generation(),
  });
}
