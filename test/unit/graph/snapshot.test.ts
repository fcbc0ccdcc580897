import { describe, expect, it } from "vitest";
import { parseSnapshot } from "../../../shared/graph/snapshot.ts";
import { ValidationError } from "../../../shared/validation.ts";

const issue = {
  number: 1,
  title: "One",
  state: "open",
  stateReason: null,
  createdAt: "2026-11-01T00:00:00Z",
  updatedAt: "2026-11-01T00:00:00Z",
  closedAt: null,
  labels: [],
};

function errorOf(input: unknown): ValidationError {
  try {
    parseSnapshot(input);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error("expected a ValidationError");
}

describe("snapshot schema (spec 3.1)", () => {
  it("accepts the minimal and the full form, ignoring unknown fields", () => {
    const parsed = parseSnapshot({
      repo: "acme/rocket",
      now: "2026-11-29T12:00:00Z",
      extra: true,
      issues: [
        { ...issue, unknown: 1, parent: 3, blockedBy: [4, "other/repo#9"], body: null },
        {
          ...issue,
          number: 2,
          labelEvents: [
            {
              label: "agent:ready",
              action: "labeled",
              actor: "octocat",
              createdAt: "2026-11-28T00:00:00+01:00",
            },
          ],
        },
      ],
      external: [{ ref: "other/repo#9", state: "closed", closedAt: "2026-11-28T10:00:00Z" }],
    });
    expect(parsed.issues).toHaveLength(2);
    expect(parsed.issues[0]).not.toHaveProperty("unknown");
    expect(parseSnapshot({ repo: "a/b", issues: [] }).issues).toEqual([]);
  });

  it.each([
    [{ issues: [] }, "repo"],
    [{ repo: "no-slash", issues: [] }, "repo"],
    [{ repo: "a/b" }, "issues"],
    [{ repo: "a/b", issues: [{ ...issue, state: "done" }] }, "issues[0].state"],
    [{ repo: "a/b", issues: [issue, { ...issue, number: 0 }] }, "issues[1].number"],
    [{ repo: "a/b", issues: [{ ...issue, number: 1.5 }] }, "issues[0].number"],
    [{ repo: "a/b", issues: [{ ...issue, createdAt: "yesterday" }] }, "issues[0].createdAt"],
    [{ repo: "a/b", issues: [{ ...issue, labels: ["ok", 3] }] }, "issues[0].labels[1]"],
    [
      { repo: "a/b", issues: [{ ...issue, blockedBy: [2, "not a ref"] }] },
      "issues[0].blockedBy[1]",
    ],
    [{ repo: "a/b", issues: [{ ...issue, parent: -2 }] }, "issues[0].parent"],
    [{ repo: "a/b", issues: [{ ...issue, stateReason: "wontfix" }] }, "issues[0].stateReason"],
    [
      {
        repo: "a/b",
        issues: [
          {
            ...issue,
            labelEvents: [{ label: "x", action: "added", createdAt: "2026-11-01T00:00:00Z" }],
          },
        ],
      },
      "issues[0].labelEvents[0].action",
    ],
    [{ repo: "a/b", issues: [issue, issue] }, "issues[1].number"],
    [{ repo: "a/b", issues: [], external: [{ ref: "x/y#1", state: "gone" }] }, "external[0].state"],
    [
      {
        repo: "a/b",
        issues: [],
        external: [
          { ref: "x/y#1", state: "open" },
          { ref: "X/Y#1", state: "open" },
        ],
      },
      "external[1].ref",
    ],
    [{ repo: "a/b", now: "2026-13-01T00:00:00Z", issues: [] }, "now"],
  ])("rejects %j naming %s", (input, path) => {
    const error = errorOf(input);
    expect(error.path).toBe(path);
    expect(error.message).toContain(`at ${path}:`);
  });

  it("rejects input that is not an object at the root", () => {
    expect(errorOf([]).path).toBe("(root)");
    expect(errorOf(null).path).toBe("(root)");
  });
});
