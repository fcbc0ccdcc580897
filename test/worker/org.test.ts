// The org queue (issue 23): each RepoObject pushes its queue's head to its owner's object, the
// owner picks for a caller and lets the repository's own object grant. Real workerd, real DO
// SQLite, the simulator as GitHub.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { ownerObject } from "../../functions/objects/owner/owner-object.ts";
import type { SnapshotInput } from "../../shared/graph/snapshot.ts";
import { deliverAll, installationStub, repoStub, seed, seedIssue, settle, sim } from "./helpers.ts";

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
