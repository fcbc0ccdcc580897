import { GitHubApiError, isRetryable } from "../github/errors.ts";

/** Attempts a queued label write gets before it is parked (each attempt is one alarm run). */
export const MAX_WRITE_ATTEMPTS = 5;

/**
 * What to do with a queued label write that failed, `attempts` counting this failure:
 * - `retry`: a failure that can pass (5xx, timeout, rate limit); the write stays first in the
 *   outbox and is tried again after the schedule's backoff.
 * - `park`: GitHub will not accept it as things stand (a 403: a revoked permission, an
 *   archived repository), or it kept failing `maxAttempts` times; it is set aside so the rest of
 *   the outbox goes on, and the next plan after a full reconcile plans it again if still needed.
 * - `drop`: GitHub will never accept it (the issue is gone, the request is invalid).
 */
export type WriteFailureVerdict = "retry" | "park" | "drop";

export function writeFailureVerdict(
  error: unknown,
  attempts: number,
  maxAttempts = MAX_WRITE_ATTEMPTS,
): WriteFailureVerdict {
  if (!isRetryable(error)) return "drop";
  if (error instanceof GitHubApiError && error.kind === "forbidden") return "park";
  return attempts >= maxAttempts ? "park" : "retry";
}
