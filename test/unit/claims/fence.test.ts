// The fence rule: above the previous one, and never below the wall clock's second × 2^20, so a
// counter set back by a restore still hands out a larger fence than any before it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FENCE_SECOND_STEP, nextFence } from "../../../shared/claims/fence.ts";

const T = Date.parse("2026-12-02T15:00:00Z");

describe("nextFence", () => {
  it("grows by one within a second, and jumps to the time floor", () => {
    const first = nextFence(0, T);
    expect(first).toBe(Math.floor(T / 1000) * FENCE_SECOND_STEP);
    expect(nextFence(first, T + 999)).toBe(first + 1);
    expect(nextFence(first + 5, T + 1_000)).toBe(first + FENCE_SECOND_STEP);
  });

  it("after a restore to any earlier counter, a later grant is above every fence handed out", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 50 }),
        fc.integer({ min: 0, max: 49 }),
        fc.integer({ min: 1_000, max: 86_400_000 }),
        (gaps, restoreAt, restoreTakesMs) => {
          let now = T;
          const handed: number[] = [];
          let counter = 0;
          for (const gap of gaps) {
            now += gap;
            counter = nextFence(counter, now);
            handed.push(counter);
          }
          const restored = handed[Math.min(restoreAt, handed.length - 1)]! - 1;
          const after = nextFence(restored, now + restoreTakesMs);
          expect(after).toBeGreaterThan(Math.max(...handed));
        },
      ),
    );
  });

  it("stays an exact integer in JSON until 2242", () => {
    expect(Number.isSafeInteger(nextFence(0, Date.parse("2242-01-01T00:00:00Z")))).toBe(true);
  });
});
