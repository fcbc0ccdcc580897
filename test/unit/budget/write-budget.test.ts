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

  it("counts past writes in the sliding minute; the rest fits once as many have aged out", () => {
    const past = Array.from({ length: 70 }, (_, i) => NOW - 50_000 + i);
    // 10 granted, 10 refused: the minute's 10 oldest writes must age out, not only its first.
    expect(decideBudget(past, 20, NOW, GITHUB)).toEqual({
      granted: 10,
      retryAtMs: NOW - 50_000 + 9 + 60_001,
    });
  });

  it("writes older than a minute free the minute but still count for the hour", () => {
    const past = Array.from({ length: 495 }, (_, i) => NOW - 3_000_000 + i * 1000);
    expect(decideBudget(past, 10, NOW, GITHUB)).toEqual({
      granted: 5,
      retryAtMs: NOW - 3_000_000 + 4 * 1000 + 3_600_001,
    });
  });

  it("a whole request is all or nothing, and told when all of it fits", () => {
    const past = Array.from({ length: 79 }, (_, i) => NOW - 50_000 + i);
    expect(decideBudget(past, 2, NOW, GITHUB, true)).toEqual({
      granted: 0,
      retryAtMs: NOW - 50_000 + 60_001,
    });
    expect(decideBudget(past, 1, NOW, GITHUB, true)).toEqual({ granted: 1, retryAtMs: null });
  });

  it("retries when everything refused fits as one request, and no sooner (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3_599_999 }), { maxLength: 600 }),
        fc.integer({ min: 1, max: 80 }),
        (ages, requested) => {
          const past = ages.map((a) => NOW - a).sort((a, b) => a - b);
          const { granted, retryAtMs } = decideBudget(past, requested, NOW, GITHUB);
          if (granted === requested) return;
          const after = [...past, ...Array<number>(granted).fill(NOW)];
          const rest = requested - granted;
          expect(decideBudget(after, rest, retryAtMs!, GITHUB).granted).toBe(rest);
          // Retry times keep a millisecond in hand (a write ages out at its time + the window).
          expect(decideBudget(after, rest, retryAtMs! - 2, GITHUB).granted).toBeLessThan(rest);
        },
      ),
      { numRuns: 500 },
    );
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
