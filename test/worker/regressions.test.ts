// Regression tests for defects found in review: each failed before its fix.

import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { directory } from "../../functions/objects/directory-object.ts";
import type { RepoObject } from "../../functions/objects/repo-object.ts";
import type { GraphEvent, IssueRecord } from "../../shared/ingest/events.ts";
import {
  deliverAll,
  install,
  installationStub,
  labelsOf,
  postLabelDeleted,
  repoStub,
  seed,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";

const record = (number: number, patch: Partial<IssueRecord> = {}): IssueRecord => ({
  number,
  id: number,
  title: `Issue ${number}`,
  state: "open",
  stateReason: null,
  createdAt: "2026-11-01T00:00:00Z",
  updatedAt: "2026-11-01T00:00:00Z",
  closedAt: null,
  labels: [],
  body: null,
  ...patch,
});

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});
beforeEach(async () => {
  await sim("/faults", { method: "DELETE" });
});

describe("schedules", () => {
  it("a failing schedule backs off with doubling delays and counts its attempts", async () => {
    // A repository GitHub does not know: every reconcile fails (404).
    const stub = env.REPO.get(env.REPO.idFromName("880001"));
    await runInDurableObject(stub, async (o: RepoObject) => {
      o.store.setIdentity({
        repoId: 880001,
        fullName: "nobody/nothing",
        installationId: 1,
        status: "active",
      });
      o.schedules.at("reconcile-full", Date.now());
      await o.schedules.rearm();
    });
    // Each retry made due at once and run (no waiting on the clock for the 20, 40, 80 and
    // 160 ms of the test's backoff base): every failure counts and doubles the next delay.
    for (let i = 0; i < 4; i++) {
      await runInDurableObject(stub, async (o: RepoObject) => {
        o.schedules.at("reconcile-full", Date.now());
        await o.schedules.rearm();
      });
      await runDurableObjectAlarm(stub);
    }
    const retries = (await stub.auditLog(50))
      .filter((a) => a.kind === "error")
      .reverse()
      .map((a) => a.detail as { attempts: number; retryInMs: number });
    expect(retries.length).toBeGreaterThanOrEqual(4);
    retries.forEach((r, i) => {
      expect(r.attempts).toBe(i + 1);
      expect(r.retryInMs).toBe(20 * 2 ** i);
    });
    // Stop the retries so they do not run on through the rest of this file.
    await stub.setLifecycle({
      repoId: 880001,
      fullName: "nobody/nothing",
      installationId: 1,
      status: "suspended",
    });
    const total = (await stub.auditLog(100)).filter((a) => a.kind === "error").length;
    expect(total).toBeGreaterThanOrEqual(retries.length);
  });

  it("a handler rescheduling itself beyond its lease keeps its row", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("880008"));
    const later = Date.now() + 2 * 3_600_000;
    const rows = await runInDurableObject(stub, (o: RepoObject) => {
      o.schedules.at("outbox", Date.now());
      const [due] = o.schedules.takeDue(Date.now());
      o.schedules.at("outbox", later); // the budget is spent for an hour or two
      o.schedules.complete(due!);
      return o.schedules.list();
    });
    expect(rows).toEqual([{ name: "outbox", dueMs: later, attempts: 0 }]);
  });

  it("a run cut short leaves its schedule leased, not lost", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("880002"));
    await runInDurableObject(stub, (o: RepoObject) => {
      o.store.setIdentity({
        repoId: 880002,
        fullName: "nobody/lease",
        installationId: 1,
        status: "active",
      });
      o.schedules.at("prune", Date.now());
      // Taken (as an alarm run does) but never completed: the isolate died mid-run.
      o.schedules.takeDue(Date.now());
    });
    const rows = (await stub.status()).schedules;
    expect(rows.map((r) => r.name)).toEqual(["prune"]);
    expect(rows[0]!.dueMs).toBeGreaterThan(Date.now());
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
          issue: record(1, {
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
          issue: record(1, {
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

describe("late deliveries", () => {
  const apply = (stub: ReturnType<typeof repoStub>, events: GraphEvent[]) =>
    runInDurableObject(stub, (o: RepoObject) => o.store.apply(events));

  it("a deleted marker comment is not brought back by a late edit", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("880004"));
    const comment = (at: string): GraphEvent => ({
      type: "comment",
      id: 77,
      number: 1,
      author: { login: "bot", type: "Bot" },
      body: "<!-- claimed-by: agent-1 claim-1 2026-11-29T10:00:00Z branch: issue/1-x supersedes: none -->",
      createdAt: "2026-11-29T10:00:00Z",
      updatedAt: at,
    });
    await apply(stub, [
      comment("2026-11-29T10:00:00Z"),
      { type: "comment-removed", id: 77, at: "2026-11-29T10:10:00Z" },
      comment("2026-11-29T10:05:00Z"),
    ]);
    expect(await runInDurableObject(stub, (o: RepoObject) => o.store.markerComments(1))).toEqual(
      [],
    );
  });

  it("a removed issue is not re-linked by a late dependency event", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("880005"));
    await apply(stub, [
      { type: "issue", issue: record(1) },
      { type: "issue", issue: record(2) },
      { type: "issue-removed", number: 1, at: "2026-11-29T10:00:00Z" },
      { type: "blocked-by", issue: 2, blocker: 1, present: true, at: "2026-11-29T09:00:00Z" },
    ]);
    const snapshot = await runInDurableObject(stub, (o: RepoObject) => o.store.snapshot());
    expect(snapshot.issues.map((i) => [i.number, i.blockedBy])).toEqual([[2, []]]);
  });
});

