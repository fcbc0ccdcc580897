// Issue 9, fix 8, on the simulator: a close in one repository reaches the repositories of the
// same installation that it blocks at once (no reconcile), and the full reconcile re-reads the
// comments of issues whose IDD claims matter, so a missed `issue_comment` webhook cannot hide a
// claim marker.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import type { GraphEvent } from "../../shared/ingest/events.ts";
import { deliverAll, install, labelsOf, type repoStub, seedIssue, settle, sim } from "./helpers.ts";

type Stub = ReturnType<typeof repoStub>;

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

async function settleAll(...stubs: Stub[]) {
  for (let i = 0; i < 3; i++) {
    await deliverAll();
    for (const stub of stubs) await settle(stub);
  }
}

const reconciles = async (stub: Stub) =>
  (await stub.auditLog(500)).filter((a) => a.kind === "reconcile").length;

describe("cross-repository closes", () => {
  it("a close in repository B reaches the issue it blocks in repository A without a reconcile", async () => {
    const lib = await install({ repo: "xr-close/lib", issues: [seedIssue(1)] });
    const app = await install({
      repo: "xr-close/app",
      issues: [seedIssue(2, { blockedBy: ["xr-close/lib#1"] }), seedIssue(3)],
    });
    expect(app.installationId).toBe(lib.installationId);
    await settleAll(lib.stub, app.stub);
    expect(await labelsOf(app.repo, 2)).not.toContain("agent:ready");
    const reconcilesBefore = await reconciles(app.stub);

    await sim("/repos/xr-close/lib/issues/1/close", { body: {} });
    const delivered = await deliverAll();
    // The acknowledgement path calls no other object: only B's own alarm tells A.
    expect(delivered.map((d) => [d.event, d.status])).toContainEqual(["issues", 200]);
    await settle(lib.stub);
    await settle(app.stub);
    await deliverAll();

    expect(await labelsOf(app.repo, 2)).toContain("agent:ready");
    expect(await reconciles(app.stub)).toBe(reconcilesBefore);
    const told = (await app.stub.auditLog(50)).find((a) => a.kind === "cross-repo");
    expect(told?.detail).toMatchObject({
      from: "xr-close/lib",
      changes: ["xr-close/lib#1 is closed"],
    });
    // Delivered: nothing stays queued at B.
    const queued = await runInDurableObject(lib.stub, (o: RepoObject) =>
      o.store.meta.get("crossRepoNotices"),
    );
    expect(queued).toBeUndefined();

    // A reopen reaches it too, and a replay of the same notice changes nothing.
    await sim("/repos/xr-close/lib/issues/1/reopen", { body: {} });
    await deliverAll();
    await settle(lib.stub);
    await settle(app.stub);
    const external = await runInDurableObject(app.stub, (o: RepoObject) =>
      o.store.snapshot().external?.find((e) => e.ref === "xr-close/lib#1"),
    );
    expect(external?.state).toBe("open");
    const replay = await app.stub.externalStates({
      from: { repoId: lib.repoId, fullName: lib.repo, installationId: lib.installationId },
      notices: [
        {
          number: 1,
          state: "closed",
          closedAt: "2020-01-01T00:00:00Z",
          at: "2020-01-01T00:00:00Z",
        },
      ],
    });
    expect(replay.applied).toBe(0);
    expect(await reconciles(app.stub)).toBe(reconcilesBefore);
  });

  it("a repository that does not track the issue, or another installation's, changes nothing", async () => {
    const lib = await install({ repo: "xr-other/lib", issues: [seedIssue(1)] });
    const app = await install({ repo: "xr-other/app", issues: [seedIssue(2)] });
    const notice = {
      number: 1,
      state: "closed" as const,
      closedAt: null,
      at: "2030-01-01T00:00:00Z",
    };
    const untracked = await app.stub.externalStates({
      from: { repoId: lib.repoId, fullName: lib.repo, installationId: lib.installationId },
      notices: [notice],
    });
    expect(untracked.applied).toBe(0);
    const stranger = await app.stub.externalStates({
      from: { repoId: 1, fullName: "xr-other/app", installationId: lib.installationId + 1000 },
      notices: [notice],
    });
    expect(stranger.applied).toBe(0);
  });
});

