import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  branchName,
  branchPatternProblem,
  MAX_SLUG_LENGTH,
  renderBranchPattern,
  STOP_WORDS,
  slugify,
} from "../../../shared/idd/branch-name.ts";

const title = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 80 }),
  fc
    .array(fc.constantFrom(...STOP_WORDS, "fix", "login", "OAuth", "2FA", "—", "日本", "a-b"), {
      maxLength: 20,
    })
    .map((w) => w.join(" ")),
);

describe("slugify", () => {
  it("always gives lower-case a-z0-9 tokens joined by single hyphens, at most 40 characters", () => {
    fc.assert(
      fc.property(title, (t) => {
        const slug = slugify(t);
        expect(slug).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
        expect(slug.length).toBeLessThanOrEqual(MAX_SLUG_LENGTH);
      }),
    );
  });

  it("never keeps a stop word as a token and is idempotent", () => {
    fc.assert(
      fc.property(title, (t) => {
        const slug = slugify(t);
        for (const token of slug.split("-")) expect(STOP_WORDS).not.toContain(token);
        expect(slugify(slug)).toBe(slug);
      }),
    );
  });

  it("keeps a short title's tokens in order", () => {
    expect(slugify("Ship the CLI (and docs) for v2")).toBe("ship-cli-docs-v2");
  });
});

describe("branch names", () => {
  it("matches the default branch pattern", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), title, (number, t) => {
        expect(renderBranchPattern({ number, title: t })).toBe(branchName(number, t));
      }),
    );
  });

  it("accepts the documented patterns and names the problem of a bad one", () => {
    expect(branchPatternProblem("issue/{number}-{slug}")).toBeNull();
    expect(branchPatternProblem("claude/issue-{number}-p{phase}")).toBeNull();
    expect(branchPatternProblem("x/{number}..{slug}")).toBe("a branch name cannot contain `..`");
    expect(branchPatternProblem("x/{number}.lock")).toBe(
      "a branch name cannot end with `.` or `.lock`",
    );
    expect(branchPatternProblem("x/{number}{")).toBe("unbalanced braces");
  });

  it("rejects a non-integer issue number", () => {
    expect(() => branchName(1.5, "x")).toThrow("positive integer");
  });
});