describe("lifecycle", () => {
  it("a reconcile in flight when the repository is removed does not bring its data back", async () => {
    const { stub, installationId } = await install({
      repo: "reg-removed/app",
      issues: [seedIssue(1), seedIssue(2)],
    });
    await sim("/faults", {
      method: "PUT",
      body: { requests: [{ method: "POST", path: "/graphql", delayMs: 700, times: 1 }] },
    });
    await runInDurableObject(stub, (o: RepoObject) => o.schedules.at("reconcile-full", Date.now()));
    const inFlight = runDurableObjectAlarm(stub);
    await new Promise((r) => setTimeout(r, 150));
    const identity = (await stub.identity())!;
    await stub.setLifecycle({ ...identity, status: "removed" });
    await inFlight;
    await new Promise((r) => setTimeout(r, 800));
    expect((await stub.graph()).stats.issues).toBe(0);
    expect((await stub.status()).status).toBe("removed");
    expect(installationId).toBeGreaterThan(0);
  });

  it("a deleted installation stays deleted when an older event arrives late", async () => {
    const inst = installationStub(990001);
    const repos = [{ id: 990101, fullName: "gone/app" }];
    await inst.lifecycle(990001, "c", { kind: "created", account: "gone", repos }, Date.now());
    await inst.lifecycle(990001, "d", { kind: "deleted" }, Date.now());
    // Applied once GitHub confirms it (the simulator has no installation 990001: 404).
    await runDurableObjectAlarm(inst);
    await inst.lifecycle(990001, "u", { kind: "unsuspended" }, Date.now());
    await inst.lifecycle(
      990001,
      "a",
      { kind: "repos-added", repos: [{ id: 990102, fullName: "gone/lib" }] },
      Date.now(),
    );
    const status = await inst.status();
    expect(status.status).toBe("deleted");
    expect(status.repos.every((r) => r.status === "removed")).toBe(true);
    expect(status.repos.map((r) => r.id)).toEqual([990101]);
  });

  it("a repository first seen through a webhook is registered with its installation and the directory", async () => {
    const seeded = await seed({ repo: "reg-sync/app", issues: [seedIssue(1)] });
    // The installation event is lost: switchyard hears of the repository from an issue event.
    await sim("/outbox/drain", { method: "POST" });
    expect(await directory(env).get(seeded.repoId)).toBeNull();
    await sim("/repos/reg-sync/app/issues/1/labels", { body: { labels: ["bug"] } });
    await deliverAll();
    await settle(repoStub(seeded.repoId));
    const inst = await installationStub(seeded.installationId).status();
    expect(inst.repos).toEqual([{ id: seeded.repoId, fullName: "reg-sync/app", status: "active" }]);
    expect(await directory(env).lookup("reg-sync/app")).toEqual({
      repoId: seeded.repoId,
      fullName: "reg-sync/app",
      installationId: seeded.installationId,
      status: "active",
    });
  });

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
    const inFlight = async () =>
      (await sim<{ requests: number }>("/faults", { body: {} })).requests === 1000;
    for (let i = 0; i < 200 && !(await inFlight()); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(await inFlight()).toBe(true);
    const identity = (await stub.identity())!;
    await stub.setLifecycle({ ...identity, status: "suspended" });
    expect((await stub.status()).pendingWrites).toBe(0);
    // The stalled write fails after the suspension; wait for its run to end.
    for (let i = 0; i < 300 && (await stub.status()).running; i++)
      await new Promise((r) => setTimeout(r, 10));
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

  it("a suspension from an installation the repository left is not about it", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("880007"));
    await stub.setLifecycle({
      repoId: 880007,
      fullName: "moved/app",
      installationId: 2,
      status: "active",
    });
    expect(
      await stub.setLifecycle({
        repoId: 880007,
        fullName: "moved/app",
        installationId: 1,
        status: "removed",
      }),
    ).toBe("ignored");
    expect((await stub.status()).status).toBe("active");
  });
});

