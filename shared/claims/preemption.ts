// One holder across protocols (spec 6.4, issue 21 item 2): switchyard mirrors a grant as an IDD
// `claimed-by` marker, but an IDD agent may have posted its own marker first. IDD agents verify
// their claims after `verifySettleDelay` (seed 002, "Claim verification"); switchyard does the
// same: once its marker has landed and that delay plus a margin has passed, it reads the issue's
// comments again, and if IDD's reading names another live claim, it ends its own. Pure.

/** IDD's `verifySettleDelay` (seed 002): how long a claimant waits before re-reading. */
export const IDD_VERIFY_SETTLE_MS = 5_000;

/** switchyard re-reads this long after IDD's settle delay, so an IDD agent has verified first. */
export const PREEMPT_CHECK_MARGIN_MS = 2_000;

/** When to re-read an issue whose marker GitHub accepted at `postedMs`. */
export function preemptCheckAt(postedMs: number): number {
  return postedMs + IDD_VERIFY_SETTLE_MS + PREEMPT_CHECK_MARGIN_MS;
}

/**
 * After the re-read: the IDD holder of the issue by IDD's reading (null: none, or one of
 * switchyard's own claims), and whether switchyard's claim is still live. Preempted when a live
 * claim meets a live IDD holder; when the IDD agent backed off meanwhile, the claim stands.
 */
export function preemptedBy<H>(input: { claimLive: boolean; iddHolder: H | null }): H | null {
  return input.claimLive ? input.iddHolder : null;
}

/**
 * Synchronous mirroring: on a repository where trusted IDD agents posted markers within
 * `idd.staleHours`, a grant posts its `claimed-by` before it answers, so an IDD agent reading
 * the issue sees switchyard's claim at once; elsewhere the mirror keeps coalescing.
 */
export function mirrorsSynchronously(input: {
  mirrorClaims: boolean;
  iddSeenMs: number | null;
  nowMs: number;
  staleHours: number;
}): boolean {
  return (
    input.mirrorClaims &&
    input.iddSeenMs !== null &&
    input.nowMs - input.iddSeenMs < input.staleHours * 3_600_000
  );
}

/** The 503 of a grant whose synchronous marker could not be posted: when to ask again. */
export const MIRROR_FAILED_RETRY_SECONDS = 10;
