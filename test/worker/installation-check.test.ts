// The cron's installation check (issue 9 fix 3): a repository whose move, removal or addition
// reached switchyard through no webhook at all is found by asking GitHub, once a day, which
// installation covers it; the change then goes the way its webhook would have.
import {
  createExecutionContext,
  createScheduledController,
  runDurableObjectAlarm,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { directory } from "../../functions/objects/directory/directory-object.ts";
import worker from "../../functions/worker.ts";
import {
  CHECK_TICK_MS,
  installationCheckSlot,
  installationChecksDue,
} from "../../shared/schedule/installation-check.ts";
import { deliverAll, install, installationStub, seedIssue, settle, sim } from "./helpers.ts";

const DAY = Date.parse("2026-11-29T00:00:00Z");

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

/** Webhooks GitHub sent and switchyard never received. */
async function loseWebhooks() {
  const { deliveries } = await sim<{ deliveries: unknown[] }>("/outbox/drain", { method: "POST" });
  expect(deliveries.length).toBeGreaterThan(0);
}

/** Fires the Worker's scheduled handler at the tick that checks `repoId`. */
async function cronTickFor(repoId: number) {
  const scheduledTime = DAY + installationCheckSlot(repoId) * CHECK_TICK_MS;
  expect(installationChecksDue([{ repoId }], scheduledTime)).toHaveLength(1);
  const controller = createScheduledController({ cron: "*/15 * * * *", scheduledTime });
  await worker.scheduled(controller, env, createExecutionContext());
}

describe("the cron's installation check", () => {
  it("checks each repository once a day, a bounded number per tick", () => {
    const entries = Array.from({ length: 10_000 }, (_, i) => ({ repoId: 1_000 + i }));
    let total = 0;
    for (let tick = 0; tick < 96; tick++) {
      const due = installationChecksDue(entries, DAY + tick * CHECK_TICK_MS, 1_000);
      expect(due.length).toBeLessThanOrEqual(200);
      total += due.length;
    }
    expect(total).toBe(entries.length);
    expect(installationChecksDue(entries, DAY, 5)).toHaveLength(5);
  });

  it("finds a move whose webhooks were all lost: active under the new installation", async () => {
    const t = await install({ repo: "ic-a/app", issues: [seedIssue(1), seedIssue(2)] });
    const { id: newInstallation } = await sim<{ id: number }>("/installations", {
      body: { account: "ic-b", repositories: "all" },
    });
    await deliverAll();
    await runDurableObjectAlarm(installationStub(newInstallation));
    await sim("/repos/ic-a/app/transfer", { body: { to: "ic-b" } });
    await loseWebhooks();

    await cronTickFor(t.repoId);
    await runDurableObjectAlarm(installationStub(newInstallation));
    await settle(t.stub);
    const moved = {
      repoId: t.repoId,
      fullName: "ic-b/app",
      installationId: newInstallation,
      status: "active",
    };
    expect(await t.stub.identity()).toEqual(moved);
    expect(await directory(env).get(t.repoId)).toEqual(moved);
    expect((await directory(env).lookup("ic-b/app"))?.repoId).toBe(t.repoId);
    expect((await t.stub.graph()).stats.issues).toBe(2);
    expect((await installationStub(newInstallation).status()).repos).toContainEqual({
      id: t.repoId,
      fullName: "ic-b/app",
      status: "active",
    });
    // The new installation's webhooks are applied from now on.
    await sim("/repos/ic-b/app/issues", { body: { title: "After the move" } });
    await deliverAll();
    await settle(t.stub);
    expect((await t.stub.graph()).stats.issues).toBe(3);
    // Checked again: everything agrees, nothing changes.
    expect(await t.stub.checkInstallation()).toBe("none");
  });

  it("finds a removal whose webhook was lost: removed, directory included", async () => {
    const t = await install({ repo: "ic-c/app", issues: [seedIssue(1)] });
    await sim(`/installations/${t.installationId}/repositories`, { body: { remove: ["app"] } });
    await loseWebhooks();

    await cronTickFor(t.repoId);
    await runDurableObjectAlarm(installationStub(t.installationId));
    await settle(t.stub);
    const removed = {
      repoId: t.repoId,
      fullName: "ic-c/app",
      installationId: t.installationId,
      status: "removed",
    };
    expect(await t.stub.identity()).toEqual(removed);
    expect(await directory(env).get(t.repoId)).toEqual(removed);
    expect(await t.stub.checkInstallation()).toBe("none");
  });

  it("finds an addition whose webhook was lost: a removed repository added back", async () => {
    const t = await install({ repo: "ic-d/app", issues: [seedIssue(1)] });
    await sim(`/installations/${t.installationId}/repositories`, { body: { remove: ["app"] } });
    await deliverAll();
    await runDurableObjectAlarm(installationStub(t.installationId));
    expect((await t.stub.identity())?.status).toBe("removed");
    await sim(`/installations/${t.installationId}/repositories`, { body: { add: ["app"] } });
    await loseWebhooks();

    await cronTickFor(t.repoId);
    await runDurableObjectAlarm(installationStub(t.installationId));
    await settle(t.stub);
    const active = {
      repoId: t.repoId,
      fullName: "ic-d/app",
      installationId: t.installationId,
      status: "active",
    };
    expect(await t.stub.identity()).toEqual(active);
    expect(await directory(env).get(t.repoId)).toEqual(active);
    expect((await t.stub.graph()).stats.issues).toBe(1);
  });
});
