// Helpers for tests inside workerd: drive the GitHub simulator over HTTP, deliver its signed
// webhooks to the Worker, and run a repository's alarms until it has nothing left to do.

import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { inject } from "vitest";
import type { Env } from "../../functions/env.ts";
import type { InstallationObject } from "../../functions/objects/installation/installation-object.ts";
import type { InstallationStore } from "../../functions/objects/installation/installation-store.ts";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import type { SnapshotInput } from "../../shared/graph/snapshot.ts";
import type { IssueRecord } from "../../shared/ingest/events.ts";
import { signBody } from "../../shared/webhooks/signature.ts";
import { WEBHOOK_SECRET } from "./global-setup.ts";

const simUrl = inject("simUrl");

type SeedIssue = SnapshotInput["issues"][number];
const isoAgo = (ms: number) => new Date(Date.now() - ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** A stored issue as an `issue` event carries it: open, unlabelled, unless `patch` says otherwise. */
export const issueRecord = (number: number, patch: Partial<IssueRecord> = {}): IssueRecord => ({
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

/** An issue to seed, open and last updated a day ago unless `extra` says otherwise. */
export function seedIssue(number: number, extra: Partial<SeedIssue> = {}): SeedIssue {
  return {
    number,
    title: `Issue ${number}`,
    state: "open",
    stateReason: null,
    createdAt: isoAgo(2 * 86_400_000),
    updatedAt: isoAgo(86_400_000),
    closedAt: null,
    labels: [],
    ...extra,
  };
}

/** A closed issue to seed, closed (and updated) `msAgo` milliseconds ago. */
export function seedClosed(
  number: number,
  msAgo: number,
  extra: Partial<SeedIssue> = {},
): SeedIssue {
  return seedIssue(number, {
    state: "closed",
    stateReason: "completed",
    closedAt: isoAgo(msAgo),
    updatedAt: isoAgo(msAgo),
    ...extra,
  });
}

export async function sim<T = unknown>(
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<T> {
  const response = await fetch(`${simUrl}/_sim${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { "content-type": "application/json" },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`simulator ${path}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : null) as T;
}

/**
 * Asks the simulator until its request fault rules have `left` uses left in all (a rule's use is
 * taken when its request arrives, before any delay): whether that happened within `rounds` asks.
 */
export async function faultsLeft(left: number, rounds = 2_000): Promise<boolean> {
  for (let i = 0; i < rounds; i++) {
    if ((await sim<{ requests: number }>("/faults")).requests === left) return true;
  }
  return false;
}

/** `snapshot` seeded on the simulator (and `files` on its default branch), the App installed on it (webhooks queued). */
export async function seed(
  snapshot: SnapshotInput,
  installationId?: number,
  files?: Record<string, string>,
) {
  return sim<{ repo: string; repoId: number; installationId: number }>("/seed", {
    body: {
      snapshot,
      install: true,
      ...(installationId ? { installationId } : {}),
      ...(files ? { files } : {}),
    },
  });
}

/** Delivers the queued installation webhooks and carries out the installation's transitions. */
export async function runInstallation(installationId: number) {
  await deliverAll();
  await runDurableObjectAlarm(installationStub(installationId));
}

export interface Delivery {
  id: string;
  event: string;
  action: string | null;
  headers: Record<string, string>;
  body: string;
}

export function postWebhook(headers: Record<string, string>, body: string | Uint8Array) {
  return exports.default.fetch("https://switchyard.test/webhooks/github", {
    method: "POST",
    headers,
    body,
  });
}

/** A signed `label.deleted` delivery of `label` in `repo` ("owner/name"), as GitHub sends it. */
export async function postLabelDeleted(
  to: { repo: string; repoId: number; installationId: number },
  label: string,
  sender: string,
) {
  const [owner, name] = to.repo.split("/") as [string, string];
  const body = JSON.stringify({
    action: "deleted",
    label: { id: 77, name: label, color: "ededed", default: false, description: null },
    repository: { id: to.repoId, name, full_name: to.repo, owner: { login: owner, id: 5 } },
    installation: { id: to.installationId },
    sender: { login: sender, id: 66, type: "User" },
  });
  return postWebhook(
    {
      "x-github-event": "label",
      "x-github-delivery": crypto.randomUUID(),
      "content-type": "application/json",
      "x-hub-signature-256": await signBody(WEBHOOK_SECRET, body),
    },
    body,
  );
}

/** Delivers every queued webhook to the Worker, in order; returns the deliveries and statuses. */
export async function deliverAll(): Promise<Array<Delivery & { status: number }>> {
  const { deliveries } = await sim<{ deliveries: Delivery[] }>("/outbox/drain", { method: "POST" });
  const out: Array<Delivery & { status: number }> = [];
  for (const d of deliveries) {
    const response = await postWebhook(d.headers, d.body);
    await response.arrayBuffer();
    out.push({ ...d, status: response.status });
  }
  return out;
}

export const repoStub = (repoId: number) => env.REPO.get(env.REPO.idFromName(String(repoId)));
export const installationStub = (id: number) =>
  env.INSTALLATION.get(env.INSTALLATION.idFromName(String(id)));

/**
 * Runs the object's alarm until nothing is due and no run is in flight (the runtime also fires
 * alarms by itself, and a run may be waiting out a GitHub retry).
 */
export async function settle(stub: DurableObjectStub, rounds = 200): Promise<void> {
  const repo = stub as ReturnType<typeof repoStub>;
  for (let i = 0; i < rounds; i++) {
    await runDurableObjectAlarm(stub);
    const status = await repo.status();
    if (!status.running && !status.schedules.some((s) => s.dueMs <= Date.now() + 50)) return;
    // A run in progress may be waiting out a GitHub retry, or belong to an instance an eviction
    // cut off (whose promise never settles): poll its status rather than await it.
    if (status.running) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("the repository did not settle");
}

/**
 * Runs an installation's alarm until no transition or announced removal is due. The runtime
 * also fires alarms by itself: one already running is not "scheduled", so `runDurableObjectAlarm`
 * returns at once while its transitions are still in flight (their rows go when each is done):
 * poll the rows, as `settle` polls a repository's run.
 */
export async function settleInstallation(installationId: number, rounds = 200): Promise<void> {
  const stub = installationStub(installationId);
  for (let i = 0; i < rounds; i++) {
    await runDurableObjectAlarm(stub);
    const dueMs = await runInDurableObject(stub, (o: InstallationObject) =>
      (o as unknown as { store: InstallationStore }).store.earliestDueMs(),
    );
    if (dueMs === null || dueMs > Date.now() + 50) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`installation ${installationId} did not settle`);
}

/** Webhooks delivered and the repository settled, `rounds` times (what one webhook leads to). */
export async function deliverAndSettle(stub: ReturnType<typeof repoStub>, rounds = 3) {
  for (let i = 0; i < rounds; i++) {
    await deliverAll();
    await settle(stub);
  }
}

/**
 * Time passes for the object's schedules: every one waiting out a retry backoff is due now
 * (tests move the object's clock this way instead of sleeping through the backoff).
 */
export async function backoffsOver(stub: ReturnType<typeof repoStub>): Promise<void> {
  await runInDurableObject(stub, async (o: RepoObject) => {
    o.store.sql`UPDATE schedules SET due_ms = ${Date.now()} WHERE leased = 0`;
    await o.schedules.rearm();
  });
}

/** Installs the App end to end: queued installation webhook in, lifecycle carried out, reconciled. */
export async function install(snapshot: SnapshotInput, files?: Record<string, string>) {
  const seeded = await seed(snapshot, undefined, files);
  await deliverAll();
  await runDurableObjectAlarm(installationStub(seeded.installationId));
  const stub = repoStub(seeded.repoId);
  await settle(stub);
  await deliverAll();
  await settle(stub);
  return { ...seeded, stub };
}

export async function labelsOf(fullName: string, number: number): Promise<string[]> {
  const snapshot = await sim<{ issues: Array<{ number: number; labels: string[] }> }>(
    `/repos/${fullName}/snapshot`,
  );
  return snapshot.issues.find((i) => i.number === number)?.labels ?? [];
}

/** Makes GitHub answer `status` to the next `times` label writes on issue `number` of `repo`. */
export async function failLabelWrites(repo: string, number: number, status: number, times: number) {
  await sim("/faults", {
    method: "PUT",
    body: {
      requests: [{ method: "POST", path: `/repos/${repo}/issues/${number}/labels`, status, times }],
    },
  });
}

/** Bindings whose Durable Object namespaces record every use instead of answering. */
export function trapped() {
  const touched: string[] = [];
  const namespace = (name: string) =>
    new Proxy(
      {},
      {
        get(_, prop) {
          return () => {
            touched.push(`${name}.${String(prop)}`);
            throw new Error(`${name} must not be asked`);
          };
        },
      },
    );
  const bindings = {
    ...env,
    DIRECTORY: namespace("DIRECTORY"),
    NAMES: namespace("NAMES"),
    REPO: namespace("REPO"),
    INSTALLATION: namespace("INSTALLATION"),
  } as unknown as Env;
  return { bindings, touched };
}

/** The repositories holding a permit of installation `inst` now. */
export const permitHolders = (inst: ReturnType<typeof installationStub>) =>
  runInDurableObject(inst, (o: InstallationObject) =>
    (o as unknown as { store: InstallationStore }).store.permits
      .permits()
      .filter((p) => p.leaseUntilMs !== null)
      .map((p) => p.repoId),
  );
