import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  KICK_WINDOW_MS,
  producerDueMs,
  producerWindowMs,
  reconcileKind,
  retryDelayMs,
  SCAN_REQUEST_INTERVAL_MS,
  scanRequestWaitMs,
} from "../../../shared/schedule/policy.ts";

const NOW = Date.parse("2026-11-29T12:00:00Z");

describe("reconcile kind", () => {
  it("is full before the first full reconcile and once a day has passed", () => {
    expect(reconcileKind(null, NOW)).toBe("reconcile-full");
    expect(reconcileKind("2026-11-28T12:00:00Z", NOW)).toBe("reconcile-full");
    expect(reconcileKind("2026-11-28T12:00:01Z", NOW)).toBe("reconcile");
  });
});

describe("retry delay", () => {
  const policy = { baseMs: 100, capMs: 1_000, missingSettingMs: 5_000 };
  it("doubles per consecutive failure up to the cap", () => {
    expect(
      [1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, { missingSetting: false }, policy)),
    ).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it("waits at least as long as GitHub asked, and long when a setting is missing", () => {
    expect(retryDelayMs(1, { missingSetting: false, retryAfterMs: 3_000 }, policy)).toBe(3_000);
    expect(retryDelayMs(1, { missingSetting: true }, policy)).toBe(5_000);
  });
});

describe("API-requested reconciles", () => {
  it("at most one a minute per repository; the wait says how long", () => {
    expect(scanRequestWaitMs(null, 5_000)).toBeNull();
    expect(scanRequestWaitMs(1_000, 1_000 + SCAN_REQUEST_INTERVAL_MS)).toBeNull();
    expect(scanRequestWaitMs(1_000, 21_000)).toBe(SCAN_REQUEST_INTERVAL_MS - 20_000);
  });
});

describe("producer debounce", () => {
  it("runs a lone change at once (leading edge)", () => {
    expect(producerDueMs(10_000, null, 2_000)).toBe(10_000);
    expect(producerDueMs(10_000, 7_000, 2_000)).toBe(10_000);
    expect(producerDueMs(10_000, 8_000, 2_000)).toBe(10_000);
  });

  it("coalesces changes inside the window into one run at its end", () => {
    expect(producerDueMs(10_000, 9_000, 2_000)).toBe(11_000);
    expect(producerDueMs(10_500, 9_000, 2_000)).toBe(11_000);
    expect(producerDueMs(10_000, 10_000, 2_000)).toBe(12_000);
  });

  it("never schedules before the change nor sooner than the window allows", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e9 }),
        fc.option(fc.integer({ min: 0, max: 1e9 })),
        fc.integer({ min: 0, max: 60_000 }),
        (now, last, debounce) => {
          const due = producerDueMs(now, last, debounce);
          expect(due).toBeGreaterThanOrEqual(now);
          if (last !== null) expect(due).toBeGreaterThanOrEqual(last + debounce);
          if (last === null || last + debounce <= now) expect(due).toBe(now);
        },
      ),
    );
  });
});

describe("producer window", () => {
  it("shrinks while learned closes wait for the producer, never grows", () => {
    expect(producerWindowMs(2_000, false)).toBe(2_000);
    expect(producerWindowMs(2_000, true)).toBe(KICK_WINDOW_MS);
    expect(producerWindowMs(0, true)).toBe(0);
    expect(producerWindowMs(100, true)).toBe(100);
  });

  it("a close right after a run waits the short window, an edit the long one", () => {
    const lastRun = 10_000;
    expect(producerDueMs(10_050, lastRun, producerWindowMs(2_000, true))).toBe(10_250);
    expect(producerDueMs(10_050, lastRun, producerWindowMs(2_000, false))).toBe(12_000);
  });
});
