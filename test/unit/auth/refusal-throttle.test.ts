// Garbage user tokens cost a GitHub call each: the addresses sending them are throttled, and
// the permission cache keeps proven answers apart from refusals, so a flood of refusals never
// pushes a proven token out.
import { describe, expect, it } from "vitest";
import { PermissionCache, RefusalThrottle } from "../../../shared/auth/refusal-throttle.ts";

describe("RefusalThrottle", () => {
  it("lets an address be refused `limit` times a window, then holds its GitHub checks until the window ends", () => {
    const t = new RefusalThrottle({ limit: 3, windowMs: 60_000, maxAddresses: 100 });
    const at = 1_000_000;
    for (let i = 0; i < 3; i++) {
      expect(t.wait("198.51.100.7", at + i)).toBeNull();
      t.refused("198.51.100.7", at + i);
    }
    expect(t.wait("198.51.100.7", at + 10)).toBe(60_000 - 10);
    // Another address is not held.
    expect(t.wait("203.0.113.9", at + 10)).toBeNull();
    // The window ends: checks again.
    expect(t.wait("198.51.100.7", at + 60_000)).toBeNull();
  });

  it("stays bounded in addresses (the oldest go first)", () => {
    const t = new RefusalThrottle({ limit: 1, windowMs: 60_000, maxAddresses: 10 });
    for (let i = 0; i < 1_000; i++) t.refused(`10.0.${i >> 8}.${i & 255}`, 0);
    expect(t.size).toBeLessThanOrEqual(10);
  });
});

describe("PermissionCache", () => {
  it("never evicts a proven answer to make room for refusals", () => {
    const now = () => 0;
    const cache = new PermissionCache<string>({ proven: 2, refused: 3 }, now);
    cache.set("proven-1", "ok", true, 300_000);
    cache.set("proven-2", "ok", true, 300_000);
    for (let i = 0; i < 1_000; i++) cache.set(`garbage-${i}`, "refused", false, 60_000);
    expect(cache.get("proven-1")).toBe("ok");
    expect(cache.get("proven-2")).toBe("ok");
    expect(cache.get("garbage-999")).toBe("refused");
    expect(cache.get("garbage-0")).toBeUndefined();
  });

  it("a newer answer for the same key replaces the older, in either direction", () => {
    const cache = new PermissionCache<string>({ proven: 2, refused: 2 }, () => 0);
    cache.set("k", "refused", false, 60_000);
    cache.set("k", "ok", true, 60_000);
    expect(cache.get("k")).toBe("ok");
    cache.set("k", "refused", false, 60_000);
    expect(cache.get("k")).toBe("refused");
  });
});
