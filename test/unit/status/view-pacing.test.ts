import { describe, expect, it } from "vitest";
import { describeFirstReconcile, describeInstallProgress } from "../../../shared/status/view.ts";

describe("the status page's words for pacing (issue 25)", () => {
  it("says where a first full reconcile waits, and nothing once it is done", () => {
    expect(describeFirstReconcile({ state: "done", at: "2026-12-02T10:00:00Z" })).toBeNull();
    expect(describeFirstReconcile(undefined)).toBeNull();
    expect(describeFirstReconcile({ state: "waiting", position: 1 })).toBe(
      "The first full reconcile waits for the installation's permit (1st in line); until then the graph holds only what webhooks brought.",
    );
    expect(describeFirstReconcile({ state: "waiting", position: 12 })).toContain("(12th in line)");
    expect(describeFirstReconcile({ state: "waiting", position: 23 })).toContain("(23rd in line)");
    expect(describeFirstReconcile({ state: "waiting", position: null })).not.toContain("in line");
    expect(describeFirstReconcile({ state: "running" })).toContain("under way");
  });

  it("gives the installation's progress, budget and the time the rest takes", () => {
    expect(
      describeInstallProgress({
        reconciled: 1_200,
        waiting: 8_790,
        inFlight: 10,
        usedThisHour: 4_800,
        budgetPerHour: 11_250,
        etaMs: 3 * 3_600_000 + 20 * 60_000,
      }),
    ).toBe(
      "1,200 of 10,000 repositories reconciled, 8,790 waiting, 10 in progress; 4,800 requests spent on reconciles this hour (budget 11,250 an hour); the rest in about 3 h 20 min.",
    );
    expect(
      describeInstallProgress({
        reconciled: 3,
        waiting: 0,
        inFlight: 0,
        usedThisHour: 12,
        budgetPerHour: 4_500,
        etaMs: 0,
      }),
    ).toBe(
      "3 of 3 repositories reconciled, 0 waiting, 0 in progress; 12 requests spent on reconciles this hour (budget 4,500 an hour).",
    );
  });
});
