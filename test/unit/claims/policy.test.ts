// The queue policy's grant rules (shared/claims/policy.ts): per-label limits and the breaker.
import { describe, expect, it } from "vitest";
import {
  labelAtLimit,
  labelLimits,
  liveByLabel,
  pausedFor,
  policyDenial,
} from "../../../shared/claims/policy.ts";
import { ConfigSchema } from "../../../shared/config/schema.ts";

const limits = labelLimits(
  ConfigSchema.parse({ claims: { maxActiveByLabel: { "area:db": 1, "Area:UI": 2 } } }).claims,
);

describe("per-label limits", () => {
  it("counts live claims per limited label on their issues' labels, case-insensitively", () => {
    const live = liveByLabel(limits, [["AREA:DB", "area:db"], ["area:ui"], ["bug"], ["area:UI"]]);
    expect(Object.fromEntries(live)).toEqual({ "area:db": 1, "area:ui": 2 });
    expect(labelAtLimit(["bug", "Area:DB"], limits, live)).toEqual({
      label: "area:db",
      limit: 1,
      live: 1,
    });
    expect(labelAtLimit(["area:ui"], limits, new Map([["area:ui", 1]]))).toBeNull();
    expect(labelAtLimit(["area:db"], labelLimits(ConfigSchema.parse({}).claims), live)).toBeNull();
  });

  it("the config refuses a limit below 1", () => {
    expect(ConfigSchema.safeParse({ claims: { maxActiveByLabel: { x: 0 } } }).success).toBe(false);
  });
});

describe("the breaker's pause", () => {
  it("holds back ordinary work only: repair issues and replies go on", () => {
    const claim = { kind: "work" as const, labels: ["bug"], repairLabel: "ci-repair" };
    expect(pausedFor(true, claim)).toBe(true);
    expect(pausedFor(false, claim)).toBe(false);
    expect(pausedFor(true, { ...claim, labels: ["CI-Repair"] })).toBe(false);
    expect(pausedFor(true, { ...claim, kind: "reply" })).toBe(false);
  });

  it("a denial names the failing checks, or the label at its limit; the pause comes first", () => {
    const base = { kind: "work" as const, repairLabel: "ci-repair", limits };
    const full = new Map([["area:db", 1]]);
    expect(
      policyDenial({ ...base, labels: ["area:db"], paused: { failing: ["build"] }, live: full }),
    ).toMatchObject({ reason: "paused", message: expect.stringContaining("build") });
    expect(policyDenial({ ...base, labels: ["area:db"], paused: null, live: full })).toMatchObject({
      reason: "label-limit",
      label: "area:db",
    });
    expect(policyDenial({ ...base, labels: ["bug"], paused: null, live: full })).toBeNull();
  });
});
