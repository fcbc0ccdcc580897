import {
  createExecutionContext,
  createScheduledController,
  runDurableObjectAlarm,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { directory } from "../../functions/objects/directory/directory-object.ts";
import type { InstallationObject } from "../../functions/objects/installation/installation-object.ts";
import type { InstallationStore } from "../../functions/objects/installation/installation-store.ts";
import worker from "../../functions/worker.ts";
import { PERMIT_BOUND } from "../../shared/budget/reconcile-permits.ts";
import { deliverAll, installationStub, repoStub, seed, seedIssue, settle, sim } from "./helpers.ts";

const NOW = Date.parse("2026-11-29T12:00:00Z");

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

/** Repositories that exist on the simulator under one installation of `account`. */
async function onGitHub(account: string, names: string[]) {
  const repos = [];
  let installationId = 0;
  for (const name of names) {
    const seeded = await seed({ repo: `${account}/${name}`, issues: [seedIssue(1)] });
    installationId = seeded.installationId;
    repos.push({ id: seeded.repoId, fullName: seeded.repo });
  }
  return { installationId, repos };
}

describe("InstallationObject lifecycle", () => {
  it("created registers the repositories and reconciles each fully", async () => {
    const { installationId, repos } = await onGitHub("life-a", ["one", "two"]);
    const inst = installationStub(installationId);
    const change = { kind: "created" as const, account: "life-a", repos };
    expect(await inst.lifecycle(installationId, "del-1", change, NOW)).toBe("applied");
    expect(await inst.lifecycle(installationId, "del-1", change, NOW)).toBe("duplicate");
    await runDurableObjectAlarm(inst);
    expect(await directory(env).lookup("LIFE-A/One")).toEqual({
      repoId: repos[0]!.id,
      fullName: "life-a/one",
      installationId,
      status: "active",
    });
    for (const repo of repos) {
      await settle(repoStub(repo.id));
      const graph = await repoStub(repo.id).graph();
      expect(graph.watermarks.lastFullReconcileAt).not.toBeNull();
      expect(graph.stats.issues).toBe(1);
    }
  });

  it("suspend keeps data but stops schedules; delete removes repositories and their data", async () => {
    const { installationId, repos } = await onGitHub("life-b", ["three"]);
    const [repo] = repos;
    const inst = installationStub(installationId);
    await inst.lifecycle(installationId, "c", { kind: "created", account: "life-b", repos }, NOW);
    await runDurableObjectAlarm(inst);
    const stub = repoStub(repo!.id);
    await settle(stub);
    // A suspension is applied once GitHub confirms it: suspended there first.
    await sim(`/installations/${installationId}/suspend`, { body: {} });
    await inst.lifecycle(installationId, "s", { kind: "suspended" }, NOW);
    await runDurableObjectAlarm(inst);
    expect((await stub.status()).schedules).toEqual([]);
    expect((await stub.graph()).stats.issues).toBe(1);
    const delivery = { id: "w2", event: "issues", receivedMs: NOW };
    expect(await stub.ingest(delivery, { ...repo!, installationId }, [])).toBe("ignored");
    expect(await stub.armReconcile()).toBe(false);

    // A deletion is applied once GitHub confirms it: uninstalled there first.
    await sim(`/installations/${installationId}`, { method: "DELETE", body: {} });
    await inst.lifecycle(installationId, "d", { kind: "deleted" }, NOW);
    await runDurableObjectAlarm(inst);
    expect((await stub.graph()).stats.issues).toBe(0);
    expect((await directory(env).lookup(repo!.fullName))?.status).toBe("removed");
    expect((await inst.status()).status).toBe("deleted");
  });

  it("a replayed suspend of an active installation changes nothing", async () => {
    const { installationId, repos } = await onGitHub("life-s", ["susp"]);
    const inst = installationStub(installationId);
    await inst.lifecycle(installationId, "cs", { kind: "created", account: "life-s", repos }, NOW);
    await runDurableObjectAlarm(inst);
    const stub = repoStub(repos[0]!.id);
    await settle(stub);
    await inst.lifecycle(installationId, "replayed-suspend", { kind: "suspended" }, NOW);
    await runDurableObjectAlarm(inst);
    expect((await inst.status()).status).toBe("active");
    expect((await stub.identity())?.status).toBe("active");
    expect((await directory(env).get(repos[0]!.id))?.status).toBe("active");
  });

  it("a lost installation.deleted: the repository's check finds it gone and deletes", async () => {
    const { installationId, repos } = await onGitHub("life-g", ["gone"]);
    const inst = installationStub(installationId);
    await inst.lifecycle(installationId, "cg", { kind: "created", account: "life-g", repos }, NOW);
    await runDurableObjectAlarm(inst);
    const stub = repoStub(repos[0]!.id);
    await settle(stub);
    await sim(`/installations/${installationId}`, { method: "DELETE", body: {} });
    await sim("/outbox/drain", { method: "POST" }); // the deletion webhook is lost
    await runInDurableObject(stub, (object: { schedules: { at(n: string, t: number): void } }) =>
      object.schedules.at("sync", Date.now()),
    );
    await settle(stub);
    await runDurableObjectAlarm(inst);
    expect((await inst.status()).status).toBe("deleted");
    expect((await stub.identity())?.status).toBe("removed");
    expect((await directory(env).get(repos[0]!.id))?.status).toBe("removed");
  });

  it("a deletion answered 301 is not denied: asked again, applied on 404", async () => {
    const { installationId, repos } = await onGitHub("life-r", ["redir"]);
    const inst = installationStub(installationId);
    await inst.lifecycle(installationId, "cr", { kind: "created", account: "life-r", repos }, NOW);
    await runDurableObjectAlarm(inst);
    await sim(`/installations/${installationId}`, { method: "DELETE", body: {} });
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          {
            method: "GET",
            path: `/app/installations/${installationId}`,
            status: 301,
            headers: { location: "https://example.test/elsewhere" },
            times: 1,
          },
        ],
      },
    });
    await inst.lifecycle(installationId, "dr", { kind: "deleted" }, NOW);
    await runDurableObjectAlarm(inst);
    expect((await inst.status()).status).toBe("active");
    await sim("/faults", { method: "DELETE" });
    // Its backoff over (the retry time made now, not waited for), it is asked again.
    await runInDurableObject(inst, async (o: InstallationObject) => {
      (o as unknown as { store: InstallationStore }).store.setMeta("confirmRetryAtMs", "0");
      await o.alarm();
    });
    expect((await inst.status()).status).toBe("deleted");
  });

  it("a failing confirmation backs off with doubling delays and counts its attempts", async () => {
    const { installationId, repos } = await onGitHub("life-f", ["fail"]);
    const inst = installationStub(installationId);
    await inst.lifecycle(installationId, "cf", { kind: "created", account: "life-f", repos }, NOW);
    await runDurableObjectAlarm(inst);
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          {
            method: "GET",
            path: `/repositories/${repos[0]!.id}/installation`,
            status: 500,
            times: 100,
          },
        ],
      },
    });
    await inst.lifecycle(installationId, "rf", { kind: "repos-removed", repos }, NOW);
    const row = () =>
      runInDurableObject(inst, (_object: unknown, state: DurableObjectState) =>
        state.storage.sql
          .exec<{ attempts: number; retry_at_ms: number }>(
            "SELECT attempts, retry_at_ms FROM confirm_removed",
          )
          .toArray(),
      );
    const before = Date.now();
    await runDurableObjectAlarm(inst);
    const [first] = await row();
    expect(first?.attempts).toBeGreaterThanOrEqual(1);
    // SCHEDULE_RETRY_BASE_MS is 20 in tests: retried in 20 ms, then doubling (not a fixed 30 s).
    expect(first!.retry_at_ms - before).toBeLessThan(1_000);
    // Made due at once (no waiting on the clock), the next failure counts and backs off again.
    await runInDurableObject(inst, (_object: unknown, state: DurableObjectState) =>
      state.storage.sql.exec("UPDATE confirm_removed SET retry_at_ms = 0"),
    );
    const again = Date.now();
    await runDurableObjectAlarm(inst);
    const [later] = await row();
    expect(later!.attempts).toBeGreaterThan(first!.attempts);
    expect(later!.retry_at_ms - again).toBeLessThan(1_000);
    // Still recorded: the removal is neither applied nor dropped on errors.
    expect((await inst.status()).repos[0]?.status).toBe("active");
    await sim("/faults", { method: "DELETE" });
  });

  it("the write budget grants 70 a minute (below GitHub's 80) and defers the rest", async () => {
    const inst = installationStub(13);
    expect(await inst.reserveWrites(50, NOW)).toEqual({ granted: 50, retryAtMs: null });
    expect(await inst.reserveWritesUpTo(50, NOW + 1000)).toEqual({
      granted: 20,
      retryAtMs: NOW + 60_001,
    });
    expect(await inst.reserveWrites(5, NOW + 60_001)).toEqual({ granted: 5, retryAtMs: null });
  });

  it("a reservation of several writes at once is all or nothing, and says when all of them fit", async () => {
    const inst = installationStub(14);
    expect(await inst.reserveWritesUpTo(69, NOW)).toEqual({ granted: 69, retryAtMs: null });
    // One slot is left: a two-call write gets none of it (it could not use one), and comes back
    // when both fit.
    expect(await inst.reserveWrites(2, NOW + 1000)).toEqual({
      granted: 0,
      retryAtMs: NOW + 60_001,
    });
    expect(await inst.reserveWrites(1, NOW + 1000)).toEqual({ granted: 1, retryAtMs: null });
  });
});

