import { DAY_MS } from "../graph/time.ts";

/*
 * How long each kind of stored record is kept: the one home of every retention period. The
 * stores prune with the cutoffs of `retentionCutoffs` (the daily `prune` schedule of each
 * RepoObject, and some on write); docs/worker.md has the table of every bound and why.
 */

/** GitHub redelivers a webhook (automatically or from the App's settings) for up to 3 days. */
export const GITHUB_REDELIVERY_MS = 3 * DAY_MS;
/** Delivery ids are kept at least this long for deduplication (GitHub redelivers for 3 days). */
export const DELIVERY_RETENTION_MS = 7 * DAY_MS;
/**
 * Tombstones of deleted issues and comments, and removed blocker edges: they stop a late
 * delivery of an earlier event from bringing the row back, so they must outlive every delivery
 * that could still arrive (GitHub's 3-day redelivery window) and every delivery id still
 * remembered (7 days), with room for a delivery that waited on a retry. After that a stale event
 * can only come from a replay, which a full reconcile corrects.
 */
export const TOMBSTONE_RETENTION_MS = 30 * DAY_MS;
/** The audit log keeps its most recent entries, this many. */
export const AUDIT_LIMIT = 2_000;
/** Fenced sub-issue idempotency keys. */
export const IDEMPOTENCY_RETENTION_MS = 7 * DAY_MS;
/**
 * Ended claims (the fleet API's claim history), except a failed claim that still counts as an
 * attempt of its issue (after its `reset_fence`): those stay until a reset, at most
 * `claims.maxAttempts` of them per issue, because the dead letter is decided by their count.
 */
export const CLAIM_HISTORY_RETENTION_MS = 30 * DAY_MS;
/**
 * Ended claims kept per issue, whatever their age: a direct claim → release `done` loop would
 * otherwise add a row per turn for 30 days. Failed claims that still count as attempts, and
 * ended claims whose IDD marker still owes its `unclaimed-by`, are kept beyond it.
 */
export const CLAIM_HISTORY_PER_ISSUE = 50;
/** A marker author's write access, as GitHub answered it, before it is asked again. */
export const AUTHOR_TRUST_TTL_MS = DAY_MS;
/** A revoked or expired fleet key is still listed (for the record) this long, then forgotten. */
export const FLEET_KEY_RETENTION_MS = 30 * DAY_MS;

/**
 * The breaker's check reports of commits that are neither the default branch's head nor the
 * one before it (the head moved on; a report of an older commit decides nothing), and priority
 * items waiting for a re-read that kept failing (the next full read covers them).
 */
export const CI_REPORT_RETENTION_MS = DAY_MS;

/** Rows older than these instants (epoch ms) go; `auditLimit` entries of the audit log stay. */
export interface RetentionCutoffs {
  /** Delivery ids received before this. */
  deliveriesMs: number;
  /** Issue and comment tombstones, and removed blocker edges, stamped before this. */
  tombstonesMs: number;
  /** Claims ended before this (unless they still count as attempts). */
  claimsMs: number;
  /** Idempotency keys created before this. */
  idempotencyMs: number;
  /** Author-trust answers checked before this. */
  authorTrustMs: number;
  /** Fleet keys revoked or expired before this. */
  fleetKeysMs: number;
  /**
   * Check reports of commits no longer the head or the one before it, last seen before this;
   * priority re-reads asked for before this.
   */
  ciReportsMs: number;
  auditLimit: number;
}

/** The cutoffs of every retention period at `nowMs`. */
export function retentionCutoffs(nowMs: number): RetentionCutoffs {
  return {
    deliveriesMs: nowMs - DELIVERY_RETENTION_MS,
    tombstonesMs: nowMs - TOMBSTONE_RETENTION_MS,
    claimsMs: nowMs - CLAIM_HISTORY_RETENTION_MS,
    idempotencyMs: nowMs - IDEMPOTENCY_RETENTION_MS,
    authorTrustMs: nowMs - AUTHOR_TRUST_TTL_MS,
    fleetKeysMs: nowMs - FLEET_KEY_RETENTION_MS,
    ciReportsMs: nowMs - CI_REPORT_RETENTION_MS,
    auditLimit: AUDIT_LIMIT,
  };
}
