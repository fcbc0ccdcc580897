// The circuit breaker (spec 6.4, config `breaker`) on real storage with the simulator's CI on
// the default branch: red pauses ordinary work (claim-next 204 with X-Switchyard-Paused, a direct
// claim 409 paused) while repair issues are still granted and the queue still lists everything;
// green resumes; a re-run that passes replaces the failure; a lost webhook is healed by the
// reconcile; empty suites and absent required checks never pause; a new head's pending checks
// keep the previous verdict for at most pendingMinutes; a missing permission is reported.
import { runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { deliverAndSettle, install, type repoStub, seedIssue, sim } from "./helpers.ts";

type Stub = ReturnType<typeof repoStub>;

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

const ready = (n: number, extra: string[] = []) =>
  seedIssue(n, { labels: ["agent:ready", ...extra] });

async function setup(repo: string, config: string) {
  const installed = await install(
    { repo, issues: [ready(1), ready(2), ready(3, ["ci-repair"])] },
    { ".github/switchyard.yml": config },
  );
  await deliverAndSettle(installed.stub);
  return installed;
}

async function checkRun(repo: string, body: Record<string, unknown>) {
  return sim<{ id: number; head_sha: string }>(`/repos/${repo}/check-runs`, { body });
}

type QueueBody = {
  items: Array<{ number: number; paused?: boolean }>;
  paused?: { since: string; sha: string; failing: Array<{ name: string; url: string | null }> };
};

const queue = async (stub: Stub) =>
  (await stub.workQueue({ limit: 20 })).body as unknown as QueueBody;

const breakerOf = async (stub: Stub) =>
  (await stub.graph()).breaker as { state: string; reason: string | null; head: { sha: string } };

describe("circuit breaker", () => {
  it("red: only repair issues are granted, the queue lists all with paused set; a passing re-run resumes", async () => {
    const repo = "brk-red/app";
    const { stub } = await setup(repo, "breaker: {}\n");
    expect((await breakerOf(stub)).state).toBe("green");

    const failed = await checkRun(repo, { name: "build", conclusion: "failure" });
    await deliverAndSettle(stub);
    const q = await queue(stub);
    expect(q.paused).toMatchObject({
      sha: failed.head_sha,
      failing: [{ name: "build", url: expect.stringContaining("/runs/") }],
    });
    expect(q.items.map((i) => [i.number, i.paused])).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ]);

    // claim-next hands out the repair issue, then nothing, saying why.
    const repair = await stub.claim(null, { agentId: "fixer" });
    expect(repair.status).toBe(201);
    expect((repair.body as { issue: { number: number } }).issue.number).toBe(3);
    const none = await stub.claim(null, { agentId: "worker" });
    expect(none.status).toBe(204);
    expect(none.headers?.["x-switchyard-paused"]).toBe(q.paused!.since);
    expect(none.headers?.["retry-after"]).toBe("60");
    const direct = await stub.claim(1, { agentId: "worker" });
    expect(direct.status).toBe(409);
    expect(direct.body).toMatchObject({ error: "conflict", reason: "paused" });
    expect((direct.body as { message: string }).message).toContain("build");

    // A re-run of the same check passes: it replaces the failure, the queue resumes.
    await checkRun(repo, { name: "build", conclusion: "success" });
    await deliverAndSettle(stub);
    expect((await queue(stub)).paused).toBeUndefined();
    expect((await stub.claim(null, { agentId: "worker" })).status).toBe(201);
    const audit = (await stub.auditLog(50)).filter((e) => e.kind === "breaker");
    expect(audit.map((e) => (e.detail as { state: string }).state)).toEqual(["green", "red"]);
  });

  it("a lost webhook is healed by the reconcile's re-read; statuses and workflow runs count too", async () => {
    const repo = "brk-lost/app";
    const { stub } = await setup(repo, "breaker: {}\n");
    await sim("/faults", {
      method: "PUT",
      body: { webhooks: [{ event: "status", kind: "drop", times: 1 }] },
    });
    await sim(`/repos/${repo}/statuses`, { body: { context: "ci/lint", state: "failure" } });
    await deliverAndSettle(stub);
    expect((await queue(stub)).paused).toBeUndefined(); // the webhook never came

    await stub.armReconcile(); // the cron's tick
    await deliverAndSettle(stub);
    expect((await queue(stub)).paused?.failing.map((f) => f.name)).toEqual(["ci/lint"]);

    await sim(`/repos/${repo}/statuses`, { body: { context: "ci/lint", state: "success" } });
    await sim(`/repos/${repo}/workflow-runs`, {
      body: { name: "Deploy", conclusion: "startup_failure" },
    });
    await deliverAndSettle(stub);
    expect((await queue(stub)).paused?.failing.map((f) => f.name)).toEqual(["Deploy"]);
  });

  it("an empty check suite and an absent required check never pause", async () => {
    const repo = "brk-required/app";
    const { stub } = await setup(repo, "breaker:\n  checks: [build]\n");
    await sim(`/repos/${repo}/check-suites`, { body: { app: "switchyard-sim" } });
    await checkRun(repo, { name: "lint", conclusion: "failure" }); // not required
    await deliverAndSettle(stub);
    await stub.armReconcile();
    await deliverAndSettle(stub);
    expect((await breakerOf(stub)).state).toBe("green");
    expect((await queue(stub)).paused).toBeUndefined();

    await checkRun(repo, { name: "build", conclusion: "timed_out" });
    await deliverAndSettle(stub);
    expect((await queue(stub)).paused?.failing.map((f) => f.name)).toEqual(["build"]);
  });

  it("a new head's pending checks keep the red verdict for pendingMinutes; a green head resumes", async () => {
    const repo = "brk-pending/app";
    const { stub } = await setup(repo, "breaker:\n  pendingMinutes: 30\n");
    const red = await checkRun(repo, { name: "build", conclusion: "failure" });
    await deliverAndSettle(stub);

    // A fix is pushed; its build runs.
    await sim(`/repos/${repo}/push`, { body: { allowEmpty: true, message: "fix" } });
    const running = await checkRun(repo, { name: "build", conclusion: null });
    await deliverAndSettle(stub);
    expect(running.head_sha).not.toBe(red.head_sha);
    const carried = await queue(stub);
    expect(carried.paused?.sha).toBe(red.head_sha);
    const later = await runInDurableObject(stub, (o: RepoObject) =>
      o.breaker.view(Date.now() + 31 * 60_000),
    );
    expect(later.state).toBe("pending");
    expect(later.paused).toBeNull();

    // Its build passes: green at once.
    await sim(`/repos/${repo}/check-runs/${running.id}`, {
      method: "PATCH",
      body: { conclusion: "success" },
    });
    await deliverAndSettle(stub);
    expect((await breakerOf(stub)).state).toBe("green");
    expect((await queue(stub)).paused).toBeUndefined();
  });

  it("a missing permission is reported with its reason and never shown as green", async () => {
    const repo = "brk-perm/app";
    const { stub, installationId } = await setup(repo, "breaker: {}\n");
    await sim(`/installations/${installationId}/permissions`, {
      method: "PUT",
      body: { permissions: { checks: null } },
    });
    await stub.armReconcile();
    await deliverAndSettle(stub);
    const breaker = await breakerOf(stub);
    expect(breaker.state).toBe("off");
    expect(breaker.reason).toContain("checks: read");
    expect((await queue(stub)).paused).toBeUndefined();
  });
});
