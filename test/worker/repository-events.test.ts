// `repository` events and addressing by id (spec 6.1, issue 9 fix 1): a RepoObject's requests go
// to its repository by id, a read by name that answers for another repository stops it until it
// has read its repository again by id, and a repository event is only a reason to read it.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { directory } from "../../functions/objects/directory/directory-object.ts";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { signBody } from "../../shared/webhooks/signature.ts";
import { WEBHOOK_SECRET } from "./global-setup.ts";
import {
  deliverAll,
  faultsLeft,
  install,
  installationStub,
  labelsOf,
  postWebhook,
  type repoStub,
  seed,
  seedClosed,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});
beforeEach(async () => {
  await sim("/faults", { method: "DELETE" });
});

/** Another repository under `name`: a recent close that would kick its #2 if anyone planned for it. */
async function reuseName(name: string, installationId: number) {
  const other = await seed(
    { repo: name, issues: [seedClosed(1, HOUR / 2), seedIssue(2, { blockedBy: [1] })] },
    installationId,
  );
  // Its own object is not running in this test: only the old one could touch it.
  await sim("/outbox/drain", { method: "POST" });
  return other;
}

/** The cron's daily full reconcile, due now. */
async function fullReconcile(stub: ReturnType<typeof repoStub>) {
  await runInDurableObject(stub, async (object: RepoObject) => {
    if (object.store.identity()?.status !== "active") return;
    object.schedules.at("reconcile-full", Date.now());
    await object.schedules.rearm();
  });
  await settle(stub);
}

async function auditKinds(stub: { auditLog(limit?: number): Promise<Array<{ kind: string }>> }) {
  return (await stub.auditLog(500)).map((e) => e.kind);
}

describe("rename, then the old name reused", () => {
  for (const webhook of ["delivered", "lost"] as const) {
    it(`the old object neither reconciles nor labels the new repository (rename webhook ${webhook})`, async () => {
      const name = `renames-${webhook}/app`;
      const { stub, repoId, installationId } = await install({
        repo: name,
        issues: [seedIssue(1), seedIssue(2)],
      });
      await sim(`/repos/${name}/rename`, { body: { name: "app-old" } });
      if (webhook === "delivered") {
        await deliverAll();
        await settle(stub);
        expect((await stub.identity())?.fullName).toBe(`renames-${webhook}/app-old`);
      } else {
        await sim("/outbox/drain", { method: "POST" });
      }
      const other = await reuseName(name, installationId);
      expect(other.repoId).not.toBe(repoId);

      await fullReconcile(stub);

      expect(await labelsOf(name, 2)).not.toContain("agent:ready");
      const identity = await stub.identity();
      expect(identity).toMatchObject({ repoId, fullName: `renames-${webhook}/app-old` });
      const graph = await stub.graph();
      expect(graph.stats.issues).toBe(2);
      expect(await directory(env).get(repoId)).toMatchObject({
        fullName: `renames-${webhook}/app-old`,
      });
      if (webhook === "lost") expect(await auditKinds(stub)).toContain("repository-mismatch");
      expect(await auditKinds(stub)).toContain("renamed");
    });
  }
});

describe("delete, then the name reused", () => {
  for (const webhook of ["delivered", "lost"] as const) {
    it(`the deleted repository's object stops and never touches the new one (delete webhook ${webhook})`, async () => {
      const name = `deletes-${webhook}/app`;
      const { stub, installationId } = await install({
        repo: name,
        issues: [seedIssue(1), seedIssue(2)],
      });
      await sim(`/repos/${name}`, { method: "DELETE", body: {} });
      if (webhook === "delivered") await deliverAll();
      else await sim("/outbox/drain", { method: "POST" });
      await settle(stub);
      await reuseName(name, installationId);
      await fullReconcile(stub);

      expect(await labelsOf(name, 2)).not.toContain("agent:ready");
      expect((await stub.status()).status).toBe("removed");
      expect(await stub.armReconcile(Date.now() + 4 * DAY)).toBe(false);
    });
  }
});

