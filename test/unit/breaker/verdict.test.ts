// The circuit breaker's verdict rule (shared/breaker/verdict.ts) and the facts webhooks give it
// (shared/breaker/facts.ts), pure.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkRunFact,
  checkSuiteFact,
  pushFact,
  statusFact,
} from "../../../shared/breaker/facts.ts";
import {
  breakerVerdict,
  type CheckRecord,
  commitState,
  laterHead,
  latestPerCheck,
  redSince,
} from "../../../shared/breaker/verdict.ts";
import type { WebhookPayload } from "../../../shared/github/webhooks.ts";

const run = (
  name: string,
  runId: number,
  status: CheckRecord["status"],
  conclusion: string | null = null,
  extra: Partial<CheckRecord> = {},
): CheckRecord => ({
  source: "check",
  key: `1:${name}`,
  name,
  runId,
  attempt: 1,
  status,
  conclusion,
  url: `https://ci/${runId}`,
  ...extra,
});

const breaker = { checks: null, repairLabel: "ci-repair", pendingMinutes: 10 };

describe("a commit's state", () => {
  it("red conclusions are red; success, neutral, skipped, cancelled and stale are not", () => {
    for (const c of ["failure", "timed_out", "startup_failure", "action_required", "error"]) {
      expect(commitState([run("b", 1, "completed", c)], null).state).toBe("red");
    }
    for (const c of ["success", "neutral", "skipped", "cancelled", "stale"]) {
      expect(commitState([run("b", 1, "completed", c)], null).state).toBe("green");
    }
    expect(commitState([run("b", 1, "in_progress")], null)).toEqual({
      state: "pending",
      pending: ["b"],
    });
    expect(commitState([], null).state).toBe("green");
  });

  it("the latest run of a check wins: a re-run that passes replaces the failure", () => {
    const failed = run("build", 10, "completed", "failure");
    const rerun = run("build", 11, "completed", "success");
    expect(commitState([failed, rerun], null).state).toBe("green");
    expect(commitState([rerun, failed], null).state).toBe("green");
    // A workflow re-run keeps its id; its attempt orders it.
    const wf = (attempt: number, conclusion: string | null, status: CheckRecord["status"]) =>
      run("CI", 5, status, conclusion, { source: "workflow", key: "77", attempt });
    expect(
      commitState([wf(1, "failure", "completed"), wf(2, null, "in_progress")], null).state,
    ).toBe("pending");
  });

  it("only required checks count, and an absent required check never pauses", () => {
    const reports = [
      run("lint", 1, "completed", "failure"),
      run("build", 2, "completed", "success"),
    ];
    expect(commitState(reports, ["build"]).state).toBe("green");
    expect(commitState(reports, ["Lint"]).state).toBe("red");
    expect(commitState(reports, ["deploy"]).state).toBe("green");
  });

  it("any order of the same reports gives the same latest state (webhooks arrive in any order)", () => {
    // One run id belongs to one check and ends with one conclusion, as on GitHub; its status
    // moves queued → in progress → completed, and any of those reports may come late.
    const reportArb = fc
      .record({
        runId: fc.integer({ min: 1, max: 6 }),
        status: fc.constantFrom("queued" as const, "in_progress" as const, "completed" as const),
      })
      .map(({ runId, status }) =>
        run(
          ["build", "lint", "test"][runId % 3]!,
          runId,
          status,
          status === "completed" ? ["success", "failure", "cancelled"][runId % 3]! : null,
        ),
      );
    fc.assert(
      fc.property(
        fc
          .array(reportArb, { maxLength: 12 })
          .chain((rs) =>
            fc.tuple(
              fc.constant(rs),
              fc.shuffledSubarray(rs, { minLength: rs.length, maxLength: rs.length }),
            ),
          ),
        ([reports, shuffled]) => {
          expect(latestPerCheck(shuffled)).toEqual(latestPerCheck(reports));
        },
      ),
    );
  });
});

