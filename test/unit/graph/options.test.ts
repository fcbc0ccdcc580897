import { describe, expect, it } from "vitest";
import { scan } from "../../../shared/graph/scan.ts";
import { parseSnapshot } from "../../../shared/graph/snapshot.ts";

const base = {
  repo: "acme/rocket",
  issues: [
    {
      number: 2,
      title: "Blocked",
      state: "open",
      stateReason: null,
      createdAt: "2026-11-01T00:00:00Z",
      updatedAt: "2026-11-01T00:00:00Z",
      closedAt: null,
      labels: [],
      blockedBy: [1],
    },
    {
      number: 1,
      title: "Blocker",
      state: "closed",
      stateReason: "completed",
      createdAt: "2026-11-01T00:00:00Z",
      updatedAt: "2026-11-29T11:00:00Z",
      closedAt: "2026-11-29T11:00:00Z",
      labels: [],
    },
  ],
};

describe("scan options", () => {
  it("takes now from options, then the snapshot, then the caller's clock", () => {
    const noNow = parseSnapshot(base);
    const withNow = parseSnapshot({ ...base, now: "2026-11-29T12:00:00Z" });
    expect(scan(noNow, { clock: "2026-11-29T13:00:00Z" }).now).toBe("2026-11-29T13:00:00Z");
    expect(scan(withNow, { clock: "2026-11-29T13:00:00Z" }).now).toBe("2026-11-29T12:00:00Z");
    expect(scan(withNow, { now: "2026-11-29T11:30:00Z" }).now).toBe("2026-11-29T11:30:00Z");
    expect(() => scan(noNow, {})).toThrow(/needs `now`/);
  });

  it("an explicit window (the Worker's watermark) replaces windowHours", () => {
    const snapshot = parseSnapshot({ ...base, now: "2026-11-29T12:00:00Z" });
    const inside = scan(snapshot, {
      window: { from: "2026-11-29T10:59:59Z", to: "2026-11-29T12:00:00Z" },
    });
    expect(inside.kicks).toEqual([{ target: 2, kind: "unblocked", causes: [1] }]);
    expect(inside.window).toEqual({ from: "2026-11-29T10:59:59Z", to: "2026-11-29T12:00:00Z" });
    const after = scan(snapshot, {
      window: { from: "2026-11-29T11:00:00Z", to: "2026-11-29T12:00:00Z" },
    });
    expect(after.kicks).toEqual([]);
    expect(() =>
      scan(snapshot, { window: { from: "2026-11-29T12:00:01Z", to: "2026-11-29T12:00:00Z" } }),
    ).toThrow(/invalid window/);
  });

  it("respects configured label names", async () => {
    const { ConfigSchema } = await import("../../../shared/config/schema.ts");
    const config = ConfigSchema.parse({ labels: { hold: "do-not-touch" } });
    const snapshot = parseSnapshot({
      ...base,
      now: "2026-11-29T12:00:00Z",
      issues: [{ ...base.issues[0]!, blockedBy: [], labels: ["do-not-touch"] }],
    });
    expect(scan(snapshot, { config }).ready).toEqual([]);
    expect(scan(snapshot).ready).toEqual([2]);
  });
});

describe("explicit kick causes (the Worker's producer watermark)", () => {
  const snapshot = parseSnapshot({
    ...base,
    now: "2026-11-29T12:00:00Z",
    issues: [
      ...base.issues,
      {
        ...base.issues[0]!,
        number: 3,
        blockedBy: ["other/lib#5"],
      },
      {
        ...base.issues[0]!,
        number: 4,
        blockedBy: [],
      },
    ],
    external: [{ ref: "other/lib#5", state: "closed", closedAt: "2026-11-01T00:00:00Z" }],
  });

  it("kicks for exactly the given closes, whenever they happened", () => {
    expect(scan(snapshot, { causes: [1] }).kicks).toEqual([
      { target: 2, kind: "unblocked", causes: [1] },
    ]);
    expect(scan(snapshot, { causes: ["Other/Lib#5"] }).kicks).toEqual([
      { target: 3, kind: "unblocked", causes: ["Other/Lib#5"] },
    ]);
    expect(scan(snapshot, { causes: [] }).kicks).toEqual([]);
  });

  it("ignores causes that are open or unknown, and duplicates", () => {
    expect(scan(snapshot, { causes: [4, 99, "x/y#1"] }).kicks).toEqual([]);
    expect(scan(snapshot, { causes: [1, "acme/rocket#1", 1] }).kicks).toEqual([
      { target: 2, kind: "unblocked", causes: [1] },
    ]);
  });
});
