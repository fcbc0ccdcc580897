import { WRITE_SETTLE_MARGIN_MS } from "../../../shared/claims/write-records.ts";
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
import { flushFleetWrites } from "./fleet-writes.ts";
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

/** Claims issue `number`, or the queue's first available issue when `number` is null. */
export function claim(
  c: RepoContext,
  number: number | null,
  request: ClaimRequest,
  nowMs: number,
): Promise<FleetResult> {
  return fleetCall(c, () => c.claims.grant(number, request, nowMs), nowMs, true);
}

/**
 * A grant for the owner's org claim-next (functions/objects/owner/): only while the repository
 * belongs to installation `installationId` (a repository transferred or removed is out of reach
 * at once), and, for a pushed item (`number`), only if this caller's claim-next could take it
 * now: a stale push (claimed since, closed, released `done`, over a limit) is refused with
 * `reason: stale` and the head is pushed again. `number` null: this repository's claim-next.
 */
export function orgClaim(
  c: RepoContext,
  number: number | null,
  request: ClaimRequest,
  installationId: number,
  nowMs: number,
): Promise<FleetResult> {
  return fleetCall(
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
