import { describe, expect, it } from "vitest";
import { TtlCache } from "../../../shared/auth/ttl-cache.ts";

describe("TtlCache", () => {
  it("forgets an entry once its time is up", () => {
    let now = 1_000;
    const cache = new TtlCache<string>(10, () => now);
    cache.set("a", "x", 100);
    now = 1_099;
    expect(cache.get("a")).toBe("x");
    now = 1_100;
    expect(cache.get("a")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("makes room by dropping the oldest entry; a zero TTL stores nothing", () => {
    const cache = new TtlCache<number>(2, () => 0);
    cache.set("a", 1, 10);
    cache.set("b", 2, 10);
    cache.set("a", 3, 10); // refreshed: now the newest
    cache.set("c", 4, 10);
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBe(3);
    expect(cache.get("c")).toBe(4);
    cache.set("d", 5, 0);
    expect(cache.get("d")).toBeUndefined();
    expect(cache.size).toBe(2);
    cache.delete("a");
    cache.clear();
    expect(cache.size).toBe(0);
  });
});
