import type { Config } from "../config/schema.ts";
import { isLive, processingRenewalDueMs } from "./rules.ts";

/**
 * The GitHub writes the fleet API owes (spec 6.4): IDD mirror markers, the processing label and
 * its renewal, the ready label after `done` or a lifted dead letter, the stuck label and its
 * comment. Pure: the RepoObject reads the rows, asks for the next write, performs it within the
 * write budget, and records it. Deciding again each time is what coalesces: a claim granted and
 * released between two decisions owes nothing.
 */

/**
 * A claim as the mirror reads it (`marker`: none, posted, released, skip = never, or repost:
 * posted once, and owed again because IDD's reading ignored it, shared/claims/preemption.ts).
 */
export interface OwedClaim {
  claimId: string;
  number: number;
  agentId: string;
  branch: string;
  grantedMs: number;
  expiresMs: number;
  endedMs: number | null;
  marker: "none" | "posted" | "released" | "skip" | "repost";
}

/** An issue's fleet state as the mirror reads it. */
export interface OwedIssue {
  number: number;
  processing: boolean;
  processingMs: number | null;
  removeReady: boolean;
  addReady: boolean;
  stuck: boolean;
  stuckLabeled: boolean;
  stuckCommented: boolean;
}

export type OwedWrite =
  | { kind: "claimed-marker" | "unclaimed-marker"; claim: OwedClaim }
  | {
      kind:
        | "processing-add"
        | "processing-remove"
        | "processing-renew"
        | "remove-ready"
        | "add-ready"
        | "stuck-label";
      number: number;
    }
  | { kind: "stuck-comment"; number: number };

export interface OwedInput {
  nowMs: number;
  config: Config;
  /** Claims whose marker may be owed (not yet posted, or posted and since ended), by fence. */
  claims: readonly OwedClaim[];
  /** Issues with a live claim. */
  live: ReadonlySet<number>;
  /** Issues with fleet state (and every issue with a live claim), any order. */
  issues: readonly OwedIssue[];
  /** The issue's stored labels (null: unknown issue). */
  labelsOf: (number: number) => readonly string[] | null;
  /**
   * When GitHub last answered an `unclaimed-by` on the issue, by any path (null: none known).
   * A `claimed-by` of the issue is held back until a full second after it (waitBeforeClaimMs).
   */
  releasedMs?: (number: number) => number | null;
}

export interface OwedDecision {
  write: OwedWrite | null;
  /** When a processing label falls due for renewal (nothing owed before then), or null. */
  renewAtMs: number | null;
  /**
   * When the first `claimed-by` held back for the gap after its issue's last release may be
   * posted, or null (none held back). The writes owed meanwhile are decided without it.
   */
  claimAtMs: number | null;
  /** Claims that will never need a marker (ended unposted, or mirroring off): mark them so. */
  skipMarkers: string[];
  /** Label changes that became moot (the label is already as wanted): clear these flags. */
  settled: Array<{ number: number; flag: "removeReady" | "addReady" }>;
}

export function nextOwedWrite(input: OwedInput): OwedDecision {
  const { nowMs, config } = input;
  const mirror = config.idd.mirrorClaims;
  const decision: OwedDecision = {
    write: null,
    renewAtMs: null,
    claimAtMs: null,
    skipMarkers: [],
    settled: [],
  };
  const found = (write: OwedWrite) => ({ ...decision, write });
  // A `claimed-by` lands in a later second than its issue's last `unclaimed-by` (IDD reads a
  // second's claims first): until then it is held back, and the rest goes ahead.
  const heldBack = (c: OwedClaim) => {
    const waitMs = waitBeforeClaimMs(input.releasedMs?.(c.number) ?? null, nowMs);
    if (waitMs === 0) return false;
    const at = nowMs + waitMs;
    decision.claimAtMs = decision.claimAtMs === null ? at : Math.min(decision.claimAtMs, at);
    return true;
  };

  // Markers first, oldest fence first: an earlier claim's release precedes a later claim.
  for (const c of input.claims) {
    if (c.marker === "none") {
      if (mirror && isLive(c, nowMs)) {
        if (heldBack(c)) continue;
        return found({ kind: "claimed-marker", claim: c });
      }
      decision.skipMarkers.push(c.claimId);
    } else if (c.marker === "repost" && isLive(c, nowMs)) {
      if (mirror && !heldBack(c)) return found({ kind: "claimed-marker", claim: c });
    } else if (owesRelease(c, nowMs)) {
      return found({ kind: "unclaimed-marker", claim: c });
    }
  }

  const ready = config.labels.ready;
  for (const f of [...input.issues].sort((a, b) => a.number - b.number)) {
    const wanted = mirror && input.live.has(f.number);
    if (wanted && !f.processing) return found({ kind: "processing-add", number: f.number });
    if (!wanted && f.processing) return found({ kind: "processing-remove", number: f.number });
    if (wanted && f.processingMs !== null) {
      const due = processingRenewalDueMs(f.processingMs, config);
      if (due <= nowMs) return found({ kind: "processing-renew", number: f.number });
      decision.renewAtMs = decision.renewAtMs === null ? due : Math.min(decision.renewAtMs, due);
    }
    const labels = input.labelsOf(f.number);
    if (f.removeReady) {
      if (labels?.includes(ready)) return found({ kind: "remove-ready", number: f.number });
      decision.settled.push({ number: f.number, flag: "removeReady" });
    }
    if (f.addReady) {
      if (labels !== null && !labels.includes(ready))
        return found({ kind: "add-ready", number: f.number });
      decision.settled.push({ number: f.number, flag: "addReady" });
    }
    if (f.stuck && !f.stuckLabeled) return found({ kind: "stuck-label", number: f.number });
    if (f.stuck && !f.stuckCommented) return found({ kind: "stuck-comment", number: f.number });
  }
  return decision;
}

