import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_BUDGET, decideBudget } from "../../../shared/budget/write-budget.ts";

const GITHUB = { perMinute: 80, perHour: 500 };

const NOW = 10_000_000;

describe("write budget (sliding windows; GitHub allows 80 a minute, 500 an hour)", () => {
  it("defaults stay below GitHub's limits, leaving room for retries", () => {
    expect(DEFAULT_BUDGET.perMinute).toBeLessThan(80);
    expect(DEFAULT_BUDGET.perHour).toBeLessThan(500);
  });

  it("grants everything while there is room", () => {
    expect(decideBudget([], 10, NOW, GITHUB)).toEqual({ granted: 10, retryAtMs: null });
  });

  it("caps a burst at 80 and defers the rest until the minute frees", () => {
    expect(decideBudget([], 100, NOW, GITHUB)).toEqual({ granted: 80, retryAtMs: NOW + 60_001 });
  });

  it("counts past writes in the sliding minute", () => {
    const past = Array.from({ length: 70 }, (_, i) => NOW - 50_000 + i);
    expect(decideBudget(past, 20, NOW, GITHUB)).toEqual({
      granted: 10,
      retryAtMs: NOW - 50_000 + 60_001,
    });
  });

  it("writes older than a minute free the minute but still count for the hour", () => {
    const past = Array.from({ length: 495 }, (_, i) => NOW - 3_000_000 + i * 1000);
    expect(decideBudget(past, 10, NOW, GITHUB)).toEqual({
      granted: 5,
      retryAtMs: NOW - 3_000_000 + 3_600_001,
    });
  });

  it("never lets any 60 s window exceed 80 or any hour exceed 500 (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 90_000 }), fc.integer({ min: 1, max: 150 })), {
          maxLength: 60,
        }),
        (steps) => {
          const log: number[] = [];
          let now = 0;
          for (const [gap, requested] of steps) {
            now += gap;
            const { granted, retryAtMs } = decideBudget(log, requested, now, GITHUB);
            if (granted < requested) expect(retryAtMs).toBeGreaterThan(now);
            for (let i = 0; i < granted; i++) log.push(now);
          }
          for (const t of log) {
            expect(log.filter((u) => u > t - 60_000 && u <= t).length).toBeLessThanOrEqual(80);
            expect(log.filter((u) => u > t - 3_600_000 && u <= t).length).toBeLessThanOrEqual(500);
          }
        },
      ),
    );
  });
});
