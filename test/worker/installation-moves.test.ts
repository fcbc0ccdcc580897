// A repository moving between installations never ends dead (issue 9 fix 3): whatever order the
// old installation's `removed` and the new one's `added` (or its first webhook) arrive in, the
// directory and the RepoObject agree on the new installation, and an event from the former
// installation changes nothing.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { directory } from "../../functions/objects/directory/directory-object.ts";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { signBody } from "../../shared/webhooks/signature.ts";
import { WEBHOOK_SECRET } from "./global-setup.ts";
import {
  type Delivery,
  deliverAll,
  install,
  installationStub,
  postWebhook,
  seedIssue,
  settle,
  settleInstallation,
  sim,
} from "./helpers.ts";

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

async function post(d: Delivery) {
  const response = await postWebhook(d.headers, d.body);
  await response.arrayBuffer();
  return response.status;
}

/** `owner`/app installed, then transferred to `to` (where the App is installed on all repositories). */
async function transfer(owner: string, to: string) {
  const installed = await install({
    repo: `${owner}/app`,
    issues: [seedIssue(1, { labels: ["agent:ready"] }), seedIssue(2)],
  });
  // The former owner's fleet: a key and a live claim, both to end with the move.
  installed.stub.createKey({
    id: `${owner}-key`,
    name: "former owner",
    hash: `${owner}-hash`,
    createdBy: "former-admin",
    createdMs: Date.now(),
    expiresMs: null,
  });
  const claim = await installed.stub.claim(1, { agentId: "former-agent" });
  expect(claim.status).toBe(201);
  const { id: newInstallation } = await sim<{ id: number }>("/installations", {
    body: { account: to, repositories: "all" },
  });
  await deliverAll();
  await runDurableObjectAlarm(installationStub(newInstallation));
  await sim(`/repos/${owner}/app/transfer`, { body: { to } });
  const { deliveries } = await sim<{ deliveries: Delivery[] }>("/outbox/drain", {
    method: "POST",
  });
  const removed = deliveries.find(
    (d) => d.event === "installation_repositories" && d.action === "removed",
  );
  const added = deliveries.find(
    (d) => d.event === "installation_repositories" && d.action === "added",
  );
  const renamed = deliveries.find((d) => d.event === "repository");
  expect(removed && added && renamed).toBeTruthy();
  return {
    ...installed,
    newInstallation,
    removed: removed!,
    added: added!,
    transferred: renamed!,
    formerFence: (claim.body as { fence: number }).fence,
  };
}

async function runBoth(oldId: number, newId: number) {
  await settleInstallation(oldId);
  await settleInstallation(newId);
}

async function expectMoved(
  stub: Awaited<ReturnType<typeof install>>["stub"],
  repoId: number,
  installationId: number,
  fullName: string,
  formerFence?: number,
) {
  await settle(stub);
  expect(await stub.identity()).toEqual({ repoId, fullName, installationId, status: "active" });
  if (formerFence !== undefined) {
    // Whatever the order: the former owner's keys and claims ended, and fences only grow.
    expect(await stub.listKeys()).toEqual([]);
    expect((await stub.liveClaims()).body).toMatchObject({ claims: [] });
    // (The former claim's agent:processing label stays on GitHub until it goes stale.)
    const fence = await runInDurableObject(stub, (o: RepoObject) => o.store.claims.currentFence());
    expect(fence).toBeGreaterThanOrEqual(formerFence);
  }
  expect(await directory(env).get(repoId)).toEqual({
    repoId,
    fullName,
    installationId,
    status: "active",
  });
  expect((await directory(env).lookup(fullName))?.repoId).toBe(repoId);
  expect((await stub.graph()).stats.issues).toBe(2);
  // The cron reaches it and the new installation's webhooks are applied.
  expect(await stub.armReconcile()).toBe(true);
  await sim(`/repos/${fullName}/issues`, { body: { title: "After the move" } });
  await deliverAll();
  await settle(stub);
  expect((await stub.graph()).stats.issues).toBe(3);
}

describe("a repository moving between installations", () => {
  it("removed (old) first, then added (new)", async () => {
    const t = await transfer("mv-a", "mv-b");
    expect(await post(t.removed)).toBe(200);
    await runBoth(t.installationId, t.newInstallation);
    expect(await post(t.added)).toBe(200);
    expect(await post(t.transferred)).toBeLessThan(300);
    await runBoth(t.installationId, t.newInstallation);
    await expectMoved(t.stub, t.repoId, t.newInstallation, "mv-b/app", t.formerFence);
  });

  it("added (new) first, then removed (old)", async () => {
    const t = await transfer("mv-c", "mv-d");
    expect(await post(t.added)).toBe(200);
    expect(await post(t.transferred)).toBeLessThan(300);
    await runBoth(t.installationId, t.newInstallation);
    await settle(t.stub);
    expect(await post(t.removed)).toBe(200);
    await runBoth(t.installationId, t.newInstallation);
    await expectMoved(t.stub, t.repoId, t.newInstallation, "mv-d/app", t.formerFence);
  });

  it("removed (old) first, then only a webhook of the new installation (its added lost)", async () => {
    const t = await transfer("mv-e", "mv-f");
    expect(await post(t.removed)).toBe(200);
    await runBoth(t.installationId, t.newInstallation);
    expect((await t.stub.status()).status).toBe("removed");
    await post(t.transferred);
    await settle(t.stub);
    await expectMoved(t.stub, t.repoId, t.newInstallation, "mv-f/app", t.formerFence);
  });

  it("an event from the former installation changes nothing", async () => {
    const t = await transfer("mv-g", "mv-h");
    await post(t.added);
    await post(t.transferred);
    await post(t.removed);
    await runBoth(t.installationId, t.newInstallation);
    await settle(t.stub);
    const body = JSON.stringify({
      action: "opened",
      issue: {
        id: 5151,
        node_id: "I_5151",
        number: 9,
        title: "From the past",
        state: "open",
        state_reason: null,
        body: null,
        labels: [],
        user: { login: "octocat", id: 1, type: "User" },
        created_at: "2026-11-01T00:00:00Z",
        updated_at: "2026-11-01T00:00:00Z",
        closed_at: null,
      },
      repository: { id: t.repoId, name: "app", full_name: "mv-g/app" },
      sender: { login: "octocat", id: 1, type: "User" },
      installation: { id: t.installationId },
    });
    const response = await postWebhook(
      {
        "x-github-event": "issues",
        "x-github-delivery": crypto.randomUUID(),
        "content-type": "application/json",
        "x-hub-signature-256": await signBody(WEBHOOK_SECRET, body),
      },
      body,
    );
    expect(response.status).toBe(202);
    await settle(t.stub);
    await expectMoved(t.stub, t.repoId, t.newInstallation, "mv-h/app", t.formerFence);
  });

  it("a public repository removed from its installation ends removed", async () => {
    const { installationId, repoId, repo, stub } = await install({
      repo: "pub-owner/public",
      issues: [seedIssue(1)],
    });
    // Public: any installation token still reads it, so a read proves nothing.
    await sim(`/repos/${repo}/visibility`, { body: { private: false } });
    await deliverAll();
    await sim(`/installations/${installationId}/repositories`, { body: { remove: ["public"] } });
    await deliverAll();
    await runDurableObjectAlarm(installationStub(installationId));
    await runDurableObjectAlarm(installationStub(installationId));
    expect((await stub.identity())?.status).toBe("removed");
    expect((await directory(env).get(repoId))?.status).toBe("removed");
    expect(repo).toBe("pub-owner/public");
  });
});

describe("a suspension from the former installation", () => {
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
