// Regression tests for defects found in review: each failed before its fix.

import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo-object.ts";
import type { GraphEvent, IssueRecord } from "../../shared/ingest/events.ts";
import {
  deliverAll,
  install,
  installationStub,
  labelsOf,
  type repoStub,
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
    // The runtime fires the retries by itself (20, 40, 80, 160 ms with the test base of 20).
    await new Promise((r) => setTimeout(r, 700));
    const retries = (await stub.auditLog(50))
      .filter((a) => a.kind === "error")
      .reverse()
      .map((a) => a.detail as { attempts: number; retryInMs: number });
    expect(retries.length).toBeGreaterThanOrEqual(4);
    retries.forEach((r, i) => {
      expect(r.attempts).toBe(i + 1);
      expect(r.retryInMs).toBe(20 * 2 ** i);
    });
    const row = (await stub.status()).schedules.find((s) => s.name === "reconcile-full")!;
    expect(row.attempts).toBe(retries.length);
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
    const { stub, repo } = await install({
      repo: "reg-first/app",
      issues: [seedIssue(1), seedIssue(2, { blockedBy: [1] })],
    });
    // Forget the full read, and make the next ones fail for a while.
    await runInDurableObject(stub, (o: RepoObject) =>
      o.store.updateWatermarks({ lastFullReconcileAt: null }),
    );
    await sim("/faults", {
      method: "PUT",
      body: { requests: [{ method: "POST", path: "/graphql", status: 502, times: 4 }] },
    });
    await sim(`/repos/${repo}/issues/1/close`, { body: {} });
    await deliverAll();
    const seqBefore = (await stub.graph()).watermarks.producer.seq;
    await runInDurableObject(stub, (o: RepoObject) => o.producer.plan(Date.now()));
    expect((await stub.graph()).watermarks.producer.seq).toBe(seqBefore);
    await runInDurableObject(stub, (o: RepoObject) => o.schedules.at("reconcile-full", Date.now()));
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await settle(stub);
      await deliverAll();
    }
    expect(await labelsOf(repo, 2)).toContain("agent:ready");
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
    const { stub, repo, repoId, installationId } = await install({
      repo: "reg-sync/app",
      issues: [seedIssue(1)],
    });
    // Make the object forget how it learned of itself, then let a webhook introduce it.
    await runInDurableObject(stub, (o: RepoObject) => o.store.wipe());
    await runInDurableObject(stub, (o: RepoObject) => o.store.sql`DELETE FROM meta`);
    await sim(`/repos/${repo}/issues/1/labels`, { body: { labels: ["bug"] } });
    await deliverAll();
    await settle(stub);
    const inst = await installationStub(installationId).status();
    expect(inst.repos.map((r) => r.id)).toContain(repoId);
  });
});
