// The producer against the simulator: writes that keep failing are parked (not retried
// forever, not holding up the rest of the outbox) and planned again after a full reconcile;
// the graph API's kicks are the ones the producer will act on next; kicks wait for the first
// full reconcile and come again on a second close; a suspension neither wedges the producer nor
// loses a kick.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { MAX_WRITE_ATTEMPTS } from "../../shared/producer/write-failure.ts";
import {
  backoffsOver,
  deliverAll,
  failLabelWrites,
  faultsLeft,
  install,
  installationStub,
  issueRecord,
  labelsOf,
  repoStub,
  seed,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";

type Stub = Awaited<ReturnType<typeof install>>["stub"];

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});
beforeEach(async () => {
  await sim("/faults", { method: "DELETE" });
});

/** #2, #3 and #4 all wait on #1. */
const fanOut = (repo: string) => ({
  repo,
  issues: [
    seedIssue(1),
    seedIssue(2, { blockedBy: [1] }),
    seedIssue(3, { blockedBy: [1] }),
    seedIssue(4, { blockedBy: [1] }),
  ],
});

async function fullReconcile(stub: Stub) {
  await runInDurableObject(stub, async (o: RepoObject) => {
    o.schedules.at("reconcile-full", Date.now());
    await o.schedules.rearm();
  });
  for (let i = 0; i < 3; i++) {
    await settle(stub);
    await deliverAll();
  }
}

describe("parked writes", () => {
  it("a write refused with a permanent 403 is parked and the other writes still land", async () => {
    const { stub, repo } = await install(fanOut("prod-403/app"));
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          {
            method: "POST",
            path: `/repos/${repo}/issues/2/labels`,
            status: 403,
            body: { message: "Repository was archived so is read-only." },
            times: 1000,
          },
        ],
      },
    });
    await sim(`/repos/${repo}/issues/1/close`, { body: {} });
    await deliverAll();
    for (let i = 0; i < 3; i++) {
      await settle(stub);
      await deliverAll();
    }
    expect(await labelsOf(repo, 3)).toContain("agent:ready");
    expect(await labelsOf(repo, 4)).toContain("agent:ready");
    expect(await labelsOf(repo, 2)).not.toContain("agent:ready");
    const graph = await stub.graph();
    expect(graph.parkedWrites).toEqual([
      {
        number: 2,
        label: "agent:ready",
        action: "add",
        reason: expect.stringContaining("kick"),
        attempts: 1,
        lastError: expect.stringContaining("HTTP 403"),
        parkedAt: expect.any(String),
      },
    ]);
    // The run is over: the outbox is free and the watermark moved past the close.
    expect((await stub.status()).pendingWrites).toBe(0);
    expect(graph.watermarks.producer.seq).toBeGreaterThan(0);
    const audit = await stub.auditLog(100);
    expect(audit.filter((a) => a.kind === "producer-write-parked")).toHaveLength(1);

    // GitHub accepts it again; the next plan after a full reconcile writes it.
    await sim("/faults", { method: "DELETE" });
    await fullReconcile(stub);
    expect(await labelsOf(repo, 2)).toContain("agent:ready");
    expect((await stub.graph()).parkedWrites).toEqual([]);
  });

  it("a write failing with 5xx is parked after the bound and planned again after a full reconcile", async () => {
    const { stub, repo } = await install(fanOut("prod-5xx/app"));
    await failLabelWrites(repo, 2, 502, 10_000);
    await sim(`/repos/${repo}/issues/1/close`, { body: {} });
    await deliverAll();
    await settle(stub);
    // The schedule retries it with backoff until the bound parks it (each backoff run out).
    let graph = await stub.graph();
    for (let i = 0; i < 50 && graph.parkedWrites.length === 0; i++) {
      await backoffsOver(stub);
      await settle(stub);
      graph = await stub.graph();
    }
    expect(graph.parkedWrites).toEqual([
      expect.objectContaining({
        number: 2,
        action: "add",
        attempts: MAX_WRITE_ATTEMPTS,
        lastError: expect.stringContaining("HTTP 502"),
      }),
    ]);
    await settle(stub);
    expect(await labelsOf(repo, 3)).toContain("agent:ready");
    expect(await labelsOf(repo, 4)).toContain("agent:ready");
    const errors = (await stub.auditLog(200)).filter(
      (a) =>
        a.kind === "error" && (a.detail as { error: string }).error.includes("issues/2/labels"),
    );
    expect(errors).toHaveLength(MAX_WRITE_ATTEMPTS - 1);
    // Backoff: each retry waits longer than the one before.
    const delays = errors.reverse().map((a) => (a.detail as { retryInMs: number }).retryInMs);
    expect(delays).toEqual([...delays].sort((a, b) => a - b));
    expect(new Set(delays).size).toBe(delays.length);

    // An incremental reconcile does not bring it back; the next full one does.
    await sim("/faults", { method: "DELETE" });
    await runInDurableObject(stub, async (o: RepoObject) => {
      o.schedules.at("producer", Date.now());
      await o.schedules.rearm();
    });
    await settle(stub);
    expect((await stub.graph()).parkedWrites).toHaveLength(1);
    await fullReconcile(stub);
    expect(await labelsOf(repo, 2)).toContain("agent:ready");
    expect((await stub.graph()).parkedWrites).toEqual([]);
    const plans = (await stub.auditLog(200)).filter((a) => a.kind === "producer-plan");
    expect(
      (plans[0]!.detail as { retriedParked?: Array<{ number: number }> }).retriedParked,
    ).toEqual([expect.objectContaining({ number: 2, action: "add" })]);
  });
});

