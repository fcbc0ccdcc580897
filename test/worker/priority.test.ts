// Priority ranks (spec 6.4, config `priority`) end to end: labels and an organization project's
// single-select field read by the priority schedule's own GraphQL query, kept current by
// `projects_v2_item` webhooks through the InstallationObject (values carried, values re-read,
// items added and removed), a rank learned by webhook and by reconcile agree, and a missing
// `organization_projects` permission turns the field off with its reason (labels still rank).
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import {
  deliverAll,
  installationStub,
  type repoStub,
  runInstallation,
  seed,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";

type Stub = ReturnType<typeof repoStub>;

const ORG = "prio-org";
const REPO = `${ORG}/app`;
const CONFIG = `queue:
  order: priority
priority:
  labels:
    P0: 0
    P1: 1
  project:
    number: 7
    field: Priority
    options:
      Urgent: 0
      High: 1
      Low: 2
`;

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

/** Webhooks in, the installation's alarm (project notices), the repository's alarms. */
async function settleAll(stub: Stub, installationId: number) {
  for (let i = 0; i < 3; i++) {
    await deliverAll();
    await runDurableObjectAlarm(installationStub(installationId));
    await settle(stub);
  }
}

async function ranks(stub: Stub): Promise<Record<number, number | null>> {
  const q = (await stub.workQueue({ limit: 50 })).body as {
    items: Array<{ number: number; priority: number | null }>;
  };
  return Object.fromEntries(q.items.map((i) => [i.number, i.priority]));
}

async function order(stub: Stub): Promise<number[]> {
  const q = (await stub.workQueue({ limit: 50 })).body as { items: Array<{ number: number }> };
  return q.items.map((i) => i.number);
}

/** A full read of the project field now (what the daily full reconcile asks for). */
async function fullRead(stub: Stub, installationId: number) {
  await runInDurableObject(stub, async (o: RepoObject) => {
    o.store.updateWatermarks({ lastFullReconcileAt: null });
  });
  await stub.armReconcile();
  await settleAll(stub, installationId);
}

const itemsPath = `/orgs/${ORG}/projects/7/items`;

describe("priority", () => {
  it("ranks from labels and the project field; webhooks and the reconcile agree", async () => {
    const issues = [1, 2, 3, 4, 5].map((n) =>
      seedIssue(n, { labels: ["agent:ready", ...(n === 5 ? ["P1"] : [])] }),
    );
    const seeded = await seed({ repo: REPO, issues }, undefined, {
      ".github/switchyard.yml": CONFIG,
    });
    await sim(`/orgs/${ORG}/projects`, {
      body: { number: 7, field: "Priority", options: ["Urgent", "High", "Low"] },
    });
    const item3 = await sim<{ node_id: string }>(itemsPath, {
      body: { repo: REPO, issue: 3, value: "Low" },
    });
    await sim(itemsPath, { body: { repo: REPO, issue: 4, value: "Urgent" } });
    await runInstallation(seeded.installationId);
    const stub = (await import("./helpers.ts")).repoStub(seeded.repoId);
    await settleAll(stub, seeded.installationId);

    // The first full reconcile read the field: rank, then number.
    expect(await ranks(stub)).toEqual({ 1: null, 2: null, 3: 2, 4: 0, 5: 1 });
    expect(await order(stub)).toEqual([4, 5, 3, 1, 2]);
    const graph = (await stub.graph()).priority as { project: { state: string; ranked: number } };
    expect(graph.project).toMatchObject({ state: "on", ranked: 2 });

    // Webhooks: a value carried (edited), one GitHub left out (re-read), an item added, one removed.
    await sim(`${itemsPath}/${item3.node_id}/value`, { method: "PUT", body: { value: "Urgent" } });
    await sim(itemsPath, { body: { repo: REPO, issue: 1, value: "High" } });
    const item2 = await sim<{ node_id: string }>(itemsPath, { body: { repo: REPO, issue: 2 } });
    await sim(`${itemsPath}/${item2.node_id}/value`, {
      method: "PUT",
      body: { value: "Low", omitValues: true },
    });
    const item4 = (
      await sim<{ items: Array<{ node_id: string; issue: string }> }>(`/orgs/${ORG}/projects/7`)
    ).items.find((i) => i.issue === `${REPO}#4`)!;
    await sim(`${itemsPath}/${item4.node_id}`, { method: "DELETE", body: {} });
    await settleAll(stub, seeded.installationId);
    const byWebhook = await ranks(stub);
    expect(byWebhook).toEqual({ 1: 1, 2: 2, 3: 0, 4: null, 5: 1 });
    expect(await order(stub)).toEqual([3, 1, 5, 2, 4]);

    // The same ranks from a full read of the field.
    await fullRead(stub, seeded.installationId);
    expect(await ranks(stub)).toEqual(byWebhook);

    // A lost webhook: the next full read heals it.
    await sim("/faults", {
      method: "PUT",
      body: { webhooks: [{ event: "projects_v2_item", kind: "drop", times: 1 }] },
    });
    await sim(`${itemsPath}/${item2.node_id}/value`, { method: "PUT", body: { value: "Urgent" } });
    await settleAll(stub, seeded.installationId);
    expect((await ranks(stub))[2]).toBe(2);
    await fullRead(stub, seeded.installationId);
    expect((await ranks(stub))[2]).toBe(0);
  });

  it("without organization_projects the field is off with its reason; labels still rank", async () => {
    const org = "prio-noperm";
    const repo = `${org}/app`;
    const seeded = await seed(
      {
        repo,
        issues: [
          seedIssue(1, { labels: ["agent:ready"] }),
          seedIssue(2, { labels: ["agent:ready", "P0"] }),
        ],
      },
      undefined,
      { ".github/switchyard.yml": CONFIG },
    );
    await sim(`/orgs/${org}/projects`, {
      body: { number: 7, field: "Priority", options: ["Urgent", "High", "Low"] },
    });
    await sim(`/orgs/${org}/projects/7/items`, { body: { repo, issue: 1, value: "Urgent" } });
    await sim(`/installations/${seeded.installationId}/permissions`, {
      method: "PUT",
      body: { permissions: { organization_projects: null } },
    });
    await runInstallation(seeded.installationId);
    const stub = (await import("./helpers.ts")).repoStub(seeded.repoId);
    await settleAll(stub, seeded.installationId);
    const graph = (await stub.graph()).priority as { project: { state: string; reason: string } };
    expect(graph.project.state).toBe("off");
    expect(graph.project.reason).toContain("organization_projects: read");
    expect(await ranks(stub)).toEqual({ 1: null, 2: 0 });
    // The full reconcile itself was not failed by the missing permission.
    expect((await stub.graph()).watermarks.lastFullReconcileAt).not.toBeNull();
  });
});