describe("reconcile permits", () => {
  const LEASE = 10 * 60_000;
  const spent = { requests: 4, durationMs: 100, readings: [], completed: true };
  const stored = (inst: ReturnType<typeof installationStub>) =>
    runInDurableObject(inst, (o: InstallationObject) =>
      (o as unknown as { store: InstallationStore }).store.permits.permits(),
    );

  it("at most 10 in flight, in ask order; a release grants the next, a gone holder gives its permit back", async () => {
    // No repository objects behind these ids: told of its grant, such a "repository" is gone.
    const inst = installationStub(25_001);
    const answers = [];
    for (let i = 1; i <= 12; i++) answers.push(await inst.askPermit(25_000 + i, NOW));
    expect(answers.slice(0, 10).every((a) => a.granted)).toBe(true);
    // Refused ones are told when their turn comes; asking again by themselves is the fallback,
    // a lease away at least, spread by their id (never all on the same tick).
    expect(answers[10]).toMatchObject({ granted: false, position: 1 });
    expect(answers[11]).toMatchObject({ granted: false, position: 2 });
    for (const a of answers.slice(10) as Array<{ retryAtMs: number }>) {
      expect(a.retryAtMs).toBeGreaterThanOrEqual(NOW + LEASE);
      expect(a.retryAtMs).toBeLessThan(NOW + 1.5 * LEASE);
    }
    expect((answers[10] as { retryAtMs: number }).retryAtMs).not.toBe(
      (answers[11] as { retryAtMs: number }).retryAtMs,
    );
    // Asking again keeps the place (and a holder's ask renews its lease).
    expect(await inst.askPermit(25_012, NOW + 5)).toMatchObject({ granted: false, position: 2 });
    expect(await inst.askPermit(25_001, NOW + 5)).toEqual({
      granted: true,
      leaseUntilMs: NOW + 5 + LEASE,
    });

    await inst.releasePermit(25_002, spent, NOW + 10);
    expect((await stored(inst)).find((p) => p.repoId === 25_011)?.leaseUntilMs).toBe(
      NOW + 10 + LEASE,
    );
    expect((await inst.pacing(25_012, NOW + 10)).position).toBe(1);
    // The alarm tells 25011 of its grant; nothing answers for it, so it is dropped and 25012,
    // next in line, is granted in its place.
    await runDurableObjectAlarm(inst);
    await runDurableObjectAlarm(inst);
    const after = await stored(inst);
    expect(after.map((p) => p.repoId)).not.toContain(25_011);
    expect(after.find((p) => p.repoId === 25_012)?.leaseUntilMs).not.toBeNull();
  });

  it("an ask reads the holders and the head of the line, not a line of thousands (issue 25)", async () => {
    // 1,000 repositories asking at once overloaded this object when every ask read (and sorted)
    // the whole line: the decision's input is the holders and the first `bound` waiting.
    const inst = installationStub(25_003);
    await runInDurableObject(inst, (o: InstallationObject) => {
      const permits = (o as unknown as { store: InstallationStore }).store.permits;
      for (let i = 1; i <= 1_000; i++) permits.enqueue(26_000 + i, NOW);
    });
    expect((await inst.askPermit(26_001, NOW)).granted).toBe(true);
    const last = await inst.askPermit(27_000, NOW);
    expect(last).toMatchObject({ granted: false, position: 1_000 - PERMIT_BOUND });
    const read = await runInDurableObject(inst, (o: InstallationObject) =>
      (o as unknown as { store: InstallationStore }).store.permits.decisionState(PERMIT_BOUND),
    );
    expect(read.permits).toHaveLength(2 * PERMIT_BOUND);
    expect(read.permits.map((p) => p.repoId)).toEqual(
      Array.from({ length: 2 * PERMIT_BOUND }, (_, i) => 26_001 + i),
    );
    // The rest of the line is spread out when it asks again by itself (it is told sooner).
    expect((last as { retryAtMs: number }).retryAtMs - NOW).toBeGreaterThan(6 * LEASE - 1);
    expect((await inst.pacing(27_000, NOW)).position).toBe(1_000 - PERMIT_BOUND);
    // No repository stands behind these ids: left in line, the alarm would tell each of the
    // 1,000 in turn (each told one is found gone, the next granted) while later tests run.
    await runInDurableObject(inst, async (o: InstallationObject, state) => {
      const permits = (o as unknown as { store: InstallationStore }).store.permits;
      for (let i = 1; i <= 1_000; i++) permits.drop(26_000 + i);
      await state.storage.deleteAlarm();
    });
  });

  it("label writes share the reconciles' budget: never the webhooks' reserve (issue 25)", async () => {
    // A bench at a budget scaled down to 40 requests a window saw the producer's label writes
    // after each first reconcile overrun the 10% reserve and exhaust the window.
    const inst = installationStub(25_004);
    const reset = NOW + 30_000;
    const reading = { resource: "core", limit: 40, remaining: 14, resetMs: reset };
    await inst.askPermit(25_401, NOW);
    await inst.releasePermit(25_401, { ...spent, readings: [reading] }, NOW);
    // One holder expects 4 (the average so far): 14 - 4 (reserve) - 4 = 6 writes may go.
    await inst.askPermit(25_402, NOW);
    expect(await inst.reserveLabelWrites(10, NOW)).toEqual({ granted: 6, retryAtMs: reset });
    // They were counted: nothing more until the window resets, then the whole room again.
    expect(await inst.reserveLabelWrites(1, NOW + 1)).toEqual({ granted: 0, retryAtMs: reset });
    expect(await inst.reserveLabelWrites(3, reset)).toEqual({ granted: 3, retryAtMs: null });
    await inst.releasePermit(25_402, spent, reset);
  });

  it("a holder that vanished loses its permit after the lease and gets it back at its place", async () => {
    const inst = installationStub(25_002);
    for (let i = 1; i <= 11; i++) await inst.askPermit(25_100 + i, NOW);
    // 25101..25109 keep renewing; 25110 went silent (its object was evicted mid-run).
    const later = NOW + LEASE - 1_000;
    for (let i = 1; i <= 9; i++) await inst.askPermit(25_100 + i, later);
    // A newcomer asks after the silent one's lease ran out: it waits behind 25111, and 25110,
    // first in line again, is granted first.
    expect(await inst.askPermit(25_120, NOW + LEASE)).toMatchObject({
      granted: false,
      position: 2,
    });
    const permits = await stored(inst);
    expect(permits.find((p) => p.repoId === 25_110)?.leaseUntilMs).toBe(NOW + 2 * LEASE);
    expect(permits.find((p) => p.repoId === 25_111)?.leaseUntilMs).toBeNull();
    // Back, it asks: its permit is there.
    expect(await inst.askPermit(25_110, NOW + LEASE + 5)).toMatchObject({ granted: true });
  });
});