describe("parked writes do not pile up", () => {
  it("mode all with a permanent 403: the write is parked once, not re-planned by every run until the next full reconcile", async () => {
    const repo = "prod-403-all/app";
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          {
            method: "POST",
            path: `/repos/${repo}/issues/2/labels`,
            status: 403,
            body: { message: "Resource not accessible by integration" },
            times: 10_000,
          },
        ],
      },
    });
    const { stub } = await install(
      { repo, issues: [seedIssue(1), seedIssue(2)] },
      { ".github/switchyard.yml": "queue:\n  mode: all\n" },
    );
    expect(await labelsOf(repo, 1)).toContain("agent:ready");
    for (let i = 0; i < 4; i++) {
      await runInDurableObject(stub, async (o: RepoObject) => {
        o.schedules.at("producer", Date.now());
        await o.schedules.rearm();
      });
      await settle(stub);
    }
    const graph = await stub.graph();
    expect(graph.parkedWrites).toEqual([
      expect.objectContaining({ number: 2, label: "agent:ready", action: "add" }),
    ]);
    expect(graph.parkedWritesCount).toBe(1);
    const audit = await stub.auditLog(500);
    expect(audit.filter((a) => a.kind === "producer-write-parked")).toHaveLength(1);

    // The next full reconcile's plan tries it again (and parks it again: still refused).
    await fullReconcile(stub);
    const after = (await stub.auditLog(500)).filter((a) => a.kind === "producer-write-parked");
    expect(after).toHaveLength(2);
    expect((await stub.graph()).parkedWrites).toHaveLength(1);
  });

  it("parking replaces an earlier parked copy of the same write; the graph API lists the 100 most recent and counts them all", async () => {
    const { stub } = await install({ repo: "prod-parked-bound/app", issues: [seedIssue(1)] });
    await runInDurableObject(stub, (o: RepoObject) => {
      const outbox = o.store.outbox;
      const op = (number: number) => ({
        number,
        label: "agent:ready",
        reason: "test",
        action: "add" as const,
      });
      o.store.transaction(() => {
        for (let fence = 1; fence <= 3; fence++) {
          outbox.enqueue(9_000 + fence, [op(7)]);
          outbox.park(outbox.first()!.seq, 1_000 + fence);
        }
        for (let n = 100; n < 250; n++) {
          outbox.enqueue(9_100, [op(n)]);
          outbox.park(outbox.first()!.seq, 2_000 + n);
        }
      });
    });
    const graph = await stub.graph();
    expect(graph.parkedWritesCount).toBe(151);
    expect(graph.parkedWrites).toHaveLength(100);
    expect(graph.parkedWrites.map((p) => p.number)).toEqual(
      Array.from({ length: 100 }, (_, i) => 150 + i),
    );
    const sevens = await runInDurableObject(stub, (o: RepoObject) =>
      o.store.outbox.parked().filter((p) => p.op.number === 7),
    );
    expect(sevens).toEqual([expect.objectContaining({ parkedMs: 1_003 })]);
  });
});

