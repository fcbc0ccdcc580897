// What an unproven user token may cost. Every token not in the permission cache is checked
// with GitHub (a request per token), so a client sending garbage tokens makes the Worker call
// GitHub for each; and refusals, cached like proven answers, would push proven tokens out of a
// shared cache. So: refusals are counted per client address, and past `limit` in a window that
// address's uncached tokens are not checked until the window ends (429 with Retry-After);
// proven answers and refusals are cached apart, each bounded on its own.
import { TtlCache } from "./ttl-cache.ts";

/** Refused user tokens per client address and minute before its checks are held. */
export const USER_TOKEN_REFUSALS_PER_MINUTE = 20;

export interface ThrottleOptions {
  limit: number;
  windowMs: number;
  /** Addresses remembered at most (the oldest window goes first). */
  maxAddresses: number;
}

/** Refusals per client address in fixed windows; in memory, bounded. */
export class RefusalThrottle {
  private readonly windows: Map<string, { startMs: number; count: number }> = new Map();
  private readonly options: ThrottleOptions;

  constructor(options: ThrottleOptions) {
    this.options = options;
  }

  /** How long `address` must wait before its next GitHub check (ms), or null: go ahead. */
  wait(address: string, nowMs: number): number | null {
    const window = this.windows.get(address);
    if (!window || nowMs - window.startMs >= this.options.windowMs) return null;
    return window.count >= this.options.limit
      ? window.startMs + this.options.windowMs - nowMs
      : null;
  }

  /** A token from `address` was refused by GitHub. */
  refused(address: string, nowMs: number): void {
    const window = this.windows.get(address);
    if (window && nowMs - window.startMs < this.options.windowMs) {
      window.count += 1;
      return;
    }
    this.windows.delete(address);
    while (this.windows.size >= this.options.maxAddresses) {
      const oldest = this.windows.keys().next();
      if (oldest.done) break;
      this.windows.delete(oldest.value);
    }
    this.windows.set(address, { startMs: nowMs, count: 1 });
  }

  get size(): number {
    return this.windows.size;
  }
}

/** Permission answers cached by key, proven ones and refusals in separate bounded maps. */
export class PermissionCache<V> {
  private readonly proven: TtlCache<V>;
  private readonly refused: TtlCache<V>;

  constructor(sizes: { proven: number; refused: number }, now: () => number = Date.now) {
    this.proven = new TtlCache<V>(sizes.proven, now);
    this.refused = new TtlCache<V>(sizes.refused, now);
  }

  get(key: string): V | undefined {
    return this.proven.get(key) ?? this.refused.get(key);
  }

  set(key: string, value: V, ok: boolean, ttlMs: number): void {
    // The newest answer for a key is the only one kept.
    (ok ? this.refused : this.proven).delete(key);
    (ok ? this.proven : this.refused).set(key, value, ttlMs);
  }
}
