import {
  createExecutionContext,
  createScheduledController,
  runDurableObjectAlarm,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { directory } from "../../functions/objects/directory-object.ts";
import worker from "../../functions/worker.ts";
import { installationStub, repoStub, seed, seedIssue, settle, sim } from "./helpers.ts";

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

  it("the write budget grants 70 a minute (below GitHub's 80) and defers the rest", async () => {
    const inst = installationStub(13);
    expect(await inst.reserveWrites(50, NOW)).toEqual({ granted: 50, retryAtMs: null });
    expect(await inst.reserveWrites(50, NOW + 1000)).toEqual({
      granted: 20,
      retryAtMs: NOW + 60_001,
    });
    expect(await inst.reserveWrites(5, NOW + 60_001)).toEqual({ granted: 5, retryAtMs: null });
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
