// Destructive changes are confirmed with GitHub before they are applied (spec 6.1, issue 9 fix 2):
// GitHub signs a delivery's body but not X-GitHub-Event or X-GitHub-Delivery, so a captured
// delivery replayed under a new id must not remove what still exists.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { directory } from "../../functions/objects/directory/directory-object.ts";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { formatInstant } from "../../shared/graph/time.ts";
import { signBody } from "../../shared/webhooks/signature.ts";
import { WEBHOOK_SECRET } from "./global-setup.ts";
import {
  deliverAll,
  install,
  installationStub,
  labelsOf,
  postLabelDeleted,
  postWebhook,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

/** Posts `payload` signed with the webhook secret, as anyone holding a past delivery could. */
async function replay(event: string, payload: unknown) {
  const body = JSON.stringify(payload);
  const response = await postWebhook(
    {
      "x-github-event": event,
      "x-github-delivery": crypto.randomUUID(),
      "content-type": "application/json",
      "x-hub-signature-256": await signBody(WEBHOOK_SECRET, body),
    },
    body,
  );
  return { status: response.status, answer: await response.json() };
}

const sender = { login: "octocat", id: 1, type: "User" };
const repository = (id: number, fullName: string) => ({
  id,
  name: fullName.split("/")[1],
  full_name: fullName,
  owner: { login: fullName.split("/")[0], id: 5 },
});
const installation = (id: number, account: string) => ({
  id,
  account: { login: account, id: 5 },
  repository_selection: "selected",
});

async function kinds(stub: { auditLog(limit?: number): Promise<Array<{ kind: string }>> }) {
  return (await stub.auditLog(500)).map((e) => e.kind);
}

describe("removal of a repository from the installation", () => {
  it("a replayed installation_repositories.removed for an installed repository changes nothing", async () => {
    const { stub, repoId, repo, installationId } = await install({
      repo: "replays/app",
      issues: [seedIssue(1), seedIssue(2)],
    });
    const removed = await replay("installation_repositories", {
      action: "removed",
      installation: installation(installationId, "replays"),
      repository_selection: "selected",
      repositories_added: [],
      repositories_removed: [{ id: repoId, name: "app", full_name: repo }],
      sender,
    });
    expect(removed.status).toBe(200);
    await runDurableObjectAlarm(installationStub(installationId));
    await settle(stub);
    expect((await stub.status()).status).toBe("active");
    expect((await stub.graph()).stats.issues).toBe(2);
    expect((await directory(env).get(repoId))?.status).toBe("active");
    expect((await installationStub(installationId).status()).repos).toContainEqual({
      id: repoId,
      fullName: repo,
      status: "active",
    });
    // Its webhooks are still applied.
    await sim(`/repos/${repo}/issues`, { body: { title: "Third" } });
    await deliverAll();
    await settle(stub);
    expect((await stub.graph()).stats.issues).toBe(3);
  });

  it("a real removal is applied once GitHub confirms it", async () => {
    const { stub, repoId, installationId } = await install({
      repo: "removals/app",
      issues: [seedIssue(1)],
    });
    await sim(`/installations/${installationId}/repositories`, { body: { remove: ["app"] } });
    await deliverAll();
    await runDurableObjectAlarm(installationStub(installationId));
    expect((await stub.status()).status).toBe("removed");
    expect((await directory(env).get(repoId))?.status).toBe("removed");
  });

  it("a replayed installation.deleted for a live installation changes nothing", async () => {
    const { stub, installationId } = await install({
      repo: "uninstalls/app",
      issues: [seedIssue(1)],
    });
    const deleted = await replay("installation", {
      action: "deleted",
      installation: installation(installationId, "uninstalls"),
      sender,
    });
    expect(deleted.status).toBe(200);
    await runDurableObjectAlarm(installationStub(installationId));
    expect((await installationStub(installationId).status()).status).toBe("active");
    expect((await stub.status()).status).toBe("active");
    expect((await stub.graph()).stats.issues).toBe(1);
  });
});

describe("deleted and transferred issues", () => {
  it("a replayed issues.deleted for an issue that exists changes nothing; real ones remove", async () => {
    const { stub, repoId, repo, installationId } = await install({
      repo: "issue-replays/app",
      issues: [seedIssue(1), seedIssue(2), seedIssue(3)],
    });
    await install({ repo: "issue-replays/other", issues: [seedIssue(1)] });
    const issue = {
      id: 4242,
      node_id: "I_4242",
      number: 1,
      title: "Issue 1",
      state: "open",
      state_reason: null,
      body: null,
      labels: [],
      user: sender,
      created_at: "2026-11-01T00:00:00Z",
      updated_at: "2030-01-01T00:00:00Z",
      closed_at: null,
    };
    const forged = await replay("issues", {
      action: "deleted",
      issue,
      repository: repository(repoId, repo),
      sender,
      installation: { id: installationId },
    });
    expect(forged.status).toBe(200);
    await settle(stub);
    expect((await stub.graph()).stats.issues).toBe(3);
    expect(await kinds(stub)).toContain("removal-denied");

    // Deleted for real (GitHub answers 410) and transferred for real (301): both removed.
    await sim(`/repos/${repo}/issues/2`, { method: "DELETE", body: {} });
    await sim(`/repos/${repo}/issues/3/transfer`, { body: { to: "issue-replays/other" } });
    await deliverAll();
    await settle(stub);
    expect((await stub.graph()).stats.issues).toBe(1);
    const confirmed = (await stub.auditLog(500)).filter((e) => e.kind === "removal-confirmed");
    expect(confirmed.map((e) => (e.detail as { verdict: string }).verdict).sort()).toEqual([
      "gone",
      "transferred",
    ]);
  });

  it("a full reconcile restores an issue that exists, whatever stamped its tombstone", async () => {
    const { stub } = await install({
      repo: "issue-restores/app",
      issues: [seedIssue(1, { labels: ["agent:hold"] }), seedIssue(2, { blockedBy: [1] })],
    });
    // A tombstone stamped at receipt time an hour ago (as older removals and the full
    // reconcile's "stored but not seen" were), newer than the issue's last update a day ago.
    const hourAgo = formatInstant(Math.floor((Date.now() - 3_600_000) / 1000) * 1000);
    await runInDurableObject(stub, (o: RepoObject) =>
      o.store.apply([{ type: "issue-removed", number: 1, at: hourAgo }]),
    );
    expect((await stub.graph()).stats.issues).toBe(1);
    await runInDurableObject(stub, (o: RepoObject) => o.schedules.at("reconcile-full", Date.now()));
    await settle(stub);
    const snapshot = await runInDurableObject(stub, (o: RepoObject) => o.store.snapshot());
    expect(snapshot.issues.map((i) => [i.number, i.labels, i.blockedBy ?? []])).toEqual([
      [1, ["agent:hold"], []],
      [2, [], [1]],
    ]);
    const tombstones = await runInDurableObject(stub, (_o: RepoObject, state) =>
      state.storage.sql.exec("SELECT number FROM tombstones").toArray(),
    );
    expect(tombstones).toEqual([]);
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
