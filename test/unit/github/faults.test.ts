// Each fault kind with the expected number of attempts, and no write applied twice.
import { describe, expect, it } from "vitest";
import { GitHubApiError } from "../../../shared/github/errors.ts";
import { fetchSnapshot } from "../../../shared/github/fetch-snapshot.ts";
import { addLabels, addSubIssue, createComment, getIssue } from "../../../shared/github/writes.ts";
import { count, harness, issue, REPO, seed } from "./sim-harness.ts";

function setup(clientOpts = {}) {
  const h = harness({}, clientOpts);
  seed(h.sim, [issue(1), issue(2), issue(3)]);
  const repo = h.sim.state.repo("acme", "app")!;
  return { ...h, at: (n: number) => repo.issues.get(n)! };
}

const GET_ISSUE = "/repos/acme/app/issues/1";

describe("fault handling", () => {
  it.each([500, 502])(
    "retries a read after %i with jittered backoff and succeeds",
    async (status) => {
      const h = setup();
      h.sim.faults.set({ requests: [{ method: "GET", path: GET_ISSUE, status, times: 2 }] });
      const got = await getIssue(h.client, REPO, 1);
      expect(got.number).toBe(1);
      expect(count(h.sim, "GET /repos/{owner}/{repo}/issues/{issue_number}")).toBe(3);
      expect(h.client.stats.retries).toBe(2);
      // base 500 ms, equal jitter at random()=0.5: 375 then 750.
      expect(h.sleeps).toEqual([375, 750]);
    },
  );

  it("gives up after the bounded number of retries with a typed server error", async () => {
    const h = setup({ retry: { maxRetries: 2 } });
    h.sim.faults.set({ requests: [{ method: "GET", path: GET_ISSUE, status: 503, times: 10 }] });
    const error = (await getIssue(h.client, REPO, 1).catch((e: unknown) => e)) as GitHubApiError;
    expect(error).toBeInstanceOf(GitHubApiError);
    expect(error).toMatchObject({
      kind: "server",
      status: 503,
      attempts: 3,
      request: `GET ${GET_ISSUE}`,
    });
    expect(error.outcome).toBeUndefined();
    expect(count(h.sim, "GET")).toBe(3);
  });

  it("retries a read that times out", async () => {
    const h = setup({ timeoutMs: 40 });
    h.sim.faults.set({ requests: [{ method: "GET", path: GET_ISSUE, delayMs: 400 }] });
    const got = await getIssue(h.client, REPO, 1);
    expect(got.number).toBe(1);
    expect(h.client.stats.retries).toBe(1);
    expect(h.sleeps).toHaveLength(1);
    // The first attempt's answer is still delayed on the server; it is counted when it finishes.
    const path = "GET /repos/{owner}/{repo}/issues/{issue_number}";
    expect(count(h.sim, path)).toBe(1);
    await h.sim.settled();
    expect(count(h.sim, path)).toBe(2);
  });

  it("retries a read after a dropped connection", async () => {
    const h = setup();
    h.sim.faults.set({ requests: [{ method: "POST", path: "/graphql", network: true }] });
    const { snapshot } = await fetchSnapshot(h.client, REPO);
    expect(snapshot.issues).toHaveLength(3);
    expect(h.client.stats.retries).toBe(1);
  });

  it.each([
    [403, 7],
    [429, 3],
  ])(
    "waits out a %i secondary limit for exactly retry-after seconds, even for a comment",
    async (status, after) => {
      const h = setup();
      h.sim.faults.set({
        requests: [
          { method: "POST", path: "/repos/acme/app/issues/2/comments", status, retryAfter: after },
        ],
      });
      await createComment(h.client, REPO, 2, "hello");
      expect(h.sleeps).toEqual([after * 1000]);
      expect(h.client.stats.rateLimitWaits).toBe(1);
      // The refused request did nothing; the retry posted exactly one comment.
      expect(h.at(2).comments.map((c) => c.body)).toEqual(["hello"]);
      expect(count(h.sim, "POST /repos/{owner}/{repo}/issues/{issue_number}/comments")).toBe(2);
    },
  );

  it("gives up on a rate limit longer than it may wait, saying how long", async () => {
    const h = setup({ retry: { maxRateLimitWaitMs: 5_000 } });
    h.sim.faults.set({
      requests: [{ method: "GET", path: GET_ISSUE, status: 429, retryAfter: 60 }],
    });
    const error = (await getIssue(h.client, REPO, 1).catch((e: unknown) => e)) as GitHubApiError;
    expect(error).toMatchObject({
      kind: "rate-limited",
      status: 429,
      retryAfterMs: 60_000,
      attempts: 1,
    });
    expect(h.sleeps).toEqual([]);
  });

  it("waits for the primary limit's reset when the bucket is empty", async () => {
    const h = setup({
      now: () => Date.parse("2026-11-29T12:00:00Z"),
      retry: { maxRateLimitWaitMs: 4_000_000 },
    });
    h.sim.setClock({ now: "2026-11-29T12:00:00Z" });
    h.sim.limits.setRemaining(0);
    const pending = getIssue(h.client, REPO, 1).catch((e: unknown) => e);
    const error = (await pending) as GitHubApiError;
    // The sleeps are recorded, not slept; the bucket stays empty so the client gives up.
    expect(error.kind).toBe("rate-limited");
    expect(h.sleeps).toEqual([3_601_000, 3_601_000]);
    expect(error.attempts).toBe(3);
  });

  it("answers 404 at once, without retrying", async () => {
    const h = setup();
    h.sim.faults.set({
      requests: [
        {
          method: "POST",
          path: "/repos/acme/app/issues/3/labels",
          status: 404,
          body: { message: "Not Found" },
        },
      ],
    });
    const error = (await addLabels(h.client, REPO, 3, ["x"]).catch(
      (e: unknown) => e,
    )) as GitHubApiError;
    expect(error).toMatchObject({
      kind: "not-found",
      status: 404,
      attempts: 1,
      outcome: "not-applied",
    });
    expect(h.sleeps).toEqual([]);
    expect(h.at(3).labels).toEqual([]);
  });

  it("treats a deleted issue (GitHub answers 410 Gone) as not found, without retrying", async () => {
    const h = setup();
    h.sim.state.deleteIssue(h.at(3), "octocat");
    const error = (await addLabels(h.client, REPO, 3, ["x"]).catch(
      (e: unknown) => e,
    )) as GitHubApiError;
    expect(error).toMatchObject({
      kind: "not-found",
      status: 410,
      attempts: 1,
      outcome: "not-applied",
    });
    expect(h.sleeps).toEqual([]);
  });

  it("never retries a comment after a 500: one attempt, outcome unknown, no duplicate", async () => {
    const h = setup();
    // The server applies the write, then the answer is lost as a 500.
    h.sim.faults.set({
      requests: [
        { method: "POST", path: "/repos/acme/app/issues/2/comments", status: 500, phase: "after" },
      ],
    });
    const error = (await createComment(h.client, REPO, 2, "once").catch(
      (e: unknown) => e,
    )) as GitHubApiError;
    expect(error).toMatchObject({ kind: "server", attempts: 1, outcome: "unknown" });
    expect(error.message).toContain("may or may not have been applied");
    expect(h.at(2).comments.map((c) => c.body)).toEqual(["once"]);
    expect(count(h.sim, "POST /repos/{owner}/{repo}/issues/{issue_number}/comments")).toBe(1);
  });

  it("never retries a comment after a timeout", async () => {
    const h = setup({ timeoutMs: 40 });
    h.sim.faults.set({
      requests: [
        { method: "POST", path: "/repos/acme/app/issues/2/comments", delayMs: 300, phase: "after" },
      ],
    });
    const error = (await createComment(h.client, REPO, 2, "slow").catch(
      (e: unknown) => e,
    )) as GitHubApiError;
    expect(error).toMatchObject({ kind: "timeout", attempts: 1, outcome: "unknown" });
    await h.sim.settled();
    expect(h.at(2).comments).toHaveLength(1);
    expect(count(h.sim, "POST /repos/{owner}/{repo}/issues/{issue_number}/comments")).toBe(1);
  });

  it("a request with a deadline does not wait out a 429 whose retry-after ends past it", async () => {
    const h = setup({ now: () => 1_000_000 });
    h.sim.faults.set({
      requests: [
        { method: "POST", path: "/repos/acme/app/issues/2/comments", status: 429, retryAfter: 10 },
      ],
    });
    const deadline = { atMs: 1_000_000 + 5_000, signal: new AbortController().signal };
    const error = (await createComment(h.client.bounded(deadline), REPO, 2, "late").catch(
      (e: unknown) => e,
    )) as GitHubApiError;
    expect(error).toMatchObject({ kind: "deadline", attempts: 1, outcome: "not-applied" });
    expect(h.sleeps).toEqual([]);
    expect(h.at(2).comments).toEqual([]);
    // The view keeps the deadline; the client it came from does not.
    h.sim.faults.set({
      requests: [
        { method: "POST", path: "/repos/acme/app/issues/2/comments", status: 429, retryAfter: 3 },
      ],
    });
    await createComment(h.client, REPO, 2, "unbounded");
    expect(h.sleeps).toEqual([3_000]);
  });

  it("a request in flight at its deadline is aborted: outcome unknown, never retried", async () => {
    const h = setup({ timeoutMs: 5_000 });
    h.sim.faults.set({
      requests: [{ method: "POST", path: "/repos/acme/app/issues/2/comments", delayMs: 300 }],
    });
    const deadline = { atMs: Date.now() + 40, signal: AbortSignal.timeout(40) };
    const error = (await createComment(h.client.bounded(deadline), REPO, 2, "slow").catch(
      (e: unknown) => e,
    )) as GitHubApiError;
    expect(error).toMatchObject({ kind: "deadline", attempts: 1, outcome: "unknown" });
    expect(error.message).toContain("may or may not have been applied");
    // GitHub applies what it received (the residual risk the write record's margin covers).
    await h.sim.settled();
    expect(count(h.sim, "POST /repos/{owner}/{repo}/issues/{issue_number}/comments")).toBe(1);
  });

  it("an idempotent read is not retried when its backoff would end past the deadline", async () => {
    const h = setup({ now: () => 2_000_000 });
    h.sim.faults.set({ requests: [{ method: "GET", path: GET_ISSUE, status: 502, times: 3 }] });
    const deadline = { atMs: 2_000_000 + 100, signal: new AbortController().signal };
    const error = (await getIssue(h.client.bounded(deadline), REPO, 1).catch(
      (e: unknown) => e,
    )) as GitHubApiError;
    expect(error).toMatchObject({ kind: "server", attempts: 1 });
    expect(h.sleeps).toEqual([]);
  });

  it("retries an idempotent label write after a 502 without duplicating the label", async () => {
    const h = setup();
    h.sim.faults.set({
      requests: [
        { method: "POST", path: "/repos/acme/app/issues/1/labels", status: 502, phase: "after" },
      ],
    });
    await addLabels(h.client, REPO, 1, ["agent:ready"]);
    expect(h.at(1).labels).toEqual(["agent:ready"]);
    expect(h.at(1).labelEvents).toHaveLength(1);
    expect(count(h.sim, "POST /repos/{owner}/{repo}/issues/{issue_number}/labels")).toBe(2);
  });

  it("checks before re-sending a sub-issue link whose answer timed out: applied once, no error", async () => {
    const h = setup({ timeoutMs: 40 });
    h.sim.faults.set({
      requests: [
        {
          method: "POST",
          path: "/repos/acme/app/issues/1/sub_issues",
          delayMs: 200,
          phase: "after",
        },
      ],
    });
    await addSubIssue(h.client, REPO, 1, 2);
    expect(h.at(1).subIssueIds).toEqual([h.at(2).id]);
    await h.sim.settled(); // the slow answer finishes on the server
    expect(count(h.sim, "POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues")).toBe(1);
  });

  it("re-sends a sub-issue link whose 500 came before anything was applied", async () => {
    const h = setup();
    h.sim.faults.set({
      requests: [
        {
          method: "POST",
          path: "/repos/acme/app/issues/1/sub_issues",
          status: 500,
          phase: "before",
        },
      ],
    });
    await addSubIssue(h.client, REPO, 1, 2);
    expect(h.at(1).subIssueIds).toEqual([h.at(2).id]);
    expect(count(h.sim, "POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues")).toBe(2);
  });
});