/**
 * The markers the alarm's flush decides on (nextOwedWrite) while other paths post some
 * releases (`taken`: claims whose `unclaimed-by` a synchronous grant is posting): none of an
 * issue with a taken release, not only the taken claim's. A later claim of that issue owes its
 * `claimed-by` after that release, and the grant posts the release on its own time: a
 * `claimed-by` landing first is read while the earlier claim is still active, and ignored. The
 * flush decides again once the release is posted or handed back (the grant's end owes a flush).
 */
export function markersFreeToFlush<C extends Pick<OwedClaim, "claimId" | "number">>(
  claims: readonly C[],
  taken: ReadonlySet<string>,
): C[] {
  const held = new Set(claims.filter((c) => taken.has(c.claimId)).map((c) => c.number));
  return claims.filter((c) => !held.has(c.number));
}

/** Whether a claim owes its `unclaimed-by`: its `claimed-by` is on GitHub and it has ended. */
export function owesRelease(
  c: Pick<OwedClaim, "marker" | "expiresMs" | "endedMs">,
  nowMs: number,
): boolean {
  return (c.marker === "posted" || c.marker === "repost") && !isLive(c, nowMs);
}

/** How many other issues' owed `unclaimed-by` markers one synchronous grant pays first. */
export const RELEASES_PAID_PER_GRANT = 3;

/**
 * The `unclaimed-by` markers a synchronous grant of issue `number` posts before its own marker,
 * oldest fence first:
 * - `own`: the issue's earlier claims. IDD reads one marker per comment (a comment is a marker
 *   only when the token is its first bytes and at most one italic note line follows), so an old
 *   claim's release cannot ride in the new claim's comment; and IDD's reading ignores a fresh
 *   claim while another is active, so the release must land first or IDD's reading would name
 *   nobody (then the old claim) instead of the new holder.
 * - `others`: the repository's other owed releases, at most RELEASES_PAID_PER_GRANT. A grant's
 *   marker and a release's draw on the same write budget, and a grant answers at once while a
 *   release waits for the alarm's flush: with the budget spent, grants took every slot that
 *   freed and releases fell behind without bound (IDD agents then read released issues as still
 *   held; `npm run bench -- claims` saw 100 owed after two minutes). Releases first keeps that
 *   debt bounded.
 * The grant goes on only when the budget has room for all of them and its own marker
 * (grantWaitsForReleases); GitHub refusing a release does not hold it back (these writes open no
 * write record).
 */
export function releasesBeforeGrant(
  claims: readonly OwedClaim[],
  number: number,
  nowMs: number,
): { own: OwedClaim[]; others: OwedClaim[] } {
  const owed = claims.filter((c) => owesRelease(c, nowMs));
  return {
    own: owed.filter((c) => c.number === number),
    others: owed.filter((c) => c.number !== number).slice(0, RELEASES_PAID_PER_GRANT),
  };
}

/** Whether a grant must wait: the writes granted do not cover the releases owed and its marker. */
export function grantWaitsForReleases(granted: number, releasesOwed: number): boolean {
  return granted < releasesOwed + 1;
}

/**
 * IDD orders the markers of one second claims first, then releases: a `claimed-by` landing in
 * the same second as the previous claim's `unclaimed-by` is read while that claim is still
 * active and ignored. So a synchronous grant that posted an owed release waits until a full
 * second has passed since GitHub answered it before posting its own marker: GitHub's clock runs
 * at the rate of ours, so the marker then lands in a later second of GitHub's clock. The alarm's
 * flush keeps the same gap without waiting in the alarm: it holds the `claimed-by` back and
 * comes back when the gap ends (nextOwedWrite's `releasedMs` and `claimAtMs`).
 */
export const RELEASE_BEFORE_CLAIM_GAP_MS = 1_000;

/** How long to wait before the grant's marker, the last release answered at `answeredMs`. */
export function waitBeforeClaimMs(answeredMs: number | null, nowMs: number): number {
  if (answeredMs === null) return 0;
  return Math.max(0, answeredMs + RELEASE_BEFORE_CLAIM_GAP_MS - nowMs);
}
