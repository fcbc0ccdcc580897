// Simulator state change → signed webhook → RepoObject → producer → label on the simulator.
import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { deliverAll, install, labelsOf, seedClosed, seedIssue, settle, sim } from "./helpers.ts";

const HOUR = 3_600_000;

/** Applies a change on the simulator as a user would, then lets switchyard react fully. */
async function change(
  stub: Awaited<ReturnType<typeof install>>["stub"],
  path: string,
  body?: unknown,
) {
  await sim(path, { method: "POST", body: body ?? {} });
  for (let i = 0; i < 3; i++) {
    await deliverAll();
    await settle(stub);
  }
}

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

describe("end to end through the simulator", () => {
  it("install: the first reconcile learns the graph and a recent close kicks on the first producer run", async () => {
    const { stub, repo } = await install({
      repo: "e2e-install/app",
      issues: [
        seedClosed(1, HOUR / 2),
        seedIssue(2, { blockedBy: [1] }),
        seedClosed(3, 30 * HOUR),
        seedIssue(4, { blockedBy: [3] }),
        seedIssue(5, { blockedBy: [6] }),
        seedIssue(6),
      ],
    });
    const graph = await stub.graph();
    expect(graph.stats).toEqual({ issues: 6, open: 4, edges: 3 });
    expect(graph.blocked).toEqual([{ number: 5, blockers: [6] }]);
    expect(graph.watermarks.lastFullReconcileAt).not.toBeNull();
    // #1 closed half an hour ago (inside the kick window): #2 is queued; #3 closed long before.
    expect(await labelsOf(repo, 2)).toContain("agent:ready");
    expect(await labelsOf(repo, 4)).not.toContain("agent:ready");
    const audit = await stub.auditLog(50);
    expect(audit.some((a) => a.kind === "producer-write")).toBe(true);
  });

  it("a child close that completes its parent queues the parent", async () => {
    const { stub, repo } = await install({
      repo: "e2e-parent/app",
      issues: [
        seedIssue(10),
        seedClosed(11, 10 * HOUR, { parent: 10 }),
        seedIssue(12, { parent: 10 }),
      ],
    });
    expect(await labelsOf(repo, 10)).not.toContain("agent:ready");
    await change(stub, `/repos/${repo}/issues/12/close`, { stateReason: "completed" });
    expect(await labelsOf(repo, 10)).toContain("agent:ready");
    expect((await stub.graph()).rollupCandidates).toEqual([{ number: 10, children: [11, 12] }]);
  });

  it("an unblocking close queues the unblocked issue; another blocker still open holds it back", async () => {
    const { stub, repo } = await install({
      repo: "e2e-unblock/app",
      issues: [
        seedIssue(1),
        seedIssue(2),
        seedIssue(3, { blockedBy: [1] }),
        seedIssue(4, { blockedBy: [1, 2] }),
      ],
    });
    await change(stub, `/repos/${repo}/issues/1/close`);
    expect(await labelsOf(repo, 3)).toContain("agent:ready");
    expect(await labelsOf(repo, 4)).not.toContain("agent:ready");
  });

  it("held and epic-managed issues are never queued; a held issue loses a stale agent:ready", async () => {
    const { stub, repo } = await install({
      repo: "e2e-reserved/app",
      issues: [
        seedIssue(1),
        seedIssue(2, { blockedBy: [1], labels: ["agent:hold"] }),
        seedIssue(3, { blockedBy: [1], labels: ["epic:payments"] }),
        seedIssue(4, { labels: ["agent:ready"] }),
      ],
    });
    await change(stub, `/repos/${repo}/issues/1/close`);
    expect(await labelsOf(repo, 2)).toEqual(["agent:hold"]);
    expect(await labelsOf(repo, 3)).toEqual(["epic:payments"]);
    await change(stub, `/repos/${repo}/issues/4/labels`, { labels: ["agent:hold"] });
    expect(await labelsOf(repo, 4)).toEqual(["agent:hold"]);
  });

  it("a cross-repository blocker closing is found by the next reconcile and kicks", async () => {
    // One installation covers both repositories (an organization-wide install).
    await install({ repo: "e2e-cross/lib", issues: [seedIssue(7)] });
    const { stub, repo } = await install({
      repo: "e2e-cross/app",
      issues: [seedIssue(1, { blockedBy: ["e2e-cross/lib#7"] })],
    });
    expect((await stub.graph()).blocked).toEqual([{ number: 1, blockers: ["e2e-cross/lib#7"] }]);
    await sim("/repos/e2e-cross/lib/issues/7/close", { method: "POST", body: {} });
    await deliverAll();
    expect(await stub.armReconcile()).toBe(true);
    await settle(stub);
    await deliverAll();
    await settle(stub);
    expect((await stub.graph()).blocked).toEqual([]);
    expect(await labelsOf(repo, 1)).toContain("agent:ready");
  });

  it("a blocker in a repository the App cannot read stays blocking (fail closed)", async () => {
    await sim("/seed", {
      body: { snapshot: { repo: "e2e-hidden/lib", issues: [seedIssue(3)] }, install: false },
    });
    const { stub, repo } = await install({
      repo: "e2e-hidden-app/app",
      issues: [seedIssue(1, { blockedBy: ["e2e-hidden/lib#3"] })],
    });
    await sim("/repos/e2e-hidden/lib/issues/3/close", { method: "POST", body: {} });
    await stub.armReconcile();
    await settle(stub);
    expect((await stub.graph()).blocked).toEqual([{ number: 1, blockers: ["e2e-hidden/lib#3"] }]);
    expect(await labelsOf(repo, 1)).not.toContain("agent:ready");
    const audit = await stub.auditLog(5);
    expect(JSON.stringify(audit)).toContain("e2e-hidden/lib#3");
  });

  it("the graph and watermarks survive eviction; an alarm delivered twice does its work once", async () => {
    const { stub, repo } = await install({
      repo: "e2e-evict/app",
      issues: [seedIssue(1), seedIssue(2, { blockedBy: [1] })],
    });
    const before = await stub.graph();
    await evictDurableObject(stub);
    expect(await stub.graph(Date.parse(before.now))).toEqual(before);

    // Real work due (a close to materialize), and the alarm delivered twice at once.
    await sim(`/repos/${repo}/issues/1/close`, { body: {} });
    await deliverAll();
    await Promise.all([runDurableObjectAlarm(stub), runDurableObjectAlarm(stub)]);
    await settle(stub);
    await deliverAll();
    await settle(stub);
    expect(await labelsOf(repo, 2)).toContain("agent:ready");
    const writes = (await stub.auditLog(50)).filter((a) => a.kind === "producer-write");
    expect(writes).toHaveLength(1);
    await evictDurableObject(stub);
    const after = await stub.graph();
    expect(after.watermarks.producer.seq).toBeGreaterThan(before.watermarks.producer.seq);
    expect(after.blocked).toEqual([]);
  });
});