describe("the scheduled handler", () => {
  it("re-arms reconciliation for every active installed repository", async () => {
    const { installationId, repos } = await onGitHub("life-c", ["cron-a", "cron-b"]);
    const inst = installationStub(installationId);
    await inst.lifecycle(installationId, "c14", { kind: "created", account: "life-c", repos }, NOW);
    await runDurableObjectAlarm(inst);
    await sim(`/installations/${installationId}/repositories`, { body: { remove: ["cron-b"] } });
    await inst.lifecycle(installationId, "r14", { kind: "repos-removed", repos: [repos[1]!] }, NOW);
    await runDurableObjectAlarm(inst);
    for (const repo of repos) await settle(repoStub(repo.id));
    const before = (await repoStub(repos[0]!.id).graph()).watermarks.incremental;
    expect(before).not.toBeNull();

    const ctx = createExecutionContext();
    const controller = createScheduledController({ cron: "*/15 * * * *", scheduledTime: NOW });
    await worker.scheduled(controller, env, ctx);
    await waitOnExecutionContext(ctx);
    expect((await repoStub(repos[0]!.id).status()).schedules.map((s) => s.name)).toContain(
      "reconcile",
    );
    expect((await repoStub(repos[1]!.id).status()).schedules).toEqual([]);
    await settle(repoStub(repos[0]!.id));
    const after = (await repoStub(repos[0]!.id).graph()).watermarks.incremental;
    expect(after?.at).not.toEqual(before?.at);
  });
});

describe("lifecycle", () => {
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
});
