// GitHub-style primary rate limits (one bucket per identity and resource) and the request
// counter the benchmarks and tests read: per endpoint, rate-limited versus free.

export type Resource = "core" | "graphql";

interface Bucket {
  limit: number;
  used: number;
  /** Epoch seconds when the window resets. */
  reset: number;
}

export class RateLimits {
  limit: number;
  private buckets = new Map<string, Bucket>();
  private clock: () => Date;

  constructor(limit: number, clock: () => Date) {
    this.limit = limit;
    this.clock = clock;
  }

  bucket(identity: string, resource: Resource): Bucket {
    const key = `${identity}:${resource}`;
    const nowSec = Math.floor(this.clock().getTime() / 1000);
    let bucket = this.buckets.get(key);
    if (!bucket || bucket.reset <= nowSec) {
      const used =
        this.presetRemaining === null ? 0 : Math.max(0, this.limit - this.presetRemaining);
      bucket = { limit: this.limit, used, reset: nowSec + 3600 };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /** Headers as GitHub sends them; `consume` spends one request first. */
  headers(identity: string, resource: Resource): Record<string, string> {
    const b = this.bucket(identity, resource);
    return {
      "x-ratelimit-limit": String(b.limit),
      "x-ratelimit-remaining": String(Math.max(0, b.limit - b.used)),
      "x-ratelimit-used": String(b.used),
      "x-ratelimit-reset": String(b.reset),
      "x-ratelimit-resource": resource,
    };
  }

  exhausted(identity: string, resource: Resource): boolean {
    const b = this.bucket(identity, resource);
    return b.used >= b.limit;
  }

  consume(identity: string, resource: Resource): void {
    this.bucket(identity, resource).used += 1;
  }

  private presetRemaining: number | null = null;

  /** Sets the remaining requests of every current and future bucket (tests of exhaustion). */
  setRemaining(remaining: number | null): void {
    this.presetRemaining = remaining;
    if (remaining === null) return;
    for (const b of this.buckets.values()) b.used = Math.max(0, b.limit - remaining);
  }

  reset(): void {
    this.buckets.clear();
    this.presetRemaining = null;
  }
}

export interface EndpointCount {
  total: number;
  rateLimited: number;
  free: number;
  statuses: Record<string, number>;
}

export interface Counters {
  total: number;
  rateLimited: number;
  free: number;
  byEndpoint: Record<string, EndpointCount>;
}

export class RequestCounter {
  private data: Counters = { total: 0, rateLimited: 0, free: 0, byEndpoint: {} };

  record(endpoint: string, status: number, rateLimited: boolean): void {
    let e = this.data.byEndpoint[endpoint];
    if (!e) {
      e = { total: 0, rateLimited: 0, free: 0, statuses: {} };
      this.data.byEndpoint[endpoint] = e;
    }
    for (const c of [this.data, e]) {
      c.total += 1;
      if (rateLimited) c.rateLimited += 1;
      else c.free += 1;
    }
    e.statuses[String(status)] = (e.statuses[String(status)] ?? 0) + 1;
  }

  snapshot(): Counters {
    return structuredClone(this.data);
  }

  reset(): void {
    this.data = { total: 0, rateLimited: 0, free: 0, byEndpoint: {} };
  }
}
