import type { OwedWrite } from "../../../shared/claims/owed.ts";
import type { ClaimKind } from "../../../shared/claims/policy.ts";
import type { Attempt } from "../../../shared/claims/rules.ts";
import type { QueueOrder } from "../../../shared/queue/order.ts";
import type { QueueKind } from "../../../shared/queue/queue.ts";

// What the fleet API's operations take and answer inside a RepoObject (spec 6.4); the routes
// validate requests with zod (shared/fleet/schemas.ts) before they get here.

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
  /** Items of these kinds (a `reply` also matches an item carrying one); absent: every kind. */
  kinds?: readonly QueueKind[];
}

export interface ClaimRequest {
  agentId: string;
  ttlSeconds?: number;
  machine?: string;
  capabilities?: readonly string[];
  /** claim-next: the kinds it may take (default kick, rollup, ready). */
  kinds?: readonly QueueKind[];
  /** A direct claim: `work` (default when the issue has work) or `reply`. */
  kind?: ClaimKind;
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

export const conflict = (reason: string, message: string, holder?: unknown): FleetResult => ({
  status: 409,
  body: { error: "conflict", reason, message, ...(holder ? { holder } : {}) },
});

export const staleFence = (): FleetResult => ({
  status: 409,
  body: {
    error: "stale-fence",
    message:
      "that claim id and fence are not the issue's live claim (expired, released or unknown)",
  },
});

export const notFound = (number: number): FleetResult => ({
  status: 404,
  body: { error: "not-found", message: `issue #${number} is not known in this repository` },
});
