// GitHub's secondary rate limit on concurrency: at most 100 requests of one identity (an
// installation, the App's JWT, a user) in flight at once; the excess is refused with 403 and
// `retry-after` before GitHub does anything. Also what the counters report per identity: the
// most concurrent requests seen and the refusals (these and the hourly limit's), so a test can
// prove a client stays under both, and tell whose requests met them.

/** What GitHub answers a request over a secondary rate limit (403 or 429). */
export const SECONDARY_LIMIT_MESSAGE =
  "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.";
export const SECONDARY_LIMIT_DOCS =
  "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits";

export interface IdentityCount {
  /** Requests that got past authentication (refused ones included). */
  requests: number;
  /** Requests being answered right now. */
  inFlight: number;
  /** The most requests in flight at once since the last reset. */
  maxConcurrent: number;
  /** Requests refused because `maxConcurrent` would have passed the limit. */
  secondaryRefusals: number;
  /** Requests refused because the identity's hourly (primary) limit was spent. */
  rateLimitRefusals: number;
}

export class ConcurrencyLimit {
  /** Requests of one identity in flight at once (GitHub: 100). */
  limit = 100;
  /** The `retry-after` of a refusal, in seconds (GitHub sends 60). */
  retryAfterSeconds = 60;
  private counts = new Map<string, IdentityCount>();

  private of(identity: string): IdentityCount {
    let c = this.counts.get(identity);
    if (!c) {
      c = {
        requests: 0,
        inFlight: 0,
        maxConcurrent: 0,
        secondaryRefusals: 0,
        rateLimitRefusals: 0,
      };
      this.counts.set(identity, c);
    }
    return c;
  }

  /** Admits one request of `identity` (call `leave` when it is answered), or refuses it. */
  enter(identity: string): boolean {
    const c = this.of(identity);
    c.requests += 1;
    if (c.inFlight >= this.limit) {
      c.secondaryRefusals += 1;
      return false;
    }
    c.inFlight += 1;
    c.maxConcurrent = Math.max(c.maxConcurrent, c.inFlight);
    return true;
  }

  /** A request of `identity` was refused for its spent hourly limit. */
  refusedForRateLimit(identity: string): void {
    this.of(identity).rateLimitRefusals += 1;
  }

  leave(identity: string): void {
    const c = this.of(identity);
    c.inFlight = Math.max(0, c.inFlight - 1);
  }

  snapshot(): Record<string, IdentityCount> {
    return Object.fromEntries([...this.counts].map(([k, v]) => [k, { ...v }]));
  }

  /**
   * Forgets the statistics; requests still in flight stay counted (they will leave), so the
   * limit holds across a reset.
   */
  resetCounts(): void {
    for (const [identity, c] of this.counts) {
      if (c.inFlight === 0) this.counts.delete(identity);
      else
        Object.assign(c, {
          requests: 0,
          maxConcurrent: c.inFlight,
          secondaryRefusals: 0,
          rateLimitRefusals: 0,
        });
    }
  }
}
