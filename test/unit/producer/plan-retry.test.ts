import { describe, expect, it } from "vitest";
import { parseSnapshot } from "../../../shared/graph/snapshot.ts";
import { plan } from "../../../shared/producer/plan.ts";

const issue = (number: number, extra: Record<string, unknown> = {}) => ({
  number,
  title: `Issue ${number}`,
  state: "open",
  stateReason: null,
  createdAt: "2026-11-01T00:00:00Z",
  updatedAt: "2026-11-01T00:00:00Z",
  closedAt: null,
  labels: [],
  ...extra,
});

const snapshot = parseSnapshot({
  repo: "acme/app",
  now: "2026-11-10T00:00:00Z",
  issues: [
    issue(1, { state: "closed", stateReason: "completed", closedAt: "2026-11-01T00:00:00Z" }),
    issue(2, { blockedBy: [1] }),
    issue(3, { blockedBy: [4] }),
    issue(4),
    issue(5, { labels: ["agent:ready"] }),
  ],
});

describe("plan: parked adds planned again", () => {
  it("adds a parked issue that is still ready, and nothing else, without a kick", () => {
    const retryAdds = new Map([
      [2, "kick: unblocked by #1"],
      [3, "kick: unblocked by #4"], // blocked again meanwhile
      [5, "kick: unblocked by #9"], // labeled meanwhile
    ]);
    expect(plan(snapshot, { causes: [] }).add).toEqual([]);
    expect(plan(snapshot, { causes: [], retryAdds }).add).toEqual([
      {
        number: 2,
        label: "agent:ready",
        reason: "retry of a parked write (kick: unblocked by #1)",
      },
    ]);
    // Released `done` since: a parked add does not undo that (only a kick does).
    expect(plan(snapshot, { causes: [], retryAdds, suppressed: new Set([2]) }).add).toEqual([]);
  });
});
