// GitHub-style primary rate limits (one bucket per identity and resource) and the request
// counter the benchmarks and tests read: per endpoint, rate-limited versus free.

export type Resource = "core" | "graphql";

interface Bucket {
  limit: number;
  used: number;
  /** Epoch seconds when the window resets. */
  reset: number;
}

/**
 * How an installation's hourly limit grows (GitHub's documented rule for Apps: 5,000, plus 50
 * per repository over 20 and 50 per organization member over 20, at most 12,500).
 */
export interface InstallationScaling {
  perRepository: number;
  perMember: number;
  /** Repositories (and members) that come with the base limit. */
  included: number;
  max: number;
}

export const GITHUB_INSTALLATION_SCALING: InstallationScaling = {
  perRepository: 50,
  perMember: 50,
  included: 20,
  max: 12_500,
};

/** What an installation's limit is computed from. */
export interface InstallationSize {
  repositories: number;
  members: number;
}

export class RateLimits {
  /** The base hourly limit of every identity (GitHub: 5,000), before an installation's growth. */
  limit: number;
  scaling: InstallationScaling = { ...GITHUB_INSTALLATION_SCALING };
  /**
   * Multiplies every hourly limit (rounded, at least 1): a benchmark scales the budget down so
   * that the budget, not the machine, bounds it.
   */
  scale = 1;
  /** The window's length (GitHub: an hour). */
  windowSeconds = 3600;
  private buckets = new Map<string, Bucket>();
  private clock: () => Date;
  private sizeOf: (installationId: number) => InstallationSize | null;

  constructor(
    limit: number,
    clock: () => Date,
    sizeOf: (installationId: number) => InstallationSize | null = () => null,
  ) {
    this.limit = limit;
    this.clock = clock;
    this.sizeOf = sizeOf;
  }

  /**
   * The hourly limit of `identity` now: the base limit, grown for an installation by its
   * repositories and its organization's members (never past `max`, unless the base limit
   * itself is higher: a test that raises the limit means it for installations too).
   */
  limitOf(identity: string): number {
    let limit = this.limit;
    const m = /^installation:(\d+)$/.exec(identity);
    const size = m ? this.sizeOf(Number(m[1])) : null;
    if (size) {
      const { perRepository, perMember, included, max } = this.scaling;
      const grown =
        limit +
        perRepository * Math.max(0, size.repositories - included) +
        perMember * Math.max(0, size.members - included);
      limit = Math.min(grown, Math.max(max, limit));
    }
    return Math.max(1, Math.round(limit * this.scale));
  }

  bucket(identity: string, resource: Resource): Bucket {
    const key = `${identity}:${resource}`;
    const nowSec = Math.floor(this.clock().getTime() / 1000);
    let bucket = this.buckets.get(key);
    if (!bucket || bucket.reset <= nowSec) {
      const limit = this.limitOf(identity);
      const used = this.presetRemaining === null ? 0 : Math.max(0, limit - this.presetRemaining);
      bucket = { limit, used, reset: nowSec + this.windowSeconds };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /**
   * Recomputes `identity`'s limits from the installation's size now (repositories added within
   * a window count at once); called once per request, as the size takes a scan to know.
   */
  refresh(identity: string): void {
    const limit = this.limitOf(identity);
    for (const resource of ["core", "graphql"] as const)
      this.bucket(identity, resource).limit = limit;
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

  /** Forgets the buckets and a preset `remaining`; the configuration stays. */
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
