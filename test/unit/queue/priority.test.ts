import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../../shared/config/schema.ts";
import { priorityRank, rankTable } from "../../../shared/queue/priority.ts";

const table = rankTable(
  ConfigSchema.parse({
    priority: {
      labels: { P0: 0, P1: 1, "prio:low": 7 },
      project: { number: 3, field: "Priority", options: { Urgent: 0, High: 2 } },
    },
  }).priority,
);

describe("priority ranks", () => {
  it("an issue with several ranked labels takes the lowest; names compare case-insensitively", () => {
    expect(priorityRank(table, ["bug", "PRIO:LOW", "p1"], null)).toBe(1);
    expect(priorityRank(table, ["prio:low"], null)).toBe(7);
  });

  it("when labels and the project field both rank an issue, the lower rank wins", () => {
    expect(priorityRank(table, ["P1"], "urgent")).toBe(0);
    expect(priorityRank(table, ["P0"], "High")).toBe(0);
    expect(priorityRank(table, ["prio:low"], "High")).toBe(2);
  });

  it("unranked: no ranked label and no ranked option (null, last in order=priority)", () => {
    expect(priorityRank(table, ["bug"], null)).toBeNull();
    expect(priorityRank(table, [], "Someday")).toBeNull();
    expect(priorityRank(rankTable(ConfigSchema.parse({}).priority), ["P0"], "Urgent")).toBeNull();
  });

  it("the config refuses a rank that is not a whole number from 0", () => {
    expect(ConfigSchema.safeParse({ priority: { labels: { P0: -1 } } }).success).toBe(false);
    expect(ConfigSchema.safeParse({ priority: { labels: { P0: 1.5 } } }).success).toBe(false);
    expect(
      ConfigSchema.safeParse({ priority: { project: { number: 1, field: "", options: {} } } })
        .success,
    ).toBe(false);
  });
});