describe("GET /v1/repos/{owner}/{repo}/graph", () => {
  it("serves the scan, rotates ready per machine, 404s an unknown repository", async () => {
    const { exports } = await import("cloudflare:workers");
    const { fnv1a32 } = await import("../../shared/graph/hash.ts");
    const { stub } = await install({
      repo: "e2e-api/app",
      issues: [seedIssue(1), seedIssue(2), seedIssue(3), seedIssue(4, { blockedBy: [1] })],
    });
    // The graph needs a token (spec 6.4): a user with write on the repository, and on a
    // repository of the simulator the App is not installed on.
    await sim("/repos", { body: { owner: "nobody", name: "none" } });
    const token = "ghp_e2eGraphReader";
    await sim("/users", {
      body: {
        login: "e2e-reader",
        token,
        repos: { "e2e-api/app": "write", "nobody/none": "write" },
      },
    });
    const get = (path: string) =>
      exports.default.fetch(`https://switchyard.test${path}`, {
        headers: { authorization: `Bearer ${token}` },
      });
    const plain = await get("/v1/repos/E2E-API/app/graph");
    expect(plain.status).toBe(200);
    const body = (await plain.json()) as { ready: number[]; blocked: unknown[] };
    expect(body.ready).toEqual([1, 2, 3]);
    const rotated = await get("/v1/repos/e2e-api/app/graph?machine=m7");
    const offset = fnv1a32("m7") % 3;
    expect(((await rotated.json()) as { ready: number[] }).ready).toEqual([
      ...[1, 2, 3].slice(offset),
      ...[1, 2, 3].slice(0, offset),
    ]);
    const missing = await get("/v1/repos/nobody/none/graph");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: "not-found",
      message: "repository nobody/none is not installed",
    });
    const bad = await get("/v1/repos/e2e-api/app/graph?machine=");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: "bad-request" });
    const anonymous = await exports.default.fetch(
      "https://switchyard.test/v1/repos/e2e-api/app/graph",
    );
    expect(anonymous.status).toBe(401);

    // POST .../scan: a reconcile now, then 429 with Retry-After within the minute.
    const scan = () =>
      exports.default.fetch("https://switchyard.test/v1/repos/e2e-api/app/scan", {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
      });
    const first = await scan();
    expect(first.status).toBe(202);
    expect(await first.json()).toMatchObject({ scheduled: "reconcile" });
    const second = await scan();
    expect(second.status).toBe(429);
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
    await settle(stub);
    const audit = await stub.auditLog(10);
    expect(audit.some((a) => a.kind === "scan-requested")).toBe(true);
    expect(audit.some((a) => a.kind === "reconcile" && a.detail.kind === "incremental")).toBe(true);
  });
});