describe("a name in a lifecycle payload is a hint", () => {
  it("a replayed installation_repositories.added carrying the old name renames neither the object nor the directory", async () => {
    const { stub, repoId, installationId } = await install({
      repo: "replayed-added/app",
      issues: [seedIssue(1)],
    });
    await sim("/repos/replayed-added/app/rename", { body: { name: "app-new" } });
    await deliverAll();
    await settle(stub);
    expect((await stub.identity())?.fullName).toBe("replayed-added/app-new");

    const body = JSON.stringify({
      action: "added",
      installation: {
        id: installationId,
        account: { login: "replayed-added", id: 5 },
        repository_selection: "selected",
      },
      repository_selection: "selected",
      repositories_added: [{ id: repoId, name: "app", full_name: "replayed-added/app" }],
      repositories_removed: [],
      sender: { login: "mallory", id: 66, type: "User" },
    });
    const response = await postWebhook(
      {
        "x-github-event": "installation_repositories",
        "x-github-delivery": crypto.randomUUID(),
        "content-type": "application/json",
        "x-hub-signature-256": await signBody(WEBHOOK_SECRET, body),
      },
      body,
    );
    expect(response.status).toBe(200);
    await runDurableObjectAlarm(installationStub(installationId));

    // The stored name stays; the object asks GitHub (by id) instead.
    expect((await stub.identity())?.fullName).toBe("replayed-added/app-new");
    expect(await directory(env).get(repoId)).toMatchObject({ fullName: "replayed-added/app-new" });
    expect((await stub.status()).schedules.map((s) => s.name)).toContain("sync");
    await settle(stub);
    expect((await stub.identity())?.fullName).toBe("replayed-added/app-new");
    expect(await directory(env).get(repoId)).toMatchObject({ fullName: "replayed-added/app-new" });
    expect((await directory(env).lookup("replayed-added/app-new"))?.repoId).toBe(repoId);
  });
});

describe("a repository event is a reason to ask GitHub, not a fact", () => {
  it("a forged repository.deleted for a repository that exists changes nothing", async () => {
    const name = "forged/app";
    const { stub, repoId } = await install({ repo: name, issues: [seedIssue(1)] });
    const body = JSON.stringify({
      action: "deleted",
      repository: { id: repoId, name: "app", full_name: name, owner: { login: "forged", id: 9 } },
      sender: { login: "mallory", id: 66, type: "User" },
      installation: { id: (await stub.identity())!.installationId },
    });
    const response = await postWebhook(
      {
        "x-github-event": "repository",
        "x-github-delivery": crypto.randomUUID(),
        "content-type": "application/json",
        "x-hub-signature-256": await signBody(WEBHOOK_SECRET, body),
      },
      body,
    );
    expect(response.status).toBe(200);
    await settle(stub);
    expect((await stub.status()).status).toBe("active");
    expect((await stub.graph()).stats.issues).toBe(1);
  });

  it("an archived repository is read-only: nothing planned or written, the graph says why", async () => {
    const name = "archives/app";
    const { stub } = await install({
      repo: name,
      issues: [seedClosed(1, HOUR / 2), seedIssue(2, { blockedBy: [1] }), seedIssue(3)],
    });
    expect(await labelsOf(name, 2)).toContain("agent:ready");
    await sim(`/repos/${name}/archive`, { body: {} });
    await deliverAll();
    await settle(stub);
    const graph = await stub.graph();
    expect(graph.repository).toMatchObject({
      archived: true,
      writes: "paused: the repository is archived",
    });
    await sim(`/repos/${name}/unarchive`, { body: {} });
    await deliverAll();
    await settle(stub);
    expect((await stub.graph()).repository).toMatchObject({ archived: false, writes: "on" });
  });
});

describe("removal during a reconcile", () => {
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
    // The delayed page request has reached GitHub once its one-time rule is used up.
    expect(await faultsLeft(0)).toBe(true);
    const identity = (await stub.identity())!;
    await stub.setLifecycle({ ...identity, status: "removed" });
    await inFlight;
    // Whatever else the object would run (the runtime fires due alarms by itself too).
    await settle(stub);
    expect((await stub.graph()).stats.issues).toBe(0);
    expect((await stub.status()).status).toBe("removed");
    expect(installationId).toBeGreaterThan(0);
  });
});
