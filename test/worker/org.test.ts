// The org queue (issue 23): each RepoObject pushes its queue's head to its owner's object, the
// owner picks for a caller and lets the repository's own object grant. Real workerd, real DO
// SQLite, the simulator as GitHub.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { ownerKeysObject, ownerObject } from "../../functions/objects/owner/owner-object.ts";
import { OrgFleetClient } from "../../shared/fleet/org-client.ts";
import type { SnapshotInput } from "../../shared/graph/snapshot.ts";
import { signBody } from "../../shared/webhooks/signature.ts";
import { WEBHOOK_SECRET } from "./global-setup.ts";
import {
  deliverAll,
  installationStub,
  postWebhook,
  repoStub,
  seed,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

const ready = (n: number, extra = {}) => seedIssue(n, { labels: ["agent:ready"], ...extra });

type Repo = {
  repo: string;
  repoId: number;
  installationId: number;
  stub: ReturnType<typeof repoStub>;
};

/** Repositories of one owner under one installation, installed, reconciled, heads pushed. */
async function installOrg(snapshots: SnapshotInput[]): Promise<Repo[]> {
  const first = await seed(snapshots[0]!);
  const rest = [];
  for (const s of snapshots.slice(1)) rest.push(await seed(s, first.installationId));
  await deliverAll();
  await runDurableObjectAlarm(installationStub(first.installationId));
  const repos = [first, ...rest].map((r) => ({ ...r, stub: repoStub(r.repoId) }));
  for (let round = 0; round < 2; round++) {
    for (const r of repos) await settle(r.stub);
    await deliverAll();
  }
  for (const r of repos) await settle(r.stub);
  return repos;
}

async function settleAll(repos: Repo[]) {
  for (const r of repos) await settle(r.stub);
}

type Grant = {
  status: number;
  body?: { repo: string; issue: { number: number }; claimId: string; fence: number };
};

describe("the owner's object", () => {
  it("holds each repository's pushed head, and claim-next takes turns across repositories", async () => {
    const repos = await installOrg([
      { repo: "orgq-fair/alpha", issues: [ready(1), ready(2), ready(3)] },
      { repo: "orgq-fair/beta", issues: [ready(1), ready(2)] },
    ]);
    const owner = ownerObject(env, "orgq-fair");
    const heads = await owner.heads();
    expect(heads.map((h) => [h.fullName, h.items.map((i) => i.number), h.total]).sort()).toEqual([
      ["orgq-fair/alpha", [1, 2, 3], 3],
      ["orgq-fair/beta", [1, 2], 2],
    ]);
    const scope = { installationId: repos[0]!.installationId, repoIds: null };
    const taken: string[] = [];
    for (let i = 0; i < 4; i++) {
      const g = (await owner.claimNext(scope, { agentId: "a1" })) as Grant;
      expect(g.status).toBe(201);
      taken.push(`${g.body!.repo}#${g.body!.issue.number}`);
    }
    // Lower repository id first, then the other, each repository's own order inside its turn.
    const [a, b] = [...repos].sort((x, y) => x.repoId - y.repoId).map((r) => r.repo);
    expect(taken).toEqual([`${a}#1`, `${b}#1`, `${a}#2`, `${b}#2`]);
    // The grants are the repositories' own: listed there, and pushed back to the owner.
    await settleAll(repos);
    const claims = (await owner.claims(scope)).body as {
      claims: Array<{ repo: string; number: number }>;
    };
    expect(claims.claims).toHaveLength(4);
    const queue = (await owner.workQueue(scope, { limit: 10 })).body as {
      items: Array<{ repo: string; number: number }>;
    };
    expect(queue.items.map((i) => `${i.repo}#${i.number}`)).toEqual(["orgq-fair/alpha#3"]);
  });

  it("a stale push never yields a grant; claim-next still finds other work", async () => {
    const repos = await installOrg([
      { repo: "orgq-stale/one", issues: [ready(1), ready(2), ready(3)] },
      { repo: "orgq-stale/two", issues: [ready(5)] },
    ]);
    const owner = ownerObject(env, "orgq-stale");
    const scope = { installationId: repos[0]!.installationId, repoIds: null };
    const one = repos.find((r) => r.repo.endsWith("/one"))!;
    const two = repos.find((r) => r.repo.endsWith("/two"))!;
    const before = await owner.heads();
    // #1 claimed by someone else, #2 closed, #3 released `done` (out until kicked again),
    // two/#5 claimed; then the owner is made to hold the heads from before, as if no push had
    // reached it since (the runtime may have run the repositories' alarms meanwhile).
    expect((await one.stub.claim(1, { agentId: "other" })).status).toBe(201);
    await sim(`/repos/${one.repo}/issues/2/close`, { body: {} });
    await deliverAll();
    const g3 = (await one.stub.claim(3, { agentId: "other" })) as Grant;
    await one.stub.release(3, {
      claimId: g3.body!.claimId,
      fence: g3.body!.fence,
      outcome: "done",
    });
    expect((await two.stub.claim(5, { agentId: "other" })).status).toBe(201);
    for (const h of before) {
      const { pushedMs: _p, withdrawnMs: _w, ...head } = h;
      expect(await owner.push({ ...head, version: Date.now() + 60_000 })).toBe("applied");
    }
    expect((await owner.heads()).flatMap((h) => h.items.map((i) => i.number)).sort()).toEqual([
      1, 2, 3, 5,
    ]);
    const none = await owner.claimNext(scope, { agentId: "me" });
    expect(none.body ?? null).toBeNull();
    expect(none.status).toBe(204);
    // New work in `two`: found after the pushes.
    await sim(`/repos/${two.repo}/issues`, { body: { title: "new", labels: ["agent:ready"] } });
    await deliverAll();
    await settleAll(repos);
    // (A push is newer than the forged ones only once the clock passes them: pushed again.)
    for (const h of await owner.heads()) {
      const { pushedMs: _p, withdrawnMs: _w, ...head } = h;
      await owner.push({
        ...head,
        version: head.version + 1,
        items: head.items.filter((i) => i.number === 6),
      });
    }
    const g = (await owner.claimNext(scope, { agentId: "me" })) as Grant;
    expect(g.status).toBe(201);
    expect(g.body).toMatchObject({ repo: two.repo, issue: { number: 6 } });
  });

  it("a late push changes nothing; capabilities and kinds filter; the fallback asks a repository holding more", async () => {
    const repos = await installOrg([
      {
        repo: "orgq-filter/gpu",
        issues: [ready(1, { body: "<!-- requires: gpu -->" }), ready(2)],
      },
    ]);
    const owner = ownerObject(env, "orgq-filter");
    const [head] = await owner.heads();
    expect(await owner.push({ ...head!, version: head!.version - 1, items: [] })).toBe("late");
    expect((await owner.heads())[0]!.items).toHaveLength(2);
    const scope = { installationId: repos[0]!.installationId, repoIds: null };
    const plain = (await owner.claimNext(scope, { agentId: "cpu" })) as Grant;
    expect(plain.body?.issue.number).toBe(2);
    expect((await owner.claimNext(scope, { agentId: "cpu" })).status).toBe(204);
    const gpu = (await owner.claimNext(scope, { agentId: "g", capabilities: ["gpu"] })) as Grant;
    expect(gpu.body?.issue.number).toBe(1);
    // A head that says it holds more than it pushed: asked directly (bounded), and it grants.
    await sim(`/repos/orgq-filter/gpu/issues`, {
      body: { title: "more", labels: ["agent:ready"] },
    });
    await deliverAll();
    await settle(repos[0]!.stub);
    const [fresh] = await owner.heads();
    expect(await owner.push({ ...fresh!, version: fresh!.version + 1, items: [], total: 1 })).toBe(
      "applied",
    );
    const viaFallback = (await owner.claimNext(scope, { agentId: "cpu" })) as Grant;
    expect(viaFallback).toMatchObject({
      status: 201,
      body: { repo: "orgq-filter/gpu", issue: { number: 3 } },
    });
  });
});

describe("order=impact across repositories", () => {
  it("an issue in one repository that blocks issues in another ranks above a local-only one", async () => {
    const org = "orgq-impact";
    const repos = await installOrg([
      {
        repo: `${org}/up`,
        // #1 blocks #3 here (local impact 1); #2 blocks nothing here (local impact 0).
        issues: [ready(1), ready(2), seedIssue(3, { blockedBy: [1] })],
      },
      {
        repo: `${org}/down`,
        // #5 and #6 wait on up#2, #7 waits on #5: three issues wait on up#2 across the boundary.
        issues: [
          seedIssue(5, { blockedBy: [`${org}/up#2`] }),
          seedIssue(6, { blockedBy: [`${org}/up#2`] }),
          seedIssue(7, { blockedBy: [5] }),
        ],
      },
    ]);
    const up = repos.find((r) => r.repo.endsWith("/up"))!;
    const down = repos.find((r) => r.repo.endsWith("/down"))!;
    const owner = ownerObject(env, org);
    const heads = async () => new Map((await owner.heads()).map((h) => [h.fullName, h]));
    // `down` pushed its edge; the owner told `up` that #2 is waited on, and `up` pushed again.
    expect((await heads()).get(down.repo)?.crossEdges).toEqual([
      { number: 5, blocker: { repo: up.repo, number: 2 }, dependents: [7] },
      { number: 6, blocker: { repo: up.repo, number: 2 }, dependents: [] },
    ]);
    await settleAll(repos);
    const upHead = (await heads()).get(up.repo)!;
    expect(upHead.crossBlockers).toEqual([2]);
    expect(upHead.items.map((i) => [i.number, i.impact, i.via ?? []])).toEqual([
      [1, 1, []],
      [2, 0, [2]],
    ]);
    const scope = { installationId: up.installationId, repoIds: null };
    const queue = (await owner.workQueue(scope, { limit: 10, order: "impact" })).body as {
      items: Array<{ repo: string; number: number; impact: number }>;
    };
    expect(queue.items.map((i) => [i.repo, i.number, i.impact])).toEqual([
      [up.repo, 2, 3],
      [up.repo, 1, 1],
    ]);
    const g = (await owner.claimNext(scope, { agentId: "i1", order: "impact" })) as Grant;
    expect(g.body).toMatchObject({ repo: up.repo, issue: { number: 2 } });
    // The edge goes when down#5 and down#6 stop waiting: up is told, and #1 leads again.
    await sim(`/repos/${down.repo}/issues/5/close`, { body: {} });
    await sim(`/repos/${down.repo}/issues/6/close`, { body: {} });
    await deliverAll();
    await settleAll(repos);
    await settleAll(repos);
    expect((await heads()).get(down.repo)?.crossEdges).toBeUndefined();
    expect((await heads()).get(up.repo)?.crossBlockers).toBeUndefined();
  });
});

describe("replies in the org queue", () => {
  it("pushed items carry kind and reply: org queue and claim-next honour kinds like the repository queue", async () => {
    const [r] = await installOrg([
      {
        repo: "orgq-replies/app",
        issues: [ready(1), seedIssue(2, { labels: ["agent:hold"] }), ready(3)],
      },
    ]);
    const repo = r!.repo;
    // An agent asked on #1 and #2, and the owner answered: #1 is work carrying a reply, #2 (held)
    // a reply item only; #3 is plain work.
    for (const n of [1, 2]) {
      await sim(`/repos/${repo}/issues/${n}/comments`, {
        body: { body: "Which format should the export use?", actor: "fleet[bot]" },
      });
      await sim(`/repos/${repo}/issues/${n}/comments`, {
        body: { body: "CSV, please.", actor: "orgq-replies" },
      });
    }
    for (let round = 0; round < 2; round++) {
      await deliverAll();
      await settle(r!.stub);
    }
    const owner = ownerObject(env, "orgq-replies");
    const [head] = await owner.heads();
    const pushed = head!.items
      .map((i) => [i.number, i.kind, i.work, i.reply?.reason ?? null] as const)
      .sort((a, b) => a[0] - b[0]);
    expect(pushed).toEqual([
      [1, "kick", true, "unanswered-human-comment"],
      [2, "reply", false, "unanswered-human-comment"],
      [3, "kick", true, null],
    ]);
    const scope = { installationId: r!.installationId, repoIds: null };
    type Listed = { number: number; kind: string; reply?: { author: string } };
    const listed = async (kinds?: Array<"reply" | "kick" | "rollup" | "ready">) =>
      (
        (await owner.workQueue(scope, { limit: 10, ...(kinds ? { kinds } : {}) })).body as {
          items: Listed[];
        }
      ).items
        .map((i) => [i.number, i.kind, i.reply?.author ?? null])
        .sort((a, b) => Number(a[0]) - Number(b[0]));
    // `reply` matches an item by its kind or by the reply it carries, as in the repository.
    expect(await listed(["reply"])).toEqual([
      [1, "kick", "orgq-replies"],
      [2, "reply", "orgq-replies"],
    ]);
    expect(await listed(["kick"])).toEqual([
      [1, "kick", "orgq-replies"],
      [3, "kick", null],
    ]);
    expect(await listed()).toHaveLength(3);
    // A default org claim-next takes work only, never the reply item ahead of it in order.
    const taken: Array<[number, string]> = [];
    for (let i = 0; i < 2; i++) {
      const g = await owner.claimNext(scope, { agentId: `worker-${i}` });
      expect(g.status).toBe(201);
      const body = g.body as { kind: string; issue: { number: number } };
      taken.push([body.issue.number, body.kind]);
    }
    expect(taken.sort((a, b) => a[0] - b[0])).toEqual([
      [1, "work"],
      [3, "work"],
    ]);
    expect((await owner.claimNext(scope, { agentId: "worker-2" })).status).toBe(204);
    // Asked for replies, the held issue is granted for its reply (a work claim of it is refused).
    const answer = await owner.claimNext(scope, { agentId: "answerer", kinds: ["reply"] });
    expect(answer).toMatchObject({
      status: 201,
      body: { repo, kind: "reply", issue: { number: 2 } },
    });
  });
});

// --- the org routes: every cell of issue 23's auth table ---------------------------------------

async function call(
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await exports.default.fetch(`https://switchyard.test${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : null,
  };
}

async function user(login: string, token: string, repos: Record<string, string> = {}) {
  await sim("/users", { body: { login, token, repos } });
  return token;
}

async function member(org: string, login: string, role: "admin" | "member", state = "active") {
  await sim(`/orgs/${org}/members`, { body: { login, role, state } });
}

describe("the org routes", () => {
  const org = "orgq-auth";
  let repos: Repo[];
  const t: Record<string, string> = {};
  let ownerKey = "";

  beforeAll(async () => {
    repos = await installOrg([
      { repo: `${org}/app`, issues: [ready(1), ready(2), ready(3)] },
      { repo: `${org}/lib`, issues: [ready(1), ready(2)] },
    ]);
    t.owner = await user("oa-owner", "ghu_oaowner000000000000000000000000");
    await member(org, "oa-owner", "admin");
    t.ownerClassic = await user("oa-classic", "ghp_oaclassic00000000000000000000000");
    await member(org, "oa-classic", "admin");
    t.pending = await user("oa-pending", "ghu_oapending0000000000000000000000");
    await member(org, "oa-pending", "admin", "pending");
    t.member = await user("oa-member", "ghu_oamember00000000000000000000000", {
      [`${org}/lib`]: "write",
      [`${org}/app`]: "read",
    });
    await member(org, "oa-member", "member");
  });

  it("an active owner mints owner keys (user token or classic); pending owners and members cannot", async () => {
    const minted = await call("POST", `/v1/orgs/${org}/keys`, t.owner, { name: "fleet" });
    expect(minted.status).toBe(201);
    ownerKey = String(minted.body!.key);
    expect(ownerKey).toMatch(new RegExp(`^syk_o${repos[0]!.installationId}_`));
    expect(minted.body!.expiresAt).not.toBeNull();
    const classic = await call("POST", `/v1/orgs/${org}/keys`, t.ownerClassic, { name: "ci" });
    expect(classic.status).toBe(201);
    const pending = await call("POST", `/v1/orgs/${org}/keys`, t.pending, { name: "x" });
    expect(pending).toMatchObject({ status: 403, body: { error: "forbidden" } });
    expect(String(pending.body!.message)).toMatch(/pending, not active/);
    const asMember = await call("POST", `/v1/orgs/${org}/keys`, t.member, { name: "x" });
    expect(String(asMember.body!.message)).toMatch(/member of orgq-auth, not an owner/);
    // The key is shown once: listed without it, the creator and the mint audited.
    const listed = await call("GET", `/v1/orgs/${org}/keys`, ownerKey);
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(ownerKey);
    const audit = await ownerKeysObject(env, repos[0]!.installationId).auditLog(10);
    expect(
      audit
        .filter((a) => a.kind === "key-created")
        .map((a) => a.detail.by)
        .sort(),
    ).toEqual(["oa-classic", "oa-owner"]);
    expect(JSON.stringify(audit)).not.toContain(ownerKey);
    // An owner key cannot mint.
    expect((await call("POST", `/v1/orgs/${org}/keys`, ownerKey, { name: "y" })).status).toBe(403);
  });

  it("owner key: the queue and claims over every repository; a classic token cannot claim", async () => {
    const queue = await call("GET", `/v1/orgs/${org}/queue?limit=10`, ownerKey);
    expect(queue.status).toBe(200);
    const items = queue.body!.items as Array<{ repo: string; number: number }>;
    expect(new Set(items.map((i) => i.repo))).toEqual(new Set([`${org}/app`, `${org}/lib`]));
    const grant = await call("POST", `/v1/orgs/${org}/claims`, ownerKey, { agentId: "k1" });
    expect(grant.status).toBe(201);
    expect(grant.body).toMatchObject({
      repo: expect.stringMatching(/^orgq-auth\//),
      fence: expect.any(Number),
    });
    const listed = await call("GET", `/v1/orgs/${org}/claims`, ownerKey);
    await settleAll(repos);
    const live = await call("GET", `/v1/orgs/${org}/claims`, ownerKey);
    expect(listed.status).toBe(200);
    expect(live.body!.claims).toEqual([
      expect.objectContaining({ repo: grant.body!.repo, claimId: grant.body!.claimId }),
    ]);
    // The grant's repository routes take the owner key: heartbeat and release there.
    const fence = { claimId: grant.body!.claimId, fence: grant.body!.fence };
    const n = (grant.body!.issue as { number: number }).number;
    const base = `/v1/repos/${grant.body!.repo}/issues/${n}/claim`;
    expect((await call("POST", `${base}/heartbeat`, ownerKey, fence)).status).toBe(200);
    const released = await call("POST", `${base}/release`, ownerKey, {
      ...fence,
      outcome: "abandoned",
    });
    expect(released.status).toBe(200);
    const classic = await call("POST", `/v1/orgs/${org}/claims`, t.ownerClassic, { agentId: "c" });
    expect(classic.status).toBe(403);
    expect(String(classic.body!.message)).toMatch(/owner key/);
    expect((await call("GET", `/v1/orgs/${org}/keys`, t.ownerClassic)).status).toBe(200);
  });

  it("the typed org client: queue, claim-next, and the grant's repository for heartbeat and release", async () => {
    const client = new OrgFleetClient({
      server: "https://switchyard.test",
      owner: org,
      token: ownerKey,
      fetch: (input, init) => exports.default.fetch(input, init),
    });
    const queue = await client.queue({ limit: 2, order: "number" });
    expect(queue.items.length).toBeGreaterThan(0);
    const grant = await client.claimNext({ agentId: "typed-1" });
    expect(grant?.repo).toMatch(/^orgq-auth\//);
    const repoClient = client.forRepo(grant!.repo);
    const fence = { claimId: grant!.claimId, fence: grant!.fence };
    await repoClient.heartbeat(grant!.issue.number, fence);
    const released = await repoClient.release(grant!.issue.number, {
      ...fence,
      outcome: "abandoned",
    });
    expect(released).toMatchObject({ outcome: "abandoned" });
    const refused = await client.claimNext({ agentId: "x", kinds: [] }).catch((e: Error) => e);
    expect(String(refused)).toMatch(/kinds/);
  });

  it("switchyard's user token sees only the repositories it may push to", async () => {
    const queue = await call("GET", `/v1/orgs/${org}/queue`, t.member);
    expect(queue.status).toBe(200);
    const items = queue.body!.items as Array<{ repo: string }>;
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((i) => i.repo === `${org}/lib`)).toBe(true);
    const grant = await call("POST", `/v1/orgs/${org}/claims`, t.member, { agentId: "m1" });
    expect(grant).toMatchObject({ status: 201, body: { repo: `${org}/lib` } });
  });

  it("refuses repository keys and OIDC tokens (repository-scoped), bad, revoked, expired and other owners' keys", async () => {
    expect((await call("GET", `/v1/orgs/${org}/queue`)).status).toBe(401);
    const repoKey = await call("POST", `/v1/repos/${org}/app/keys`, t.owner, { name: "r" });
    expect(repoKey.status).toBe(201);
    const scoped = await call("GET", `/v1/orgs/${org}/queue`, String(repoKey.body!.key));
    expect(scoped.status).toBe(403);
    expect(String(scoped.body!.message)).toMatch(/repository-scoped/);
    const oidc = await sim<{ token: string }>("/oidc/token", {
      body: { repository: `${org}/app`, aud: "https://switchyard.test" },
    });
    const viaOidc = await call("POST", `/v1/orgs/${org}/claims`, oidc.token, { agentId: "o" });
    expect(viaOidc.status).toBe(403);
    expect(String(viaOidc.body!.message)).toMatch(/repository-scoped/);
    const forged = `syk_o${repos[0]!.installationId}_${"A".repeat(43)}`;
    expect((await call("GET", `/v1/orgs/${org}/queue`, forged)).status).toBe(401);

    // Revoked: refused at once.
    const second = await call("POST", `/v1/orgs/${org}/keys`, t.owner, { name: "short" });
    const id = String(second.body!.id);
    expect((await call("GET", `/v1/orgs/${org}/queue`, String(second.body!.key))).status).toBe(200);
    expect((await call("DELETE", `/v1/orgs/${org}/keys/${id}`, t.member)).status).toBe(403);
    expect((await call("DELETE", `/v1/orgs/${org}/keys/${id}`, t.owner)).status).toBe(204);
    const revoked = await call("GET", `/v1/orgs/${org}/queue`, String(second.body!.key));
    expect(revoked).toMatchObject({ status: 401, body: { message: "revoked owner key" } });

    // Expired: a key stored with an expiry already past (the store's path, as minting's).
    const { mintOwnerKey } = await import("../../shared/org/owner-keys.ts");
    const old = await mintOwnerKey(repos[0]!.installationId);
    await ownerKeysObject(env, repos[0]!.installationId).createKey({
      id: "expired-key",
      name: "old",
      hash: old.hash,
      installationId: repos[0]!.installationId,
      createdBy: "oa-owner",
      createdMs: Date.now() - 91 * 86_400_000,
      expiresMs: Date.now() - 86_400_000,
    });
    const expired = await call("GET", `/v1/orgs/${org}/queue`, old.key);
    expect(expired).toMatchObject({ status: 401, body: { message: "expired owner key" } });

    // Another owner's key.
    await installOrg([{ repo: "orgq-other/app", issues: [ready(1)] }]);
    const otherOwner = await user("oo-owner", "ghu_ooowner000000000000000000000000");
    await member("orgq-other", "oo-owner", "admin");
    const foreign = await call("POST", "/v1/orgs/orgq-other/keys", otherOwner, { name: "f" });
    expect(foreign.status).toBe(201);
    const crossed = await call("GET", `/v1/orgs/${org}/queue`, String(foreign.body!.key));
    expect(crossed.status).toBe(403);
  });

  it("names the missing members: read permission", async () => {
    const installationId = repos[0]!.installationId;
    await sim(`/installations/${installationId}/permissions`, {
      method: "PUT",
      body: { permissions: { members: null } },
    });
    try {
      const refused = await call("POST", `/v1/orgs/${org}/keys`, t.owner, { name: "z" });
      expect(refused.status).toBe(403);
      expect(String(refused.body!.message)).toMatch(/"members: read"/);
    } finally {
      await sim(`/installations/${installationId}/permissions`, {
        method: "PUT",
        body: { permissions: { members: "read" } },
      });
    }
  });
});

describe("an organization rename", () => {
  it("keeps the owner keys: they live with the installation, not under the login", async () => {
    const org = "orgq-ren";
    const renamed = "orgq-ren-new";
    const repos = await installOrg([{ repo: `${org}/app`, issues: [ready(1)] }]);
    const token = await user("ren-owner", "ghu_renowner000000000000000000000000");
    await member(org, "ren-owner", "admin");
    const minted = await call("POST", `/v1/orgs/${org}/keys`, token, { name: "fleet" });
    expect(minted.status).toBe(201);
    const key = String(minted.body!.key);
    // Before the rename reaches the new name, it is not installed there as far as switchyard knows.
    expect((await call("GET", `/v1/orgs/${renamed}/queue`, key)).status).toBe(403);
    // The repository, having read its new name, pushes its head to the new name's object (as
    // owner-push.ts does with the renamed identity).
    const [head] = await ownerObject(env, org).heads();
    const { pushedMs: _p, withdrawnMs: _w, ...pushed } = head!;
    expect(
      await ownerObject(env, renamed).push({
        ...pushed,
        fullName: `${renamed}/app`,
        version: pushed.version + 1,
      }),
    ).toBe("applied");
    // The key minted under the old name works under the new one: queue, claim, keys listed.
    const queue = await call("GET", `/v1/orgs/${renamed}/queue`, key);
    expect(queue.status).toBe(200);
    expect((queue.body!.items as Array<{ repo: string }>).map((i) => i.repo)).toEqual([
      `${renamed}/app`,
    ]);
    const grant = await call("POST", `/v1/orgs/${renamed}/claims`, key, { agentId: "r1" });
    expect(grant).toMatchObject({ status: 201, body: { issue: { number: 1 } } });
    const listed = await call("GET", `/v1/orgs/${renamed}/keys`, key);
    expect((listed.body!.keys as Array<{ id: string }>).map((k) => k.id)).toEqual([
      minted.body!.id,
    ]);
    // One key, whichever name: revoked (the simulator knows the organization by its old name
    // only, so its owner is proven there), refused under both.
    const revoke = await call("DELETE", `/v1/orgs/${org}/keys/${minted.body!.id}`, token);
    expect(revoke.status).toBe(204);
    expect((await call("GET", `/v1/orgs/${org}/queue`, key)).status).toBe(401);
    expect((await call("GET", `/v1/orgs/${renamed}/queue`, key)).status).toBe(401);
    expect(repos[0]!.installationId).toBe(pushed.installationId);
  });

  it("keys minted while they lived under the login are moved to the installation, not lost", async () => {
    const org = "orgq-legacy";
    const repos = await installOrg([{ repo: `${org}/app`, issues: [ready(1)] }]);
    const installationId = repos[0]!.installationId;
    const { mintOwnerKey } = await import("../../shared/org/owner-keys.ts");
    // As the login-named object stored keys before they moved (the same store, the same rows).
    const minted = await mintOwnerKey(installationId);
    await ownerObject(env, org).createKey({
      id: "legacy-key",
      name: "before the move",
      hash: minted.hash,
      installationId,
      createdBy: "legacy-owner",
      createdMs: Date.now(),
      expiresMs: Date.now() + 86_400_000,
    });
    expect((await ownerKeysObject(env, installationId).listKeys()).map((k) => k.id)).toEqual([]);
    // The first call with it finds it where it lives now (moved on the way), and so do the rest.
    expect((await call("GET", `/v1/orgs/${org}/queue`, minted.key)).status).toBe(200);
    const grant = await call("POST", `/v1/orgs/${org}/claims`, minted.key, { agentId: "l1" });
    expect(grant).toMatchObject({ status: 201, body: { repo: `${org}/app` } });
    expect((await ownerKeysObject(env, installationId).listKeys()).map((k) => k.id)).toEqual([
      "legacy-key",
    ]);
    expect(await ownerObject(env, org).listKeys()).toEqual([]);
    const audit = await ownerObject(env, org).auditLog(5);
    expect(audit.map((e: { kind: string }) => e.kind)).toContain("keys-moved");
  });
});

describe("removal fails closed", () => {
  async function ownerKeyFor(org: string, login: string) {
    const token = await user(login, `ghu_${login.replace(/-/g, "")}${"0".repeat(20)}`);
    await member(org, login, "admin");
    const minted = await call("POST", `/v1/orgs/${org}/keys`, token, { name: "fleet" });
    expect(minted.status).toBe(201);
    return String(minted.body!.key);
  }

  async function claimAll(org: string, key: string) {
    const repos: string[] = [];
    for (let i = 0; i < 6; i++) {
      const g = await call("POST", `/v1/orgs/${org}/claims`, key, { agentId: `r${i}` });
      if (g.status === 204) break;
      expect(g.status).toBe(201);
      repos.push(String(g.body!.repo));
    }
    return repos;
  }

  it("a repository removed from the installation leaves the owner's queue on receipt, before GitHub confirms", async () => {
    const org = "orgq-rm";
    const repos = await installOrg([
      { repo: `${org}/app`, issues: [ready(1)] },
      { repo: `${org}/lib`, issues: [ready(1), ready(2)] },
    ]);
    const key = await ownerKeyFor(org, "rm-owner");
    const installationId = repos[0]!.installationId;
    await sim(`/installations/${installationId}/repositories`, {
      body: { remove: ["lib"] },
    });
    const delivered = await deliverAll();
    expect(delivered.some((d) => d.event === "installation_repositories")).toBe(true);
    // Not confirmed yet (the InstallationObject's alarm has not run): the repository is still
    // installed as far as its own object knows, but out of the org queue.
    const lib = repos.find((r) => r.repo.endsWith("/lib"))!;
    expect((await lib.stub.identity())?.status).toBe("active");
    const queue = await call("GET", `/v1/orgs/${org}/queue`, key);
    expect((queue.body!.items as Array<{ repo: string }>).map((i) => i.repo)).toEqual([
      `${org}/app`,
    ]);
    expect(await claimAll(org, key)).toEqual([`${org}/app`]);
    // Confirmed: removed for good, and still out.
    await runDurableObjectAlarm(installationStub(installationId));
    expect((await lib.stub.identity())?.status).toBe("removed");
    const head = (await ownerObject(env, org).heads()).find((h) => h.repoId === lib.repoId);
    expect(head?.status).toBe("removed");
  });

  it("an owner key cannot claim in a repository transferred to another owner", async () => {
    const org = "orgq-tr";
    const repos = await installOrg([
      { repo: `${org}/app`, issues: [ready(1)] },
      { repo: `${org}/lib`, issues: [ready(1), ready(2)] },
    ]);
    const key = await ownerKeyFor(org, "tr-owner");
    const installationId = repos[0]!.installationId;
    const { id: newInstallation } = await sim<{ id: number }>("/installations", {
      body: { account: "orgq-tr-new", repositories: "all" },
    });
    await deliverAll();
    await runDurableObjectAlarm(installationStub(newInstallation));
    await sim(`/repos/${org}/lib/transfer`, { body: { to: "orgq-tr-new" } });
    await deliverAll();
    expect(await claimAll(org, key)).toEqual([`${org}/app`]);
    // Once the move is applied, the repository's own object refuses the old owner's grants too.
    await runDurableObjectAlarm(installationStub(installationId));
    await runDurableObjectAlarm(installationStub(newInstallation));
    const lib = repos.find((r) => r.repo.endsWith("/lib"))!;
    await settle(lib.stub);
    expect((await lib.stub.identity())?.installationId).toBe(newInstallation);
    const direct = await lib.stub.orgClaim(1, { agentId: "x" }, installationId);
    expect(direct.status).toBe(403);
    expect((await call("POST", `/v1/orgs/${org}/claims`, key, { agentId: "y" })).status).toBe(204);
    // Nor on the repository's own routes, now another owner's.
    const moved = await call("GET", "/v1/repos/orgq-tr-new/lib/queue", key);
    expect(moved.status).toBe(403);
    expect((await call("GET", `/v1/repos/${org}/app/queue`, key)).status).toBe(200);
  });
});

describe("a deletion GitHub denies", () => {
  it("withdraws the installation's repositories on receipt and restores them when GitHub says it still exists", async () => {
    const org = "orgq-replay";
    const repos = await installOrg([
      { repo: `${org}/app`, issues: [ready(1)] },
      { repo: `${org}/lib`, issues: [ready(1)] },
    ]);
    const installationId = repos[0]!.installationId;
    const [owner, name] = repos[0]!.repo.split("/") as [string, string];
    // A signed `installation.deleted` the installation never sent (GitHub still has it).
    const body = JSON.stringify({
      action: "deleted",
      installation: {
        id: installationId,
        account: { login: owner, id: 9, type: "Organization" },
        repository_selection: "all",
        app_id: 1,
        target_type: "Organization",
        permissions: {},
        events: [],
        created_at: "2026-11-01T00:00:00Z",
        updated_at: "2026-11-01T00:00:00Z",
        suspended_at: null,
      },
      repositories: [{ id: repos[0]!.repoId, name, full_name: repos[0]!.repo, private: false }],
      sender: { login: owner, id: 9, type: "User" },
    });
    const response = await postWebhook(
      {
        "x-github-event": "installation",
        "x-github-delivery": crypto.randomUUID(),
        "content-type": "application/json",
        "x-hub-signature-256": await signBody(WEBHOOK_SECRET, body),
      },
      body,
    );
    expect(response.status).toBe(200);
    const heads = () => ownerObject(env, org).heads();
    expect((await heads()).every((h) => h.withdrawnMs !== null)).toBe(true);
    await runDurableObjectAlarm(installationStub(installationId));
    expect((await heads()).every((h) => h.withdrawnMs === null)).toBe(true);
    expect((await repos[0]!.stub.identity())?.status).toBe("active");
  });
});
