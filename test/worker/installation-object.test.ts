import {
  createExecutionContext,
  createScheduledController,
  runDurableObjectAlarm,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { directory } from "../../functions/objects/directory-object.ts";
import worker from "../../functions/worker.ts";

const installation = (id: number) => env.INSTALLATION.get(env.INSTALLATION.idFromName(String(id)));
const repoObject = (id: number) => env.REPO.get(env.REPO.idFromName(String(id)));
const NOW = Date.parse("2026-11-29T12:00:00Z");

describe("InstallationObject lifecycle", () => {
  it("created registers the repositories and starts a full reconcile for each", async () => {
    const inst = installation(11);
    const change = {
      kind: "created" as const,
      account: "acme",
      repos: [
        { id: 901, fullName: "acme/one" },
        { id: 902, fullName: "acme/two" },
      ],
    };
    expect(await inst.lifecycle(11, "del-1", change, NOW)).toBe("applied");
    expect(await inst.lifecycle(11, "del-1", change, NOW)).toBe("duplicate");
    await runDurableObjectAlarm(inst);
    expect(await directory(env).lookup("ACME/One")).toEqual({
      repoId: 901,
      fullName: "acme/one",
      installationId: 11,
      status: "active",
    });
    const status = await repoObject(902).status();
    expect(status.status).toBe("active");
    expect(status.schedules.map((s) => s.name)).toContain("reconcile-full");
  });

  it("suspend keeps data but stops schedules; delete removes repositories and their data", async () => {
    const inst = installation(12);
    await inst.lifecycle(
      12,
      "c",
      { kind: "created", account: "acme", repos: [{ id: 911, fullName: "acme/three" }] },
      NOW,
    );
    await runDurableObjectAlarm(inst);
    await repoObject(911).ingest(
      { id: "w", event: "issues", receivedMs: NOW },
      { id: 911, fullName: "acme/three", installationId: 12 },
      [
        {
          type: "issue",
          issue: {
            number: 1,
            id: 1,
            title: "t",
            state: "open",
            stateReason: null,
            createdAt: "2026-11-01T00:00:00Z",
            updatedAt: "2026-11-01T00:00:00Z",
            closedAt: null,
            labels: [],
            body: null,
          },
        },
      ],
    );
    await inst.lifecycle(12, "s", { kind: "suspended" }, NOW);
    await runDurableObjectAlarm(inst);
    expect((await repoObject(911).status()).schedules).toEqual([]);
    expect((await repoObject(911).graph(NOW)).stats.issues).toBe(1);
    expect(
      await repoObject(911).ingest(
        { id: "w2", event: "issues", receivedMs: NOW },
        { id: 911, fullName: "acme/three", installationId: 12 },
        [],
      ),
    ).toBe("ignored");

    await inst.lifecycle(12, "d", { kind: "deleted" }, NOW);
    await runDurableObjectAlarm(inst);
    expect((await repoObject(911).graph(NOW)).stats.issues).toBe(0);
    expect((await directory(env).lookup("acme/three"))?.status).toBe("removed");
    expect((await inst.status()).status).toBe("deleted");
  });

  it("the write budget grants 80 a minute and defers the rest", async () => {
    const inst = installation(13);
    expect(await inst.reserveWrites(50, NOW)).toEqual({ granted: 50, retryAtMs: null });
    expect(await inst.reserveWrites(50, NOW + 1000)).toEqual({
      granted: 30,
      retryAtMs: NOW + 60_001,
    });
    expect(await inst.reserveWrites(5, NOW + 60_001)).toEqual({ granted: 5, retryAtMs: null });
  });
});

describe("the scheduled handler", () => {
  it("re-arms reconciliation for every active installed repository", async () => {
    const inst = installation(14);
    await inst.lifecycle(
      14,
      "c14",
      {
        kind: "created",
        account: "acme",
        repos: [
          { id: 921, fullName: "acme/cron-a" },
          { id: 922, fullName: "acme/cron-b" },
        ],
      },
      NOW,
    );
    await runDurableObjectAlarm(inst);
    await inst.lifecycle(
      14,
      "r14",
      { kind: "repos-removed", repos: [{ id: 922, fullName: "acme/cron-b" }] },
      NOW,
    );
    await runDurableObjectAlarm(inst);
    // Drain the install-time schedules so only the cron's re-arming is observed.
    for (const id of [921, 922]) await runDurableObjectAlarm(repoObject(id));
    const ctx = createExecutionContext();
    const controller = createScheduledController({ cron: "*/15 * * * *", scheduledTime: NOW });
    await worker.scheduled(controller, env, ctx);
    await waitOnExecutionContext(ctx);
    expect((await repoObject(921).status()).schedules.map((s) => s.name)).toContain(
      "reconcile-full",
    );
    expect((await repoObject(922).status()).schedules).toEqual([]);
  });
});