describe("graph API kicks", () => {
  it("are the kicks of the closes learned since the producer watermark, not of a window", async () => {
    const { stub, repo } = await install({
      repo: "prod-kicks/app",
      issues: [seedIssue(1), seedIssue(2, { blockedBy: [1] })],
    });
    expect((await stub.graph()).kicks).toEqual([]);
    // Hold the producer's write so its run cannot finish: the kick is still to be done.
    await failLabelWrites(repo, 2, 502, 10_000);
    await sim(`/repos/${repo}/issues/1/close`, { body: {} });
    await deliverAll();
    await settle(stub);
    const pending = await stub.graph();
    expect(pending.kicks).toEqual([expect.objectContaining({ target: 2, causes: [1] })]);
    // The write lands and the watermark moves past the close: nothing left to kick, although
    // the close is well inside the kick window.
    await sim("/faults", { method: "DELETE" });
    await runInDurableObject(stub, async (o: RepoObject) => {
      o.schedules.at("outbox", Date.now());
      await o.schedules.rearm();
    });
    await settle(stub);
    expect(await labelsOf(repo, 2)).toContain("agent:ready");
    const after = await stub.graph();
    expect(after.watermarks.producer.seq).toBeGreaterThan(0);
    expect(after.kicks).toEqual([]);
  });
});

describe("kicks", () => {
  it("are not spent before the first full reconcile has read the graph", async () => {
    // GitHub knows #2 blocked by #1; switchyard is installed but never saw the installation
    // event, so it first hears of the repository from #1's close: a partial graph.
    const seeded = await seed({
      repo: "reg-first/app",
      issues: [seedIssue(1), seedIssue(2, { blockedBy: [1] })],
    });
    await sim("/outbox/drain", { method: "POST" });
    await sim("/faults", {
      method: "PUT",
      body: { requests: [{ method: "POST", path: "/graphql", status: 502, times: 1000 }] },
    });
    await sim("/repos/reg-first/app/issues/1/close", { body: {} });
    await deliverAll();
    const stub = repoStub(seeded.repoId);
    // The first reconcile that the close scheduled runs (and fails) now, not on the clock.
    await runDurableObjectAlarm(stub);
    const before = await runInDurableObject(stub, (o: RepoObject) => ({
      planned: o.producer.plan(Date.now()),
      pending: o.producer.pending().length,
      watermark: o.store.watermarks().producer.seq,
      known: o.store.snapshot().issues.map((i) => i.number),
    }));
    expect(before).toEqual({ planned: 0, pending: 0, watermark: 0, known: [1] });
    await sim("/faults", { method: "DELETE" });
    await runInDurableObject(stub, async (o: RepoObject) => {
      o.schedules.at("reconcile-full", Date.now());
      await o.schedules.rearm();
    });
    for (let i = 0; i < 5; i++) {
      await settle(stub);
      await deliverAll();
    }
    expect(await labelsOf("reg-first/app", 2)).toContain("agent:ready");
  });

  it("a second close of the same issue kicks again even when the reopen is lost", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("880003"));
    await runInDurableObject(stub, (o: RepoObject) => {
      o.store.setIdentity({
        repoId: 880003,
        fullName: "nobody/reclose",
        installationId: 1,
        status: "active",
      });
      o.store.apply([
        {
          type: "issue",
          issue: issueRecord(1, {
            state: "closed",
            stateReason: "completed",
            closedAt: "2026-11-29T10:00:00Z",
            updatedAt: "2026-11-29T10:00:00Z",
          }),
        },
      ]);
    });
    const first = await runInDurableObject(stub, (o: RepoObject) => o.store.pendingCloses(0));
    expect(first.causes).toEqual([1]);
    const second = await runInDurableObject(stub, (o: RepoObject) => {
      // The reopen at 10:30 never arrives; the second close at 11:00 does.
      o.store.apply([
        {
          type: "issue",
          issue: issueRecord(1, {
            state: "closed",
            stateReason: "completed",
            closedAt: "2026-11-29T11:00:00Z",
            updatedAt: "2026-11-29T11:00:00Z",
          }),
        },
      ]);
      return o.store.pendingCloses(first.maxSeq);
    });
    expect(second.causes).toEqual([1]);
  });
});