describe("directory", () => {
  it("a name's active repository wins over a newer removed one of the same name", async () => {
    // acme/app was deleted and a new repository took its name; then the old one's removal
    // arrived late (or was replayed) and stamped the old row newest.
    const dir = directory(env);
    await dir.upsert(
      [{ repoId: 91_001, fullName: "reg-dir/app", installationId: 910, status: "active" }],
      1_000,
    );
    await dir.upsert(
      [{ repoId: 91_000, fullName: "Reg-Dir/App", installationId: 910, status: "removed" }],
      2_000,
    );
    expect(await dir.lookup("reg-dir/app")).toEqual({
      repoId: 91_001,
      fullName: "reg-dir/app",
      installationId: 910,
      status: "active",
    });
    // Among rows that are all removed (or all live), the newest still wins.
    await dir.upsert(
      [{ repoId: 91_002, fullName: "reg-dir/gone", installationId: 910, status: "removed" }],
      1_000,
    );
    await dir.upsert(
      [{ repoId: 91_003, fullName: "reg-dir/gone", installationId: 910, status: "removed" }],
      2_000,
    );
    expect((await dir.lookup("reg-dir/gone"))?.repoId).toBe(91_003);
  });
});

describe("label events are hints", () => {
  it("a replayed label.deleted of the hold label keeps a held issue out of the queue and unlabelled", async () => {
    const repo = "label-replay/app";
    const { stub, repoId, installationId } = await install(
      { repo, issues: [seedIssue(1, { labels: ["agent:hold"] }), seedIssue(2)] },
      { ".github/switchyard.yml": "queue:\n  mode: all\n" },
    );
    const queued = async () =>
      (
        (await stub.workQueue({ limit: 20 })).body as { items: Array<{ number: number }> }
      ).items.map((i) => i.number);
    expect(await queued()).toEqual([2]);
    expect(await labelsOf(repo, 1)).not.toContain("agent:ready");

    // A captured label.deleted, replayed: the label is still there on GitHub.
    const response = await postLabelDeleted(
      { repo, repoId, installationId },
      "agent:hold",
      "mallory",
    );
    expect(response.status).toBe(200);
    // Meanwhile (before any reconcile) the stored hold label stands.
    expect(await queued()).toEqual([2]);
    for (let i = 0; i < 3; i++) {
      await settle(stub);
      await deliverAll();
    }
    expect(await labelsOf(repo, 1)).toEqual(["agent:hold"]);
    expect(await queued()).toEqual([2]);
  });
});
