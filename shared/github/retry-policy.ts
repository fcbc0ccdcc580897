// When to try a GitHub request again, and how long to wait first. Pure, so the rules are
// tested without a network and the client's sleeps are injectable.

export interface RetryPolicy {
  /** Extra attempts after the first for 5xx, network errors and timeouts (idempotent only). */
  maxRetries: number;
  /** Extra attempts after a primary or secondary rate limit answer. */
  maxRateLimitRetries: number;
  /** Exponential backoff base and cap, in milliseconds. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest wait the client accepts for a rate limit before giving up with `rate-limited`. */
  maxRateLimitWaitMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 3,
  maxRateLimitRetries: 2,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRateLimitWaitMs: 60_000,
};

/** Exponential backoff with "equal jitter": half fixed, half random, never above the cap. */
export function backoffMs(policy: RetryPolicy, retry: number, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

export interface RateLimitSignal {
  /** How long GitHub asks us to wait, in milliseconds. */
  waitMs: number;
  primary: boolean;
}

/**
 * Reads a 403/429 answer as GitHub documents it: `retry-after` (seconds) wins; otherwise an
 * exhausted primary limit (`x-ratelimit-remaining: 0`) waits until `x-ratelimit-reset`; a
 * secondary limit without either waits at least a minute. Returns null for a plain 403.
 */
export function rateLimitSignal(
  status: number,
  headers: Record<string, string | undefined>,
  message: string,
  nowMs: number,
): RateLimitSignal | null {
  if (status !== 403 && status !== 429) return null;
  const retryAfter = headers["retry-after"];
  if (retryAfter !== undefined && /^\d+$/.test(retryAfter.trim())) {
    return { waitMs: Number(retryAfter) * 1000, primary: false };
  }
  if (headers["x-ratelimit-remaining"] === "0") {
    const reset = Number(headers["x-ratelimit-reset"]);
    const waitMs = Number.isFinite(reset) ? Math.max(0, reset * 1000 - nowMs) + 1000 : 60_000;
    return { waitMs, primary: true };
  }
  if (status === 429 || /secondary rate limit|abuse/i.test(message)) {
    return { waitMs: 60_000, primary: false };
  }
  return null;
}