describe("suspension", () => {
  it("suspending with writes queued, then unsuspending, neither wedges the producer nor loses the kick", async () => {
    const { stub, repo, installationId } = await install({
      repo: "reg-suspend/app",
      issues: [seedIssue(1), seedIssue(2, { blockedBy: [1] })],
    });
    // The first label write stalls (the suspension lands while it is in flight), then it and
    // every retry fail: the run ends with a failure after its queue was dropped.
    const label = `/repos/${repo}/issues/2/labels`;
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          { method: "POST", path: label, status: 502, delayMs: 400, times: 1 },
          { method: "POST", path: label, status: 502, times: 1000 },
        ],
      },
    });
    await sim(`/repos/${repo}/issues/1/close`, { body: {} });
    await deliverAll();
    void runDurableObjectAlarm(stub);
    // The stalled write is in flight once the first rule is used up.
    expect(await faultsLeft(1000)).toBe(true);
    const identity = (await stub.identity())!;
    await stub.setLifecycle({ ...identity, status: "suspended" });
    expect((await stub.status()).pendingWrites).toBe(0);
    // The stalled write fails after the suspension; wait for its run to end.
    await stub.idle();
    expect((await stub.status()).running).toBe(false);
    expect((await stub.graph()).watermarks.producer.seq).toBe(0);
    await sim("/faults", { method: "DELETE" });
    await stub.setLifecycle({ ...identity, status: "active" });
    for (let i = 0; i < 4; i++) {
      await settle(stub);
      await deliverAll();
    }
    expect(await labelsOf(repo, 2)).toContain("agent:ready");
    expect(installationId).toBeGreaterThan(0);
  });
});

describe("label writes and the hour's budget", () => {
  it("a close's kick is written while the reconciles' part of the hour is spent; the first reconcile's plan has drained", async () => {
    const { stub, repo, installationId } = await install(fanOut("prod-budget/app"));
    // The first reconcile's plan has drained: nothing is marked bulk any more.
    const bulk = () =>
      runInDurableObject(stub, (o: RepoObject) => o.store.meta.get("bulkLabelWrites") ?? false);
    expect(await bulk()).toBe(false);
    // The installation's reconciles have spent their part of the hour (GitHub says 4 left of 40:
    // the webhooks' reserve, and a reconcile holding a permit expects more).
    const inst = installationStub(installationId);
    const now = Date.now();
    const left = (remaining: number) => ({
      requests: 4,
      durationMs: 100,
      readings: [{ resource: "core", limit: 40, remaining, resetMs: now + 30 * 60_000 }],
      completed: true,
    });
    const spent = left(4);
    await inst.askPermit(990_001, now);
    await inst.releasePermit(990_001, spent, now);
    await inst.askPermit(990_002, now);
    expect((await inst.reserveLabelWrites(1, now)).granted).toBe(0);
    try {
      // A close makes #2, #3 and #4 ready: a webhook's own need, written at once.
      await sim(`/repos/${repo}/issues/1/close`, { body: {} });
      await deliverAll();
      await settle(stub);
      for (const n of [2, 3, 4]) expect(await labelsOf(repo, n)).toContain("agent:ready");
    } finally {
      // The reconcile ends; GitHub says 20 are left: room beyond the reserve again.
      await inst.releasePermit(990_002, left(20), now);
    }
  });
});
