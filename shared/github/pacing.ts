// Slowing down before GitHub's primary rate limit, not after: when a bucket's remaining
// requests fall under a fraction of its limit, requests are spaced evenly so the rest lasts
// until the bucket resets. The decision is the pure `paceDelayMs`; `RateLimitPacer` only keeps
// the last headers and send times per bucket (and can be shared by clients of one identity).

/** Under this fraction of `x-ratelimit-limit` remaining, requests are spaced (10%). */
export const DEFAULT_PACE_BELOW = 0.1;

/** One bucket as GitHub last described it (`x-ratelimit-limit/remaining/reset`). */
export interface RateLimitBucket {
  limit: number;
  remaining: number;
  /** Epoch seconds when the bucket refills. */
  reset: number;
}

/**
 * How long to wait before sending the next request of a bucket, in milliseconds.
 *
 * - 0 when nothing is known, pacing is off (`paceBelow <= 0`), the headers are not numbers,
 *   at least `paceBelow × limit` requests remain, or the reset time has passed.
 * - Otherwise the time left until reset is shared evenly among the remaining requests:
 *   `interval = ceil((reset×1000 − now) / remaining)`, and the next request goes out one
 *   interval after the previous one (`lastSendMs`): `max(0, lastSendMs + interval − now)`.
 * - With nothing remaining, until one second after the reset (GitHub's reset is whole seconds,
 *   the same slack as an exhausted-limit answer gets).
 */
export function paceDelayMs(
  bucket: RateLimitBucket | null,
  paceBelow: number,
  lastSendMs: number,
  nowMs: number,
): number {
  if (bucket === null || !(paceBelow > 0)) return 0;
  const { limit, remaining, reset } = bucket;
  if (![limit, remaining, reset].every(Number.isFinite) || limit <= 0) return 0;
  if (remaining >= paceBelow * limit) return 0;
  const resetMs = reset * 1000;
  if (resetMs <= nowMs) return 0;
  if (remaining <= 0) return resetMs - nowMs + 1000;
  const interval = Math.ceil((resetMs - nowMs) / remaining);
  return Math.max(0, lastSendMs + interval - nowMs);
}

/** The bucket a request spends: GraphQL has its own, everything else switchyard sends is `core`. */
export function bucketOf(route: string): string {
  return /^POST \S*\/graphql$/.test(route) ? "graphql" : "core";
}

interface BucketState {
  bucket: RateLimitBucket | null;
  lastSendMs: number;
}

/**
 * The rate-limit state the pacing reads: per bucket (`core`, `graphql`, ...) the last headers
 * seen and when the last request was sent (or is scheduled to be). A client makes its own;
 * clients acting as one identity (one installation token, one user token) can share one, so
 * their requests are spaced together.
 */
export class RateLimitPacer {
  private readonly buckets = new Map<string, BucketState>();

  /**
   * The wait before the next request of `resource`. Nothing is reserved: call `sent` with the
   * chosen send time before awaiting anything, so concurrent requests queue one interval apart.
   */
  delayFor(resource: string, paceBelow: number, nowMs: number): number {
    const state = this.buckets.get(resource);
    if (!state) return 0;
    return paceDelayMs(state.bucket, paceBelow, state.lastSendMs, nowMs);
  }

  /** Records that a request of `resource` goes out at `atMs`. */
  sent(resource: string, atMs: number): void {
    const state = this.buckets.get(resource);
    if (state) state.lastSendMs = Math.max(state.lastSendMs, atMs);
    else this.buckets.set(resource, { bucket: null, lastSendMs: atMs });
  }

  /** Records the `x-ratelimit-*` headers of an answer (ignored when absent). */
  observe(headers: Record<string, string | undefined>, fallbackResource: string): void {
    const remaining = headers["x-ratelimit-remaining"];
    if (remaining === undefined) return;
    const resource = headers["x-ratelimit-resource"] ?? fallbackResource;
    const bucket: RateLimitBucket = {
      limit: Number(headers["x-ratelimit-limit"]),
      remaining: Number(remaining),
      reset: Number(headers["x-ratelimit-reset"]),
    };
    const state = this.buckets.get(resource);
    if (state) state.bucket = bucket;
    else this.buckets.set(resource, { bucket, lastSendMs: Number.NEGATIVE_INFINITY });
  }

  /** The last headers seen for `resource`, if any. */
  bucket(resource: string): RateLimitBucket | null {
    return this.buckets.get(resource)?.bucket ?? null;
  }
}
