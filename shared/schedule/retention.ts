import { DAY_MS } from "../graph/time.ts";

/*
 * How long each kind of stored record is kept: the one home of every retention period.
 */

/** Delivery ids are kept at least this long for deduplication (GitHub redelivers for 3 days). */
export const DELIVERY_RETENTION_MS = 7 * DAY_MS;
/** The audit log keeps its most recent entries, this many. */
export const AUDIT_LIMIT = 2_000;
/** Fenced sub-issue idempotency keys. */
export const IDEMPOTENCY_RETENTION_MS = 7 * DAY_MS;
/** Ended claims (the fleet API's claim history). */
export const CLAIM_HISTORY_RETENTION_MS = 30 * DAY_MS;
/** A marker author's write access, as GitHub answered it, before it is asked again. */
export const AUTHOR_TRUST_TTL_MS = DAY_MS;