describe("the breaker's verdict", () => {
  const head = { sha: "b".repeat(40), sinceMs: 1_000_000 };
  const previous = { sha: "a".repeat(40) };
  const red = [run("build", 1, "completed", "failure")];

  it("red head: red, with what fails; green head: green; nothing known: unknown", () => {
    const input = { breaker, head, previous, previousChecks: [], nowMs: 1_000_000 };
    expect(breakerVerdict({ ...input, headChecks: red })).toEqual({
      state: "red",
      sha: head.sha,
      failing: [{ name: "build", url: "https://ci/1" }],
    });
    expect(breakerVerdict({ ...input, headChecks: [run("b", 2, "completed", "success")] })).toEqual(
      { state: "green", sha: head.sha },
    );
    expect(breakerVerdict({ ...input, head: null, headChecks: [] }).state).toBe("unknown");
  });

  it("a pending head keeps a red previous verdict for at most pendingMinutes", () => {
    const input = {
      breaker,
      head,
      headChecks: [run("build", 2, "in_progress")],
      previous,
      previousChecks: red,
    };
    expect(breakerVerdict({ ...input, nowMs: head.sinceMs + 9 * 60_000 })).toMatchObject({
      state: "red",
      sha: previous.sha,
      pendingHead: head.sha,
      untilMs: head.sinceMs + 10 * 60_000,
    });
    expect(breakerVerdict({ ...input, nowMs: head.sinceMs + 10 * 60_000 })).toMatchObject({
      state: "pending",
      sha: head.sha,
    });
    expect(breakerVerdict({ ...input, previousChecks: [], nowMs: head.sinceMs }).state).toBe(
      "pending",
    );
  });

  it("red since: kept while red, set when it turns red, cleared otherwise", () => {
    const r = { state: "red" as const, sha: "x", failing: [] };
    expect(redSince(null, r, 5)).toBe(5);
    expect(redSince(3, r, 5)).toBe(3);
    expect(redSince(3, { state: "green", sha: "x" }, 5)).toBeNull();
  });

  it("the head: a push moving on from it wins; otherwise the later; a late older push loses", () => {
    const stored = { sha: "A", atMs: 5_000 };
    expect(laterHead(null, { sha: "A", atMs: 0, before: null })).toBe(true);
    expect(laterHead(stored, { sha: "A", atMs: 9_000, before: "Z" })).toBe(false);
    expect(laterHead(stored, { sha: "B", atMs: 4_000, before: "A" })).toBe(true); // force or clock
    expect(laterHead(stored, { sha: "C", atMs: 6_000, before: "B" })).toBe(true);
    expect(laterHead(stored, { sha: "Z", atMs: 4_000, before: "Y" })).toBe(false);
  });
});

describe("facts from webhooks", () => {
  const repository = { id: 1, name: "app", full_name: "o/app", default_branch: "main" };
  const sender = { login: "x", id: 1 };

  it("a check suite without runs and checks of other branches change nothing", () => {
    const suite = (branch: string, runs: number) =>
      ({
        action: "completed",
        repository,
        sender,
        check_suite: {
          id: 1,
          head_branch: branch,
          head_sha: "s",
          conclusion: "failure",
          latest_check_runs_count: runs,
        },
      }) as WebhookPayload<"check_suite", "completed">;
    expect(checkSuiteFact(suite("main", 0)).kind).toBe("skip");
    expect(checkSuiteFact(suite("feature", 2)).kind).toBe("skip");
    expect(checkSuiteFact(suite("main", 2))).toMatchObject({
      kind: "fact",
      fact: { type: "suite", runs: 2, conclusion: "failure" },
    });
    const checkRun = {
      action: "completed",
      repository,
      sender,
      check_run: {
        id: 9,
        name: "build",
        head_sha: "s",
        status: "completed",
        conclusion: "failure",
        html_url: "https://x/runs/9",
        app: { id: 15368 },
        check_suite: { id: 1, head_branch: "feature" },
      },
    } as WebhookPayload<"check_run", "completed">;
    expect(checkRunFact(checkRun).kind).toBe("skip");
    checkRun.check_run.check_suite.head_branch = "main";
    expect(checkRunFact(checkRun)).toMatchObject({
      fact: { type: "report", sha: "s", record: { key: "15368:build", conclusion: "failure" } },
    });
  });

  it("a status counts when its commit is on the default branch; a deleted branch moves no head", () => {
    const status = (branches: string[]) =>
      ({
        repository,
        sender,
        id: 3,
        sha: "s",
        context: "ci/lint",
        state: "error",
        target_url: null,
        branches: branches.map((name) => ({ name })),
      }) as WebhookPayload<"status", "">;
    expect(statusFact(status(["dev"])).kind).toBe("skip");
    expect(statusFact(status(["dev", "main"]))).toMatchObject({
      fact: { record: { source: "status", status: "completed", conclusion: "error" } },
    });
    const push = (after: string) =>
      ({
        ref: "refs/heads/main",
        before: "a",
        after,
        repository: { ...repository, pushed_at: 1_700_000_000 },
        commits: [],
      }) as WebhookPayload<"push", "">;
    expect(pushFact(push("0".repeat(40)), 0).kind).toBe("skip");
    expect(pushFact(push("b"), 0)).toMatchObject({
      fact: { type: "head", sha: "b", before: "a", atMs: 1_700_000_000_000 },
    });
  });
});