describe("marker comments re-read by the full reconcile", () => {
  const claimed = (agent: string, claim: string, at: string) =>
    `<!-- claimed-by: ${agent} ${claim} supersedes: none ${at} branch: issue/1-x -->`;
  const unclaimed = (agent: string, claim: string, at: string) =>
    `<!-- unclaimed-by: ${agent} ${claim} ${at} -->`;
  const nowSecond = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  const ready = (n: number, labels: string[] = []) =>
    seedIssue(n, { labels: ["agent:ready", ...labels] });

  it("finds a marker whose webhook was never delivered, and it then blocks a grant", async () => {
    const { stub, repo } = await install({
      repo: "xr-markers/app",
      issues: [ready(1), ready(2, ["agent:processing"]), ready(3), ready(4)],
    });
    await sim("/users", {
      body: { login: "writer", token: "tok-writer", repos: { [repo]: "write" } },
    });
    // An earlier, released IDD claim on #1, delivered: #1 has marker comments in stored data.
    await sim(`/repos/${repo}/issues/1/comments`, {
      body: { body: unclaimed("idd-bot", "c-0", nowSecond()), actor: "writer" },
    });
    await settleAll(stub);
    // A fleet claim on #3 (a live claim).
    const held = await stub.claim(3, { agentId: "agent-c" });
    expect(held.status).toBe(201);
    await settleAll(stub);

    // A new IDD claim on #1 whose webhook is lost.
    await sim(`/repos/${repo}/issues/1/comments`, {
      body: { body: claimed("idd-bot", "c-1", nowSecond()), actor: "writer" },
    });
    await sim("/outbox/drain", { method: "POST" });
    const before = await runInDurableObject(stub, (o: RepoObject) =>
      o.store.markerComments(1).map((c) => c.body),
    );
    expect(before.some((b) => b.includes("claimed-by: idd-bot c-1"))).toBe(false);

    await runInDurableObject(stub, async (o: RepoObject) => {
      o.schedules.at("reconcile-full", Date.now());
      await o.schedules.rearm();
    });
    await settleAll(stub);
    await stub.workQueue({ limit: 1 });
    await settleAll(stub);
    const blocked = (await stub.claim(1, { agentId: "agent-a" })) as {
      status: number;
      body: Record<string, unknown>;
    };
    expect(blocked.status).toBe(409);
    expect(blocked.body).toMatchObject({ holder: { agentId: "idd-bot", source: "idd" } });
    const audit = (await stub.auditLog(100)).find(
      (a) => a.kind === "reconcile" && a.detail.kind === "full",
    );
    // The graph fetch now reads each issue's newest comments (reply state, issue 22), so the
    // lost marker arrives with it and the re-read that follows has nothing left to correct.
    expect(audit?.detail.markers).toMatchObject({ issues: [1, 2, 3], requests: 3, corrected: [] });
    // The graph fetch's own request count is reported apart from the comment reads.
    expect(audit?.detail.requests).toBeLessThanOrEqual(3);

    expect((await stub.claim(4, { agentId: "agent-d" })).status).toBe(201);
  });
});

describe("kicks from a cross-repository blocker", () => {
  it("a cross-repository blocker closing again (its reopen unseen) kicks again", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("880006"));
    const external = (closedAt: string): GraphEvent => ({
      type: "external",
      ref: "far/lib#1",
      state: "closed",
      closedAt,
      at: closedAt,
    });
    const first = await runInDurableObject(stub, (o: RepoObject) => {
      o.store.setIdentity({
        repoId: 880006,
        fullName: "nobody/far",
        installationId: 1,
        status: "active",
      });
      o.store.applyEvents([external("2026-11-29T10:00:00Z")]);
      return o.store.pendingCloses(0);
    });
    const second = await runInDurableObject(stub, (o: RepoObject) => ({
      applied: o.store.applyEvents([external("2026-11-29T11:00:00Z")]),
      pending: o.store.pendingCloses(first.maxSeq),
    }));
    expect(second.applied.graphChanged).toBe(true);
    expect(second.pending.causes).toEqual(["far/lib#1"]);
  });
});
