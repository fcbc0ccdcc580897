// The fleet API's claims inside the RepoObject, on real SQLite storage, with the simulator as
// GitHub: grants and conflicts, heartbeats, releases, expiry by alarm, fences, the dead letter,
// limits, IDD mirroring both ways, and eviction.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { InstallationObject } from "../../functions/objects/installation/installation-object.ts";
import { ClaimsStore } from "../../functions/objects/repo/claims-store.ts";
import type { RepoContext } from "../../functions/objects/repo/context.ts";
import { fencedWrite } from "../../functions/objects/repo/fenced-write.ts";
import { performOwed } from "../../functions/objects/repo/fleet-writes.ts";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import type { Sql } from "../../functions/objects/sql.ts";
import { RELEASE_BEFORE_CLAIM_GAP_MS } from "../../shared/claims/owed.ts";
import { parseWriteMarker, withWriteMarker } from "../../shared/claims/write-records.ts";
import { DEFAULT_CONFIG } from "../../shared/config/schema.ts";
import type { GitHubClient } from "../../shared/github/client.ts";
import { liveHolder, resolveClaims } from "../../shared/idd/claims.ts";
import { parseCommentMarker, renderUnclaimedBy } from "../../shared/idd/comment-markers.ts";
import {
  deliverAll,
  install,
  installationStub,
  labelsOf,
  type repoStub,
  seed,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";

type Stub = ReturnType<typeof repoStub>;
type Grant = { claimId: string; fence: number; expiresAt: string; branch: string };

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

async function settleAll(stub: Stub) {
  for (let i = 0; i < 3; i++) {
    await deliverAll();
    await settle(stub);
  }
}

async function comments(repo: string, number: number): Promise<string[]> {
  const list = await sim<Array<{ body: string }>>(`/repos/${repo}/issues/${number}/comments`);
  return list.map((c) => c.body);
}

/** A marker comment's kind and agent ("claimed-by agent-a"), undefined for other comments. */
const markerWho = (body: string) => /^<!-- ([a-z-]+): (\S+)/.exec(body)?.slice(1).join(" ");

/** The holder's text of each comment: a fenced comment ends with its write marker. */
async function texts(repo: string, number: number): Promise<string[]> {
  return (await comments(repo, number)).map((b) =>
    parseWriteMarker(b) === null ? b : b.slice(0, b.lastIndexOf("\n\n<!--")),
  );
}

async function grant(stub: Stub, n: number | null, agentId: string, extra = {}, nowMs?: number) {
  const result = await stub.claim(n, { agentId, ...extra }, nowMs);
  return result as {
    status: number;
    body: Grant & { issue: { number: number } } & Record<string, unknown>;
  };
}

const ready = (n: number, extra = {}) => seedIssue(n, { labels: ["agent:ready"], ...extra });

/** The installation's write budget has room for `room` more writes now. */
const setBudgetRoom = (installationId: number, room: number) =>
  runInDurableObject(installationStub(installationId), (o: InstallationObject, state) => {
    o.reserveWritesUpTo(100_000);
    state.storage.sql.exec(
      "DELETE FROM writes WHERE rowid IN (SELECT rowid FROM writes ORDER BY at_ms DESC LIMIT ?)",
      room,
    );
  });

/** The RepoObject's context (what its RPC methods run on). */
const contextOf = (o: RepoObject) => (o as unknown as { c: RepoContext }).c;

/** The alarm's `fleet` schedule runs now (the flush of the writes owed for the fleet). */
async function flushNow(stub: Stub) {
  await runInDurableObject(stub, async (o: RepoObject) => {
    o.schedules.at("fleet", Date.now());
    await o.schedules.rearm();
  });
  await runDurableObjectAlarm(stub);
}

/**
 * A holds #1 with its claimed-by posted; then, with the write budget spent, A releases #1 and B
 * is granted #1 (mirrored by the flush, as where no IDD agent works): A's unclaimed-by and B's
 * claimed-by are both owed, and a flush the runtime fires meanwhile finds no room.
 */
async function releasedThenRegranted(
  stub: Stub,
  installationId: number,
  kinds: (n: number) => Promise<unknown[]>,
) {
  const a = (await grant(stub, 1, "agent-a")).body;
  await settleAll(stub);
  expect(await kinds(1)).toEqual(["claimed-by agent-a"]);
  await setBudgetRoom(installationId, 0);
  await stub.release(1, { claimId: a.claimId, fence: a.fence, outcome: "abandoned" });
  expect((await grant(stub, 1, "agent-b")).status).toBe(201);
  return a;
}

/**
 * The second after an issue's last `unclaimed-by` passes, and the flush runs: a `claimed-by` it
 * held back for that gap is posted. Real time: the gap is kept on GitHub's clock (the created_at
 * of the comments), which moves at the rate of ours; the alarm itself does not wait for it.
 */
async function releaseGapOver(stub: Stub) {
  await settleAll(stub);
  const dueMs = await runInDurableObject(
    stub,
    (o: RepoObject) => o.schedules.list().find((s) => s.name === "fleet")?.dueMs,
  );
  if (dueMs === undefined) return;
  // GitHub's clock, not an alarm, is what the gap waits for; the schedule may already be due
  // when read on a loaded machine, so the flush is settled again in any case.
  const waitMs = Math.min(Math.max(0, dueMs - Date.now()), RELEASE_BEFORE_CLAIM_GAP_MS);
  if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  await settleAll(stub);
}

describe("claims", () => {
  it("grants one holder; a second claim conflicts and names the holder; heartbeat extends; release frees", async () => {
    const { stub } = await install({ repo: "claims-basic/app", issues: [ready(1), ready(2)] });
    const first = await grant(stub, 1, "agent-a");
    expect(first.status).toBe(201);
    expect(first.body.branch).toBe("issue/1-issue-1");
    expect(first.body.claimId).toMatch(/^sy-[0-9a-f]{20}$/);

    const second = await grant(stub, 1, "agent-b");
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({
      error: "conflict",
      reason: "held",
      holder: { agentId: "agent-a", source: "switchyard", expiresAt: first.body.expiresAt },
    });

    const later = Date.now() + 60_000;
    const beat = await stub.heartbeat(
      1,
      { claimId: first.body.claimId, fence: first.body.fence },
      later,
    );
    expect(beat.status).toBe(200);
    expect(Date.parse((beat.body as Grant).expiresAt)).toBeGreaterThan(
      Date.parse(first.body.expiresAt),
    );

    const done = await stub.release(1, {
      claimId: first.body.claimId,
      fence: first.body.fence,
      outcome: "abandoned",
    });
    expect(done.status).toBe(200);
    const again = await grant(stub, 1, "agent-b");
    expect(again.status).toBe(201);
    expect(again.body.fence).toBeGreaterThan(first.body.fence);
  });

  it("a stale or unknown fence is refused on heartbeat, release and writes, and changes nothing", async () => {
    const { stub, repo } = await install({ repo: "claims-stale/app", issues: [ready(1)] });
    const g = (await grant(stub, 1, "agent-a")).body;
    const wrong = { claimId: g.claimId, fence: g.fence + 1 };
    const unknown = { claimId: "sy-00000000000000000000", fence: g.fence };
    for (const fence of [wrong, unknown]) {
      expect((await stub.heartbeat(1, fence)).status).toBe(409);
      expect((await stub.release(1, { ...fence, outcome: "done" })).status).toBe(409);
      const write = await stub.write(1, fence, { kind: "comment", body: `stale ${fence.fence}` });
      expect(write).toMatchObject({ status: 409, body: { error: "stale-fence" } });
    }
    // The right fence on the wrong issue is stale too.
    expect((await stub.heartbeat(2, { claimId: g.claimId, fence: g.fence })).status).toBe(409);
    expect((await comments(repo, 1)).filter((b) => b.startsWith("stale"))).toEqual([]);
    expect((await stub.liveClaims()).body).toMatchObject({ claims: [{ claimId: g.claimId }] });
  });

  it("expires by alarm; the expired fence is dead for good and the next claim gets a larger one", async () => {
    const { stub } = await install({ repo: "claims-expiry/app", issues: [ready(1)] });
    // Granted two minutes ago with the shortest TTL: expired one minute ago.
    const old = (await grant(stub, 1, "agent-a", { ttlSeconds: 60 }, Date.now() - 120_000)).body;
    await runDurableObjectAlarm(stub);
    const audit = await stub.auditLog(20);
    expect(audit.some((a) => a.kind === "claim-expired")).toBe(true);
    expect((await stub.heartbeat(1, { claimId: old.claimId, fence: old.fence })).status).toBe(409);
    const next = await grant(stub, 1, "agent-b");
    expect(next.status).toBe(201);
    expect(next.body.fence).toBeGreaterThan(old.fence);
  });

  it("a claim is dead at expiresAt even before the alarm runs", async () => {
    const { stub } = await install({ repo: "claims-dead/app", issues: [ready(1)] });
    const g = (await grant(stub, 1, "agent-a", { ttlSeconds: 60 })).body;
    const expires = Date.parse(g.expiresAt);
    expect((await stub.heartbeat(1, g, expires - 1)).status).toBe(200);
    const g2 = (await stub.liveClaims(expires + 60_000)).body as { claims: unknown[] };
    expect(g2.claims).toEqual([]);
    expect((await grant(stub, 1, "agent-b", {}, Date.parse(g.expiresAt) + 60_001)).status).toBe(
      201,
    );
  });

  it("claims survive eviction between grant and heartbeat", async () => {
    const { stub } = await install({ repo: "claims-evict/app", issues: [ready(1)] });
    const g = (await grant(stub, 1, "agent-a")).body;
    await evictDurableObject(stub);
    expect((await stub.heartbeat(1, g)).status).toBe(200);
    expect((await grant(stub, 1, "agent-b")).status).toBe(409);
  });

  it("refuses closed, held, epic, blocked and unknown issues with their reasons", async () => {
    const { stub } = await install({
      repo: "claims-reasons/app",
      issues: [
        seedIssue(1, {
          state: "closed",
          stateReason: "completed",
          closedAt: "2026-11-01T00:00:00Z",
        }),
        seedIssue(2, { labels: ["agent:hold"] }),
        seedIssue(3, { labels: ["epic-managed"] }),
        seedIssue(4, { blockedBy: [5] }),
        seedIssue(5),
        seedIssue(6),
        seedIssue(7, { parent: 6 }),
      ],
    });
    const reasons: Record<number, string> = {
      1: "closed",
      2: "hold",
      3: "epic",
      4: "blocked",
      6: "blocked",
    };
    for (const [n, reason] of Object.entries(reasons)) {
      const r = await grant(stub, Number(n), "agent-a");
      expect([n, r.status, r.body.reason]).toEqual([n, 409, reason]);
    }
    expect((await grant(stub, 99, "agent-a")).status).toBe(404);
    // Not labeled ready, but claimable on request: open, unblocked, no open sub-issues.
    expect((await grant(stub, 5, "agent-a")).status).toBe(201);
  });

  it("claim-next hands N agents N different issues, then 204", async () => {
    const { stub } = await install({
      repo: "claims-next/app",
      issues: [1, 2, 3, 4, 5].map((n) => ready(n)),
    });
    const grants = await Promise.all(
      Array.from({ length: 7 }, (_, i) => grant(stub, null, `agent-${i}`, { machine: `m${i}` })),
    );
    const issued = grants.filter((g) => g.status === 201).map((g) => g.body.issue.number);
    expect(issued.sort()).toEqual([1, 2, 3, 4, 5]);
    expect(grants.filter((g) => g.status === 204)).toHaveLength(2);
    const fences = grants.filter((g) => g.status === 201).map((g) => g.body.fence);
    expect(new Set(fences).size).toBe(5);
  });

  it("per-agent and per-repository limits", async () => {
    const { stub } = await install(
      { repo: "claims-limits/app", issues: [1, 2, 3, 4].map((n) => ready(n)) },
      {
        ".github/switchyard.yml": "claims:\n  maxPerAgent: 1\n  maxActive: 2\n",
      },
    );
    expect((await grant(stub, 1, "agent-a")).status).toBe(201);
    expect((await grant(stub, 2, "agent-a")).body.reason).toBe("agent-limit");
    expect((await grant(stub, null, "agent-a")).body.reason).toBe("agent-limit");
    expect((await grant(stub, 2, "agent-b")).status).toBe(201);
    expect((await grant(stub, 3, "agent-c")).body.reason).toBe("repo-limit");
  });
});

describe("the claims table's reads", () => {
  it("read open claims and owed markers through indexes of those rows, never the whole history", async () => {
    // Ordered by fence, these reads used to walk every claim ever kept through the fence's
    // unique index: a claim and its release read the repository's whole claims history.
    const { stub } = await install({ repo: "claims-plans/app", issues: [ready(1)] });
    const plans = await runInDurableObject(stub, (_o: RepoObject, state) => {
      const details: string[] = [];
      const sql: Sql = (strings, ...values) => {
        const query = strings.join("?");
        const plan = state.storage.sql.exec(`EXPLAIN QUERY PLAN ${query}`, ...values).toArray();
        for (const row of plan) details.push(String(row.detail));
        // biome-ignore lint/suspicious/noExplicitAny: rows as the store declares them
        return state.storage.sql.exec<any>(query, ...values).toArray();
      };
      const store = new ClaimsStore(sql);
      const now = Date.now();
      store.open();
      store.live(now);
      store.liveOn(1, now);
      store.expiredOpen(now);
      store.verifyDue(now);
      store.markersDue();
      store.nextExpiryMs();
      store.nextVerifyMs();
      store.liveCount(now);
      store.liveCount(now, "agent-a");
      return details.filter((d) => /\bclaims\b/.test(d));
    });
    expect(plans.length).toBeGreaterThan(0);
    // A search by key, or a scan of an index that holds only open claims or owed markers.
    const partial = /USING (COVERING )?INDEX claims_(live|open|open_by_issue|markers_due)\b/;
    expect(plans.filter((d) => !d.startsWith("SEARCH") && !partial.test(d))).toEqual([]);
  });
});

describe("releases and the dead letter", () => {
  it("done removes agent:ready and keeps the issue out of the queue until it is kicked again", async () => {
    const { stub, repo } = await install({
      repo: "release-done/app",
      issues: [ready(1), ready(2), seedIssue(3)],
    });
    const g = (await grant(stub, 1, "agent-a")).body;
    await stub.release(1, { claimId: g.claimId, fence: g.fence, outcome: "done" });
    await settleAll(stub);
    expect(await labelsOf(repo, 1)).not.toContain("agent:ready");
    const queue = (await stub.workQueue({ limit: 20 })).body as {
      items: Array<{ number: number }>;
    };
    expect(queue.items.map((i) => i.number)).toEqual([2]);
  });

  it("three failed attempts: stuck label, one comment listing them, out of the queue; removing the label brings it back", async () => {
    const { stub, repo } = await install({ repo: "release-stuck/app", issues: [ready(1)] });
    for (const [i, outcome] of (["failed", "abandoned", "failed"] as const).entries()) {
      const g = (await grant(stub, 1, `agent-${i}`)).body;
      expect(g.fence).toBeGreaterThan(0);
      await stub.release(1, { claimId: g.claimId, fence: g.fence, outcome, note: `try ${i}` });
    }
    expect((await grant(stub, 1, "agent-x")).body.reason).toBe("stuck");
    await settleAll(stub);
    const labels = await labelsOf(repo, 1);
    expect(labels).toContain("agent:stuck");
    expect(labels).not.toContain("agent:ready");
    const stuckComments = (await comments(repo, 1)).filter((b) =>
      b.includes("out of the agent queue"),
    );
    expect(stuckComments).toHaveLength(1);
    expect(stuckComments[0]).toContain("try 0");
    expect(stuckComments[0]).toContain("`agent-2` | failed");
    expect(((await stub.workQueue({ limit: 20 })).body as { items: unknown[] }).items).toEqual([]);
    // The webhooks of switchyard's own label writes (issued the same second, listing the issue
    // before the stuck label went on) are not a person removing it: still stuck.
    await settleAll(stub);
    expect((await grant(stub, 1, "agent-x")).body.reason).toBe("stuck");

    // A maintainer removes the label: attempts reset, agent:ready comes back, claimable again.
    await sim(`/repos/${repo}/issues/1/labels/agent:stuck`, {
      method: "DELETE",
      body: { actor: "octocat" },
    });
    await settleAll(stub);
    await settleAll(stub);
    expect(await labelsOf(repo, 1)).toContain("agent:ready");
    const queue = (await stub.workQueue({ limit: 20 })).body as {
      items: Array<{ number: number; attempts: number }>;
    };
    expect(queue.items).toMatchObject([{ number: 1, attempts: 0 }]);
    expect((await grant(stub, 1, "agent-y")).status).toBe(201);
  });

  it("the fence keeps growing across uninstall and reinstall", async () => {
    const { stub, installationId } = await install({
      repo: "fence-reinstall/app",
      issues: [ready(1)],
    });
    const before = (await grant(stub, 1, "agent-a")).body.fence;
    await sim(`/installations/${installationId}`, { method: "DELETE", body: { actor: "octocat" } });
    await deliverAll();
    await runDurableObjectAlarm(installationStub(installationId));
    expect((await stub.status()).status).toBe("removed");
    expect((await stub.liveClaims()).status).toBe(404);
    const again = await sim<{ id: number }>("/installations", {
      body: { account: "fence-reinstall", actor: "octocat" },
    });
    await deliverAll();
    await runDurableObjectAlarm(installationStub(again.id));
    await settleAll(stub);
    const after = await grant(stub, 1, "agent-b");
    expect(after.status).toBe(201);
    expect(after.body.fence).toBeGreaterThan(before);
  });

  it("a restored backup (the fence counter set back) never hands out a fence at or below one handed out before", async () => {
    const { stub } = await install({ repo: "fence-restore/app", issues: [ready(1)] });
    const t0 = Date.now();
    const first = await grant(stub, 1, "agent-a", {}, t0);
    expect(first.status).toBe(201);
    // The backup predates every grant: the counter and the claim are as if never made.
    await runInDurableObject(stub, (_o: RepoObject, state: DurableObjectState) => {
      state.storage.sql.exec("DELETE FROM claims");
      state.storage.sql.exec("UPDATE fence SET value = 0");
    });
    // Restoring takes a while: the next grant is seconds later.
    const later = await grant(stub, 1, "agent-b", {}, t0 + 2_000);
    expect(later.status).toBe(201);
    expect(later.body.fence).toBeGreaterThan(first.body.fence);
    expect(Number.isSafeInteger(later.body.fence)).toBe(true);
  });
});

describe("IDD interop", () => {
  afterEach(async () => {
    await sim("/faults", { method: "DELETE" });
  });
  const marker = (agent: string, claim: string, at: string) =>
    `<!-- claimed-by: ${agent} ${claim} supersedes: none ${at} branch: issue/1-x -->`;
  const nowSecond = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

  /**
   * A repository where IDD agents work (synchronous mirroring): `issues` installed on `name`/app,
   * and a trusted IDD agent's marker on #3 (posted by a user with write access), delivered.
   */
  async function iddRepo(name: string, issues: Parameters<typeof install>[0]["issues"]) {
    const installed = await install({ repo: `${name}/app`, issues });
    await sim("/users", {
      body: { login: "writer", token: `tok-${name}`, repos: { [installed.repo]: "write" } },
    });
    await sim(`/repos/${installed.repo}/issues/3/comments`, {
      body: { body: marker("idd-bot", "c-3", nowSecond()), actor: "writer" },
    });
    await deliverAll();
    return installed;
  }

  it("mirrors a grant as a claimed-by marker plus agent:processing, and the release as unclaimed-by", async () => {
    const { stub, repo } = await install({ repo: "idd-mirror/app", issues: [ready(1)] });
    const g = (await grant(stub, 1, "agent-a")).body;
    await settleAll(stub);
    let bodies = await comments(repo, 1);
    expect(bodies.filter((b) => b.startsWith("<!-- claimed-by: agent-a"))).toHaveLength(1);
    expect(bodies[0]).toContain(`${g.claimId} supersedes: none`);
    expect(bodies[0]).toContain(`branch: ${g.branch}`);
    // The mirrored marker reads back through shared/idd as the same claim.
    const read = parseCommentMarker(bodies[0]!);
    expect(read).toMatchObject({
      status: "ok",
      marker: { kind: "claimed-by", agentId: "agent-a", claimId: g.claimId, branch: g.branch },
    });
    expect(await labelsOf(repo, 1)).toContain("agent:processing");
    // switchyard's own marker does not block the holder's heartbeat, nor count as an IDD holder.
    expect((await stub.heartbeat(1, g)).status).toBe(200);
    await stub.release(1, { claimId: g.claimId, fence: g.fence, outcome: "abandoned" });
    await settleAll(stub);
    bodies = await comments(repo, 1);
    expect(
      bodies.filter((b) => b.startsWith(`<!-- unclaimed-by: agent-a ${g.claimId}`)),
    ).toHaveLength(1);
    expect(await labelsOf(repo, 1)).not.toContain("agent:processing");
    // Its own (released) markers never block the next grant.
    expect((await grant(stub, 1, "agent-b")).status).toBe(201);
  });

  it("renews agent:processing before it goes stale while the claim lives on", async () => {
    const { stub, repo } = await install({ repo: "idd-renew/app", issues: [ready(1)] });
    const g = (await grant(stub, 1, "agent-a", { ttlSeconds: 7200 })).body;
    await settleAll(stub);
    expect(await labelsOf(repo, 1)).toContain("agent:processing");
    // The label went on 25 minutes ago (the lock TTL is 30): it is due for renewal.
    await runInDurableObject(stub, (o: RepoObject) => {
      o.store.claims.setProcessingMs(1, Date.now() - 25 * 60_000);
      o.schedules.at("fleet", Date.now());
    });
    await settleAll(stub);
    const renewals = (await stub.auditLog(50)).filter(
      (a) => a.kind === "fleet-write" && a.detail.kind === "processing-renew",
    );
    expect(renewals).toHaveLength(1);
    expect(await labelsOf(repo, 1)).toContain("agent:processing");
    const processingMs = await runInDurableObject(
      stub,
      (o: RepoObject) => o.store.claims.fleet(1).processingMs,
    );
    expect(processingMs).toBeGreaterThan(Date.now() - 60_000);
    expect((await stub.heartbeat(1, g)).status).toBe(200);
  });

  it("a claim granted and released before the flush posts nothing", async () => {
    const { stub, repo } = await install({ repo: "idd-coalesce/app", issues: [ready(1)] });
    for (let i = 0; i < 5; i++) {
      const g = (await grant(stub, 1, `agent-${i}`)).body;
      await stub.release(1, { claimId: g.claimId, fence: g.fence, outcome: "abandoned" });
      if (i === 1) break; // two abandoned attempts stay below the dead letter
    }
    await settleAll(stub);
    expect((await comments(repo, 1)).filter((b) => b.includes("claimed-by"))).toEqual([]);
    expect(await labelsOf(repo, 1)).not.toContain("agent:processing");
  });

  it("switchyard's own mirror writes never hold a grant back; the processing label is not taken off under a newer grant", async () => {
    const { stub, repo } = await install({ repo: "idd-mirror-fence/app", issues: [ready(1)] });
    const a = (await grant(stub, 1, "agent-a")).body;
    await settleAll(stub);
    expect(await labelsOf(repo, 1)).toContain("agent:processing");
    await stub.release(1, { claimId: a.claimId, fence: a.fence, outcome: "abandoned" });
    // GitHub sits on A's unclaimed-by marker.
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [{ method: "POST", path: `/repos/${repo}/issues/1/comments`, delayMs: 800 }],
      },
    });
    const flushing = runDurableObjectAlarm(stub);
    for (let i = 0; i < 400 && (await sim<{ requests: number }>("/faults")).requests > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // No write record for a mirror write: B is granted while it is in flight.
    const b = await grant(stub, 1, "agent-b");
    expect(b.status).toBe(201);
    await flushing;
    // B's claimed-by goes a full second after A's unclaimed-by (IDD reads a second's claims first).
    await releaseGapOver(stub);
    const markers = (await comments(repo, 1)).filter((body) => body.includes("claimed-by"));
    expect(markers.map(markerWho)).toEqual([
      "claimed-by agent-a",
      "unclaimed-by agent-a",
      "claimed-by agent-b",
    ]);
    // The processing label A's end would have taken off was never removed: B holds the issue.
    expect(await labelsOf(repo, 1)).toContain("agent:processing");
    const writes = (await stub.auditLog(100)).filter((e) => e.kind === "fleet-write");
    expect(writes.some((e) => (e.detail as { kind: string }).kind === "processing-remove")).toBe(
      false,
    );
  });

  it("where IDD agents work, a grant posts the previous claim's owed unclaimed-by before its own marker, so IDD's reading names the new holder", async () => {
    const { stub, repo } = await iddRepo("idd-sync-order", [ready(1), ready(3)]);
    const a = (await grant(stub, 1, "agent-a")).body;
    await stub.release(1, { claimId: a.claimId, fence: a.fence, outcome: "abandoned" });
    // GitHub sits on A's unclaimed-by (the alarm's flush): B asks for #1 meanwhile.
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [{ method: "POST", path: `/repos/${repo}/issues/1/comments`, delayMs: 800 }],
      },
    });
    const flushing = runDurableObjectAlarm(stub);
    for (let i = 0; i < 400 && (await sim<{ requests: number }>("/faults")).requests > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Not held back by A's mirror write, and its marker posted before the answer...
    const b = await grant(stub, 1, "agent-b");
    expect(b.status).toBe(201);
    await flushing;
    await settleAll(stub);
    const list = await sim<Array<{ id: number; body: string; created_at: string; user: string }>>(
      `/repos/${repo}/issues/1/comments`,
    );
    const kinds = list.map((c) => markerWho(c.body));
    // ...after A's owed unclaimed-by, posted once: the grant waits for the alarm's post in
    // flight instead of sending it again (regression), and in a later second: IDD reads a
    // second's claims before its releases.
    const released = kinds.indexOf("unclaimed-by agent-a");
    const claimedB = kinds.indexOf("claimed-by agent-b");
    expect(kinds[0]).toBe("claimed-by agent-a");
    expect(kinds.filter((k) => k === "unclaimed-by agent-a")).toHaveLength(1);
    expect(kinds.filter((k) => k === "claimed-by agent-b")).toHaveLength(1);
    expect(released).toBeGreaterThan(0);
    expect(claimedB).toBeGreaterThan(released);
    expect(Date.parse(list[claimedB]!.created_at)).toBeGreaterThan(
      Date.parse(list[released]!.created_at),
    );
    const reading = resolveClaims(
      list.map((c) => ({
        id: c.id,
        createdAt: c.created_at,
        author: { login: c.user, type: c.user.endsWith("[bot]") ? "Bot" : "User" },
        body: c.body,
      })),
      { now: nowSecond(), staleHours: 24, trusted: ["writer", list[0]!.user] },
    );
    expect(liveHolder(reading)).toMatchObject({ agentId: "agent-b", claimId: b.body.claimId });
    expect((await stub.heartbeat(1, b.body)).status).toBe(200);
  });

  it("where IDD agents work, other issues' owed unclaimed-by markers take the write budget before a new grant's marker", async () => {
    const { stub, repo, installationId } = await iddRepo("idd-sync-debt", [
      ready(1),
      ready(2),
      ready(3),
      ready(4),
      ready(5),
    ]);
    const budgetRoom = (room: number) => setBudgetRoom(installationId, room);
    const kinds = async (n: number) => (await comments(repo, n)).map(markerWho);

    const a = (await grant(stub, 1, "agent-a")).body;
    expect(await kinds(1)).toEqual(["claimed-by agent-a"]);
    // The budget is spent when A releases #1: its unclaimed-by is owed.
    await budgetRoom(0);
    expect(
      (await stub.release(1, { claimId: a.claimId, fence: a.fence, outcome: "abandoned" })).status,
    ).toBe(200);
    // The alarm's flush finds no room and waits for the budget's next slot (a minute away).
    await runDurableObjectAlarm(stub);

    // Room for one write: it goes to A's release, and B's grant of #2 waits.
    await budgetRoom(1);
    const waiting = await stub.claim(2, { agentId: "agent-b" });
    expect(waiting).toMatchObject({
      status: 503,
      body: {
        reason: "mirror-failed",
        message: expect.stringMatching(/unclaimed-by markers of 1 earlier claim\(s\) go first/),
      },
    });
    expect(Number(waiting.headers?.["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(await kinds(1)).toEqual(["claimed-by agent-a", "unclaimed-by agent-a"]);
    expect(await kinds(2)).toEqual([]);

    // #1 granted at once: its marker still lands in a later second than the release another
    // grant posted (IDD reads a second's claims before its releases).
    await budgetRoom(1);
    expect((await grant(stub, 1, "agent-e")).status).toBe(201);
    const on1 = await sim<Array<{ body: string; created_at: string }>>(
      `/repos/${repo}/issues/1/comments`,
    );
    expect(on1.map((c) => markerWho(c.body))).toEqual([
      "claimed-by agent-a",
      "unclaimed-by agent-a",
      "claimed-by agent-e",
    ]);
    expect(Date.parse(on1[2]!.created_at)).toBeGreaterThan(Date.parse(on1[1]!.created_at));

    // Room for one more: nothing is owed now, and B's grant posts its marker.
    await budgetRoom(1);
    const b = await grant(stub, 2, "agent-b");
    expect(b.status).toBe(201);
    expect(await kinds(2)).toEqual(["claimed-by agent-b"]);
    // A's release was posted once, not again by the alarm's flush.
    await settleAll(stub);
    expect(await kinds(1)).toEqual([
      "claimed-by agent-a",
      "unclaimed-by agent-a",
      "claimed-by agent-e",
    ]);

    // Two grants at once, one owed release: one of them takes it, the other does not reserve
    // room for it too, so room for three writes is enough for both.
    await budgetRoom(0);
    const bFence = { claimId: b.body.claimId, fence: b.body.fence };
    expect((await stub.release(2, { ...bFence, outcome: "abandoned" })).status).toBe(200);
    await runDurableObjectAlarm(stub);
    await budgetRoom(3);
    const both = await Promise.all([
      stub.claim(5, { agentId: "agent-c" }),
      stub.claim(4, { agentId: "agent-d" }),
    ]);
    expect(both.map((r) => r.status)).toEqual([201, 201]);
    expect(await kinds(2)).toEqual(["claimed-by agent-b", "unclaimed-by agent-b"]);
    // Nor by a path that read it as owed before it was posted (the flush and a grant each wait
    // for the budget and GitHub between reading what is owed and posting it): GitHub is not asked.
    await runInDurableObject(stub, async (o: RepoObject) => {
      const c = contextOf(o);
      const asked: string[] = [];
      const github = new Proxy({} as GitHubClient, {
        get(_, prop) {
          asked.push(String(prop));
          throw new Error("GitHub must not be asked");
        },
      });
      const claim = { ...c.store.claims.get(a.claimId)!, marker: "posted" as const };
      await performOwed(
        c.owed,
        { kind: "unclaimed-marker", claim },
        github,
        repo,
        DEFAULT_CONFIG.labels,
      );
      expect(asked).toEqual([]);
    });
  });

  it("while a grant posts an issue's owed unclaimed-by, the alarm's flush posts no marker of that issue, so a later claim's claimed-by lands after it", async () => {
    const { stub, repo, installationId } = await install({
      repo: "idd-flush-order/app",
      issues: [ready(1), ready(2)],
    });
    const kinds = async (n: number) => (await comments(repo, n)).map(markerWho);
    const a = await releasedThenRegranted(stub, installationId, kinds);
    // A synchronous grant of #2 takes A's release to post it first, and is held there.
    let taken: ReturnType<RepoContext["owed"]["takeReleasesBefore"]> | undefined;
    await runInDurableObject(stub, (o: RepoObject) => {
      taken = contextOf(o).owed.takeReleasesBefore(2, Date.now());
    });
    expect(taken!.writes).toMatchObject([
      { kind: "unclaimed-marker", claim: { claimId: a.claimId } },
    ]);
    // The flush, with room now, leaves every marker of #1 to the grant's release: B's
    // claimed-by before A's unclaimed-by would read as a claim made while A still holds #1
    // (IDD ignores it).
    await setBudgetRoom(installationId, 10);
    await flushNow(stub);
    expect(await kinds(1)).toEqual(["claimed-by agent-a"]);
    // The grant posts A's release and hands it back; the next flush posts B's marker after it.
    await runInDurableObject(stub, async (o: RepoObject) => {
      const c = contextOf(o);
      for (const w of taken!.writes) {
        await performOwed(
          c.owed,
          w,
          c.client("test: the grant's release"),
          repo,
          DEFAULT_CONFIG.labels,
        );
      }
      taken!.give();
      await c.schedules.rearm();
    });
    await releaseGapOver(stub);
    expect(await kinds(1)).toEqual([
      "claimed-by agent-a",
      "unclaimed-by agent-a",
      "claimed-by agent-b",
    ]);
  });

  it("the alarm's flush posts a later claim's claimed-by in a later second than the issue's unclaimed-by it posted just before", async () => {
    const { stub, repo, installationId } = await install({
      repo: "idd-flush-gap/app",
      issues: [ready(1)],
    });
    const kinds = async (n: number) => (await comments(repo, n)).map(markerWho);
    await releasedThenRegranted(stub, installationId, kinds);
    // GitHub's clock stands still while the flush runs: what it posts back to back lands in one
    // second (as it mostly does anyway), and B's claimed-by would be read while A held #1.
    await sim("/clock", { body: { now: new Date().toISOString() } });
    await setBudgetRoom(installationId, 10);
    await flushNow(stub);
    await sim("/clock", { body: { now: null } });
    await releaseGapOver(stub);
    const list = await sim<Array<{ body: string; created_at: string }>>(
      `/repos/${repo}/issues/1/comments`,
    );
    expect(list.map((c) => markerWho(c.body))).toEqual([
      "claimed-by agent-a",
      "unclaimed-by agent-a",
      "claimed-by agent-b",
    ]);
    expect(Date.parse(list[2]!.created_at)).toBeGreaterThan(Date.parse(list[1]!.created_at));
  });

  /** Time passes until every claim's verification is due, and the alarm runs. */
  async function verificationsDue(stub: Stub) {
    await runInDurableObject(stub, async (o: RepoObject) => {
      const now = Date.now();
      o.store.sql`UPDATE claims SET verify_ms = ${now - 1} WHERE verify_ms IS NOT NULL`;
      o.schedules.at("verify", now - 1);
      await o.schedules.rearm();
    });
    await runDurableObjectAlarm(stub);
  }

  /** A collaborator's IDD agent claims #1 unseen; #1 is granted to agent-a and mirrored after. */
  async function iddClaimsFirst(name: string, agoMs = 0) {
    const { stub, repo } = await install({ repo: name, issues: [ready(1)] });
    await sim("/users", {
      body: { login: "writer", token: `tok-${name.replace("/", "-")}`, repos: { [repo]: "write" } },
    });
    // The IDD agent claims #1 on GitHub; its webhook is lost (or late): switchyard grants #1 and
    // mirrors the grant after it. Only the re-read finds the IDD marker.
    await sim("/faults", {
      method: "PUT",
      body: { webhooks: [{ event: "issue_comment", kind: "drop", times: 1 }] },
    });
    const at = new Date(Date.now() - agoMs).toISOString();
    if (agoMs > 0) await sim("/clock", { body: { now: at } });
    await sim(`/repos/${repo}/issues/1/comments`, {
      body: { body: marker("idd-bot", "c-1", at.replace(/\.\d{3}Z$/, "Z")), actor: "writer" },
    });
    await deliverAll();
    const g = (await grant(stub, 1, "agent-a", {}, Date.parse(at))).body;
    await settleAll(stub);
    if (agoMs > 0) await sim("/clock", { body: { now: null } });
    const bodies = await comments(repo, 1);
    expect(bodies.map(markerWho)).toEqual(["claimed-by idd-bot", "claimed-by agent-a"]);
    return { stub, repo, fence: { claimId: g.claimId, fence: g.fence } };
  }

  it("an IDD claim earlier than the grant's marker, still live after the settle delay, preempts the grant", async () => {
    const { stub, repo, fence } = await iddClaimsFirst("idd-preempt/app");
    // Before the re-read, the claim stands (its webhook was lost).
    expect((await stub.heartbeat(1, fence)).status).toBe(200);
    await verificationsDue(stub);
    const beat = await stub.heartbeat(1, fence);
    expect(beat).toMatchObject({
      status: 409,
      body: { error: "stale-fence", reason: "preempted", holder: { agentId: "idd-bot" } },
    });
    expect(await stub.write(1, fence, { kind: "comment", body: "mine" })).toMatchObject({
      status: 409,
      body: { reason: "preempted" },
    });
    expect((await stub.release(1, { ...fence, outcome: "done" })).body).toMatchObject({
      reason: "preempted",
    });
    await settleAll(stub);
    expect((await comments(repo, 1)).some((b) => b.startsWith("<!-- unclaimed-by: agent-a"))).toBe(
      true,
    );
    expect((await stub.auditLog(50)).find((e) => e.kind === "preempted")?.detail).toMatchObject({
      number: 1,
      claimId: fence.claimId,
      holder: "idd-bot",
    });
    // IDD's reading and switchyard's agree: idd-bot holds #1.
    expect((await grant(stub, 1, "agent-b")).body).toMatchObject({
      reason: "held",
      holder: { agentId: "idd-bot", source: "idd" },
    });
  });

  it("an IDD agent that backed off before the re-read leaves the grant standing", async () => {
    // All of it 20 s ago, so the re-read comes after IDD's settle delay, as it does for real.
    const { stub, repo, fence } = await iddClaimsFirst("idd-backoff/app", 20_000);
    // The IDD agent verified 5 s later, saw switchyard's marker and backed off (its webhook
    // lost too).
    const backedOff = new Date(Date.now() - 15_000).toISOString();
    await sim("/clock", { body: { now: backedOff } });
    await sim("/faults", {
      method: "PUT",
      body: { webhooks: [{ event: "issue_comment", kind: "drop", times: 1 }] },
    });
    await sim(`/repos/${repo}/issues/1/comments`, {
      body: {
        body: renderUnclaimedBy({
          agentId: "idd-bot",
          claimId: "c-1",
          timestamp: backedOff.replace(/\.\d{3}Z$/, "Z"),
        }),
        actor: "writer",
      },
    });
    await sim("/clock", { body: { now: null } });
    await verificationsDue(stub);
    expect((await stub.heartbeat(1, fence)).status).toBe(200);
    // IDD's reading ignored switchyard's marker (it came while idd-bot's claim was active), so
    // it names nobody now: the marker is posted again and verified again.
    await settleAll(stub);
    await verificationsDue(stub);
    const audit = await stub.auditLog(50);
    expect(audit.some((e) => e.kind === "preempted")).toBe(false);
    expect(audit.filter((e) => e.kind === "marker-reposted")).toHaveLength(1);
    expect((await stub.heartbeat(1, fence)).status).toBe(200);
    // Both readings name agent-a.
    const list = await sim<Array<{ id: number; body: string; created_at: string; user: string }>>(
      `/repos/${repo}/issues/1/comments`,
    );
    const reading = resolveClaims(
      list.map((c) => ({
        id: c.id,
        createdAt: c.created_at,
        author: { login: c.user, type: c.user.endsWith("[bot]") ? "Bot" : "User" },
        body: c.body,
      })),
      { now: nowSecond(), staleHours: 24, trusted: ["writer", list.at(-1)!.user] },
    );
    expect(liveHolder(reading)).toMatchObject({ agentId: "agent-a", claimId: fence.claimId });
    expect((await grant(stub, 1, "agent-b")).body).toMatchObject({
      reason: "held",
      holder: { agentId: "agent-a", source: "switchyard" },
    });
  });

  it("where IDD agents work, a grant posts its marker before it answers; a failed post grants nothing (503 mirror-failed)", async () => {
    const { stub, repo } = await iddRepo("idd-sync", [ready(1), ready(2), ready(3)]);
    const g = await grant(stub, 1, "agent-a");
    expect(g.status).toBe(201);
    // On GitHub when the grant is answered (no alarm ran in between), and posted once.
    const posted = (await comments(repo, 1)).filter((b) =>
      b.startsWith("<!-- claimed-by: agent-a"),
    );
    expect(posted).toHaveLength(1);
    expect(posted[0]).toContain(g.body.claimId);
    await settleAll(stub);
    expect(
      (await comments(repo, 1)).filter((b) => b.startsWith("<!-- claimed-by: agent-a")),
    ).toHaveLength(1);

    // GitHub refuses the marker: nothing is granted, on a direct claim and on claim-next.
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          {
            method: "POST",
            path: `/repos/${repo}/issues/2/comments`,
            status: 403,
            body: { message: "Resource not accessible by integration" },
            times: 2,
          },
        ],
      },
    });
    for (const n of [2, null]) {
      const refused = await stub.claim(n, { agentId: "agent-b" });
      expect(refused).toMatchObject({
        status: 503,
        body: { error: "unavailable", reason: "mirror-failed" },
      });
      expect(Number(refused.headers?.["retry-after"])).toBeGreaterThanOrEqual(1);
    }
    const live = (await stub.liveClaims()).body as { claims: Array<{ number: number }> };
    expect(live.claims.map((c) => c.number)).toEqual([1]);
    const failed = (await stub.auditLog(50)).filter((e) => e.kind === "mirror-failed");
    expect(failed).toHaveLength(2);
    // Not a failed attempt: the issue is granted once GitHub takes the marker.
    await sim("/faults", { method: "DELETE" });
    expect((await grant(stub, 2, "agent-b")).status).toBe(201);
  });

  it("where IDD agents work, a grant whose write budget cannot be reached grants nothing (503 mirror-failed), as with a spent budget", async () => {
    const { stub, repo, installationId } = await iddRepo("idd-sync-budget-down", [
      ready(1),
      ready(3),
    ]);
    // The InstallationObject's storage loses the table of recent writes: reserving writes
    // throws (as the object being unreachable would), in the real object, over its RPC.
    const budgetTable = (name: string, to: string) =>
      runInDurableObject(installationStub(installationId), (_: InstallationObject, state) => {
        state.storage.sql.exec(`ALTER TABLE ${name} RENAME TO ${to}`);
      });
    await budgetTable("writes", "writes_lost");
    const refused = await stub
      .claim(1, { agentId: "agent-a" })
      .catch((error: unknown) => ({ threw: String(error) }));
    await budgetTable("writes_lost", "writes");
    expect(refused).toMatchObject({
      status: 503,
      body: {
        error: "unavailable",
        reason: "mirror-failed",
        message: expect.stringMatching(
          /write budget could not be reached: .*no such table: writes/,
        ),
      },
    });
    const retryAfter = "headers" in refused ? refused.headers?.["retry-after"] : undefined;
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    // Nothing stays granted: no live claim, and the claim ended as never granted, its marker
    // never owed (it was not posted).
    expect((await stub.liveClaims()).body).toMatchObject({ claims: [] });
    const failed = (await stub.auditLog(50)).filter((e) => e.kind === "mirror-failed");
    expect(failed.map((e) => e.detail)).toMatchObject([{ number: 1, mayBeApplied: false }]);
    const { claimId } = failed[0]!.detail as { claimId: string };
    const row = await runInDurableObject(stub, (o: RepoObject) => o.store.claims.get(claimId));
    expect(row).toMatchObject({ marker: "skip", endedMs: expect.any(Number) });
    // Not a failed attempt: with the budget back, #1 is granted, and only that claim's marker
    // is on GitHub.
    const b = await grant(stub, 1, "agent-b");
    expect(b.status).toBe(201);
    await settleAll(stub);
    expect((await comments(repo, 1)).map(markerWho)).toEqual(["claimed-by agent-b"]);
  });

  it("a live marker by a trusted author blocks a grant; an untrusted or stale one does not", async () => {
    const { stub, repo } = await install({
      repo: "idd-trust/app",
      issues: [ready(1), ready(2), ready(3)],
    });
    await sim("/users", {
      body: { login: "writer", token: "tok-writer", repos: { [repo]: "write" } },
    });
    // A collaborator's claim (author_association COLLABORATOR): live, so it blocks.
    await sim(`/repos/${repo}/issues/1/comments`, {
      body: { body: marker("idd-bot", "c-1", nowSecond()), actor: "writer" },
    });
    // A stranger's claim (NONE): GitHub says no write access, so it does not count.
    await sim(`/repos/${repo}/issues/2/comments`, {
      body: { body: marker("drive-by", "c-2", nowSecond()), actor: "stranger" },
    });
    // A collaborator's claim posted two days ago (IDD ages a claim by its comment's time): stale.
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000).toISOString();
    await sim("/clock", { body: { now: twoDaysAgo } });
    await sim(`/repos/${repo}/issues/3/comments`, {
      body: {
        body: marker("idd-bot", "c-3", twoDaysAgo.replace(/\.\d{3}Z$/, "Z")),
        actor: "writer",
      },
    });
    await sim("/clock", { body: { now: null } });
    await settleAll(stub);
    await stub.workQueue({ limit: 1 }); // notices the unknown author and asks GitHub about them
    await settleAll(stub);
    const blocked = await grant(stub, 1, "agent-a");
    expect(blocked.status).toBe(409);
    expect(blocked.body).toMatchObject({
      reason: "held",
      holder: { agentId: "idd-bot", source: "idd" },
    });
    expect((await grant(stub, 2, "agent-a")).status).toBe(201);
    expect((await grant(stub, 3, "agent-b")).status).toBe(201);
  });
});

describe("fenced writes", () => {
  it("a sub-issue whose answer was lost is looked up, not opened twice, on the retry with its key", async () => {
    const { stub, repo } = await install({ repo: "writes-lost/app", issues: [ready(1)] });
    const g = (await grant(stub, 1, "agent-a")).body;
    const fence = { claimId: g.claimId, fence: g.fence };
    const titled = async (title: string) =>
      (
        await sim<{ issues: Array<{ number: number; parent?: number | null; title: string }> }>(
          `/repos/${repo}/snapshot`,
        )
      ).issues.filter((i) => i.title === title);
    // GitHub opens the issue, and its answer is lost.
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          { method: "POST", path: `/repos/${repo}/issues`, status: 502, phase: "after", times: 1 },
        ],
      },
    });
    const op = { kind: "sub-issue", title: "Follow-up: lost", idempotencyKey: "lost-1" } as const;
    const lost = await stub.write(1, fence, op);
    expect(lost.status).toBe(502);
    expect((await titled("Follow-up: lost")).length).toBe(1);
    // The documented retry: the same key finds that issue and links it; nothing is opened again.
    const retry = await stub.write(1, fence, op);
    expect(retry).toMatchObject({ status: 201, body: { created: false } });
    const opened = await titled("Follow-up: lost");
    expect(opened).toMatchObject([
      { number: (retry.body as { number: number }).number, parent: 1 },
    ]);
    const again = await stub.write(1, fence, op);
    expect(again).toMatchObject({ status: 201, body: { number: opened[0]!.number } });

    // GitHub fails before opening anything: the retry looks, finds nothing, opens one.
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          { method: "POST", path: `/repos/${repo}/issues`, status: 502, phase: "before", times: 1 },
        ],
      },
    });
    const op2 = {
      kind: "sub-issue",
      title: "Follow-up: refused",
      idempotencyKey: "lost-2",
    } as const;
    expect((await stub.write(1, fence, op2)).status).toBe(502);
    expect(await titled("Follow-up: refused")).toEqual([]);
    const second = await stub.write(1, fence, op2);
    expect(second).toMatchObject({ status: 201, body: { created: true } });
    expect(await titled("Follow-up: refused")).toMatchObject([{ parent: 1 }]);
  });

  it("comment, labels, close and sub-issue land on GitHub with a current fence; owned labels and held issues are refused", async () => {
    const { stub, repo } = await install({
      repo: "writes-ok/app",
      issues: [ready(1), ready(2, { labels: ["agent:ready", "agent:hold"] }), ready(3)],
    });
    const g = (await grant(stub, 1, "agent-a")).body;
    const fence = { claimId: g.claimId, fence: g.fence };
    const comment = await stub.write(1, fence, { kind: "comment", body: "progress: tests green" });
    expect(comment).toMatchObject({ status: 201, body: { id: expect.any(Number) } });
    // The comment carries the hidden marker of its claim and fence.
    expect(await comments(repo, 1)).toContain(
      withWriteMarker("progress: tests green", { claimId: g.claimId, fence: g.fence }),
    );

    const labels = await stub.write(1, fence, {
      kind: "labels",
      add: ["needs-review"],
      remove: [],
    });
    expect(labels.status).toBe(200);
    expect(await labelsOf(repo, 1)).toContain("needs-review");
    for (const owned of ["agent:ready", "AGENT:STUCK", "agent:processing"]) {
      const refused = await stub.write(1, fence, { kind: "labels", add: [], remove: [owned] });
      expect([owned, refused.status]).toEqual([owned, 400]);
    }
    // A claim holder cannot post an IDD claim marker with the App's identity.
    const forged = await stub.write(1, fence, {
      kind: "comment",
      body: "<!-- claimed-by: evil sy-x supersedes: none 2026-12-01T00:00:00Z branch: issue/1-x -->",
    });
    expect(forged).toMatchObject({ status: 400, body: { error: "bad-request" } });
    expect((await comments(repo, 1)).some((b) => b.includes("claimed-by: evil"))).toBe(false);

    const sub1 = await stub.write(1, fence, {
      kind: "sub-issue",
      title: "Follow-up: docs",
      idempotencyKey: "followup-docs",
    });
    expect(sub1).toMatchObject({ status: 201, body: { created: true } });
    const child = (sub1.body as { number: number }).number;
    const retry = await stub.write(1, fence, {
      kind: "sub-issue",
      title: "Follow-up: docs",
      idempotencyKey: "followup-docs",
    });
    expect(retry).toMatchObject({ status: 201, body: { number: child, created: false } });
    const snapshot = await sim<{
      issues: Array<{ number: number; parent?: number | null; title: string }>;
    }>(`/repos/${repo}/snapshot`);
    expect(snapshot.issues.filter((i) => i.title === "Follow-up: docs")).toMatchObject([
      { number: child, parent: 1 },
    ]);

    const closed = await stub.write(1, fence, { kind: "close", reason: "completed" });
    expect(closed).toMatchObject({ status: 200, body: { state: "closed" } });

    // Held issues are not claimable; one put on hold after its claim cannot be closed by it.
    expect((await stub.claim(2, { agentId: "agent-b" })).body).toMatchObject({ reason: "hold" });
    const h = (await grant(stub, 3, "agent-c")).body;
    await sim(`/repos/${repo}/issues/3/labels`, {
      body: { labels: ["agent:hold"], actor: "octocat" },
    });
    await deliverAll();
    const refused = await stub.write(3, h, { kind: "close", reason: "completed" });
    expect(refused).toMatchObject({ status: 409, body: { reason: "hold" } });
    expect((await labelsOf(repo, 3)).includes("agent:hold")).toBe(true);
  });

  it("a write whose claim expired or was released writes nothing", async () => {
    const { stub, repo } = await install({ repo: "writes-stale/app", issues: [ready(1)] });
    const g = (await grant(stub, 1, "agent-a", { ttlSeconds: 60 })).body;
    const fence = { claimId: g.claimId, fence: g.fence };
    await stub.release(1, { ...fence, outcome: "abandoned" });
    for (const op of [
      { kind: "comment" as const, body: "late comment" },
      { kind: "labels" as const, add: ["late-label"], remove: [] },
      { kind: "close" as const, reason: "completed" as const },
      { kind: "sub-issue" as const, title: "late sub-issue" },
    ]) {
      expect([op.kind, (await stub.write(1, fence, op)).status]).toEqual([op.kind, 409]);
    }
    expect(await texts(repo, 1)).not.toContain("late comment");
    expect(await labelsOf(repo, 1)).not.toContain("late-label");
    const snapshot = await sim<{ issues: Array<{ number: number; state: string; title: string }> }>(
      `/repos/${repo}/snapshot`,
    );
    expect(snapshot.issues.find((i) => i.number === 1)?.state).toBe("open");
    expect(snapshot.issues.some((i) => i.title === "late sub-issue")).toBe(false);
  });
});

describe("fenced writes and renames", () => {
  /** `name` renamed to `<name>-old` on GitHub, then another repository created under `name`. */
  async function renameAndReuse(name: string, installationId: number) {
    await sim(`/repos/${name}/rename`, { body: { name: `${name.split("/")[1]}-old` } });
    await seed({ repo: name, issues: [seedIssue(1)] }, installationId);
    await sim("/outbox/drain", { method: "POST" });
  }

  /** What reading the repository by id (`sync`) records after a rename. */
  function learnRename(o: RepoObject, fullName: string) {
    o.store.transaction(() => o.store.setIdentity({ ...o.store.identity()!, fullName }));
  }

  it("a rename between the budget reservation and the write cannot send the write to the repository that took the old name", async () => {
    const name = "writes-renamed/app";
    const { stub, installationId } = await install({ repo: name, issues: [ready(1)] });
    const fence = (({ claimId, fence }) => ({ claimId, fence }))((await grant(stub, 1, "a")).body);
    const result = await runInDurableObject(stub, async (o: RepoObject) => {
      // The object's context (functions/objects/repo/context.ts) holds its way to the installation.
      const object = (o as unknown as { c: { installation(): unknown } }).c;
      const real = object.installation() as {
        reserveWrites(n: number): Promise<unknown>;
        tokenCacheGet(key: string): Promise<string | undefined>;
        tokenCacheSet(key: string, value: string): Promise<void>;
      };
      // The budget wait: the rename lands on GitHub and this object learns it (by id).
      object.installation = () => ({
        tokenCacheGet: (key: string) => real.tokenCacheGet(key),
        tokenCacheSet: (key: string, value: string) => real.tokenCacheSet(key, value),
        async reserveWrites(n: number) {
          const granted = await real.reserveWrites(n);
          await renameAndReuse(name, installationId);
          learnRename(o, `${name}-old`);
          return granted;
        },
      });
      return o.write(1, fence, { kind: "comment", body: "written after the rename" });
    });
    expect(result.status).toBe(201);
    expect((await stub.identity())?.fullName).toBe(`${name}-old`);
    expect(await texts(`${name}-old`, 1)).toContain("written after the rename");
    expect(await texts(name, 1)).not.toContain("written after the rename");
  });

  it("the repository's client refuses a write naming another repository (a name read before a rename)", async () => {
    const name = "writes-stale-name/app";
    const { stub, installationId } = await install({ repo: name, issues: [ready(1)] });
    const fence = (({ claimId, fence }) => ({ claimId, fence }))((await grant(stub, 1, "a")).body);
    await renameAndReuse(name, installationId);
    await runInDurableObject(stub, (o: RepoObject) => learnRename(o, `${name}-old`));
    // A caller that read the name before the rename (the defect this guards against).
    const result = await runInDurableObject(stub, (o: RepoObject) =>
      fencedWrite(o.claims, o.views, o.store, {
        number: 1,
        request: fence,
        op: { kind: "comment", body: "sent by the old name" },
        fullName: () => name,
        client: () =>
          (o as unknown as { c: { client(operation: string): GitHubClient } }).c.client(
            "stale name",
          ),
        installation: { reserveWrites: (n: number) => ({ granted: n, retryAtMs: null }) },
        now: () => Date.now(),
      }),
    );
    expect(result).toMatchObject({ status: 409, body: { error: "conflict", reason: "renamed" } });
    expect(await texts(name, 1)).not.toContain("sent by the old name");
    expect(await texts(`${name}-old`, 1)).not.toContain("sent by the old name");
  });
});

describe("the queue", () => {
  type Queue = {
    order: string;
    total: number;
    items: Array<{ number: number; impact: number; requires: string[]; reason: string }>;
  };
  const numbers = async (stub: Stub, request: Record<string, unknown>) =>
    ((await stub.workQueue({ limit: 50, ...request })).body as Queue).items.map((i) => i.number);

  it("orders by number (rotated per machine) or by impact, filters capabilities, drops claimed and dead-lettered issues", async () => {
    const { stub } = await install({
      repo: "queue-order/app",
      issues: [
        ready(1),
        ready(2),
        ready(3, { body: "Needs a GPU.\n\n<!-- requires: gpu -->" }),
        ready(4),
        seedIssue(10, { blockedBy: [2] }),
        seedIssue(11, { blockedBy: [10] }),
        seedIssue(12, { blockedBy: [4] }),
        seedIssue(20),
        seedIssue(21, { parent: 20 }),
        ready(22, { parent: 20, blockedBy: [] }),
      ],
    });
    // #21 is an open child of #20: #20 waits on it; #22 is labeled and ready.
    expect(await numbers(stub, {})).toEqual([1, 2, 4, 22]);
    expect(await numbers(stub, { capabilities: ["GPU"] })).toEqual([1, 2, 3, 4, 22]);
    // Rotation: a machine starts elsewhere in the same cyclic order.
    const rotated = await numbers(stub, { machine: "build-box-7" });
    expect([...rotated].sort((a, b) => a - b)).toEqual([1, 2, 4, 22]);
    const start = [1, 2, 4, 22].indexOf(rotated[0]!);
    expect(rotated).toEqual([...[1, 2, 4, 22].slice(start), ...[1, 2, 4, 22].slice(0, start)]);
    // Impact: #2 unblocks #10 and through it #11 (2), #4 unblocks #12 (1), #22 completes #20 (1).
    const byImpact = (await stub.workQueue({ limit: 50, order: "impact" })).body as Queue;
    expect(byImpact.items.map((i) => [i.number, i.impact])).toEqual([
      [2, 2],
      [4, 1],
      [22, 1],
      [1, 0],
    ]);
    // Claimed issues leave the queue; so do stuck ones.
    await grant(stub, 2, "agent-a");
    expect(await numbers(stub, {})).toEqual([1, 4, 22]);
    for (let i = 0; i < 3; i++) {
      const g = (await grant(stub, 4, `agent-${i}`)).body;
      await stub.release(4, { claimId: g.claimId, fence: g.fence, outcome: "failed" });
    }
    expect(await numbers(stub, {})).toEqual([1, 22]);
    // Claim-next respects capabilities: without gpu, #3 is never handed out.
    const next = await grant(stub, null, "agent-z", { capabilities: [] });
    expect(next.body.issue.number).toBe(1);
  });
});

describe("fenced write records (a write never outlives its claim)", () => {
  afterEach(async () => {
    await sim("/faults", { method: "DELETE" });
  });
  type Record = { number: number; outcome: string | null; closedMs: number | null };
  const openRecords = (stub: Stub) =>
    runInDurableObject(stub, (o: RepoObject) => o.store.writes.openAt(0) as Record[]);

  /** Waits until the simulator has received every request its fault plan waits for. */
  async function faultsReached() {
    for (let i = 0; i < 400; i++) {
      if ((await sim<{ requests: number }>("/faults")).requests === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error("the faulted request never reached the simulator");
  }

  /** Time passes until every open record's close: due now, and the alarm runs after an eviction. */
  async function recordsDue(stub: Stub) {
    await runInDurableObject(stub, async (o: RepoObject) => {
      const now = Date.now();
      o.store.sql`UPDATE write_records SET close_at_ms = ${now - 1} WHERE closed_ms IS NULL`;
      o.schedules.at("writes", now - 1);
      await o.schedules.rearm();
    });
    await evictDurableObject(stub);
    await runDurableObjectAlarm(stub);
  }

  /** A holds #1 with a 60 s TTL granted 55 s ago; its claimed-by marker is already posted. */
  async function holdFor55s(name: string) {
    const { stub, repo } = await install({ repo: name, issues: [ready(1)] });
    const t0 = Date.now() - 55_000;
    const g = (await grant(stub, 1, "agent-a", { ttlSeconds: 60 }, t0)).body;
    await settleAll(stub);
    return { stub, repo, t0, fence: { claimId: g.claimId, fence: g.fence } };
  }

  it("the issue's reproduction: a comment GitHub delays keeps the issue from B until its record closes", async () => {
    const { stub, repo, t0, fence } = await holdFor55s("records-delay/app");
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [{ method: "POST", path: `/repos/${repo}/issues/1/comments`, delayMs: 3_000 }],
      },
    });
    // At 55 s A posts a comment; GitHub sits on it.
    const pending = stub.write(1, fence, { kind: "comment", body: "late progress" });
    await faultsReached();
    expect(await openRecords(stub)).toMatchObject([{ number: 1, outcome: null }]);
    // At 60.5 s A's claim has expired, but its write may still land: B is refused, and
    // claim-next skips the issue.
    const b = await stub.claim(1, { agentId: "agent-b" }, t0 + 60_500);
    expect(b).toMatchObject({
      status: 409,
      body: { error: "conflict", reason: "write-in-flight" },
    });
    expect(Number(b.headers?.["retry-after"])).toBeGreaterThanOrEqual(1);
    expect((await stub.claim(null, { agentId: "agent-b" }, t0 + 60_500)).status).toBe(204);
    expect((await stub.workQueue({ limit: 10 }, t0 + 60_500)).body).toMatchObject({ total: 0 });
    // A's request ends without GitHub's answer (here the client's per-attempt timeout, before
    // the deadline): A is told it may still be applied, and the record stays open a margin.
    const a = await pending;
    expect(a.status).toBe(502);
    expect((a.body as { message: string }).message).toMatch(/may or may not have been applied/);
    expect(await openRecords(stub)).toMatchObject([{ number: 1, outcome: "no-answer" }]);
    expect((await stub.claim(1, { agentId: "agent-b" }, t0 + 60_500)).body).toMatchObject({
      reason: "write-in-flight",
    });
    // GitHub applies it, inside the margin: not late.
    await sim("/settled");
    expect(await texts(repo, 1)).toContain("late progress");
    await deliverAll();
    // The margin passes; the alarm closes the record (after an eviction), audited.
    await recordsDue(stub);
    expect(await openRecords(stub)).toEqual([]);
    const audit = await stub.auditLog(50);
    expect(audit.find((e) => e.kind === "write-record-closed")?.detail).toMatchObject({
      number: 1,
      claimId: fence.claimId,
      outcome: "no-answer",
    });
    expect(audit.some((e) => e.kind === "fenced-write-late")).toBe(false);
    expect((await grant(stub, 1, "agent-b", {}, t0 + 70_000)).status).toBe(201);
  });

  it("a comment GitHub applies after its record closed is found by its marker and reported late, once", async () => {
    const { stub, repo, fence } = await holdFor55s("records-late/app");
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [{ method: "POST", path: `/repos/${repo}/issues/1/comments`, delayMs: 3_500 }],
      },
    });
    const pending = stub.write(1, fence, { kind: "comment", body: "applied late" });
    await faultsReached();
    const a = await pending;
    expect(a.status).toBe(502);
    // The record closes (the margin passed) before GitHub applied the comment.
    await recordsDue(stub);
    expect(await openRecords(stub)).toEqual([]);
    await sim("/settled");
    expect(await texts(repo, 1)).toContain("applied late");
    await deliverAll();
    const late = (await stub.auditLog(50)).filter((e) => e.kind === "fenced-write-late");
    expect(late).toHaveLength(1);
    expect(late[0]!.detail).toMatchObject({
      number: 1,
      claimId: fence.claimId,
      fence: fence.fence,
    });
    // Delivered again (GitHub redelivers): reported once.
    await deliverAll();
    expect((await stub.auditLog(50)).filter((e) => e.kind === "fenced-write-late")).toHaveLength(1);
  });

  for (const write of [
    {
      what: "a label change",
      op: { kind: "labels" as const, add: ["bug"], remove: [] },
      request: { method: "POST", path: "labels" },
      change: "label bug",
    },
    {
      what: "a close",
      op: { kind: "close" as const, reason: "completed" as const },
      request: { method: "PATCH", path: "" },
      change: "closed",
    },
  ]) {
    it(`${write.what} GitHub applies after its record closed is found by its webhook's time and reported late, once`, async () => {
      const name = `records-late-${write.op.kind}/app`;
      const { stub, repo, fence } = await holdFor55s(name);
      const path = `/repos/${repo}/issues/1${write.request.path ? `/${write.request.path}` : ""}`;
      // GitHub sits on every attempt (a label write and a close are retried) past the time the
      // client gives up on all of them: the write ends without an answer.
      await sim("/faults", {
        method: "PUT",
        body: { requests: [{ method: write.request.method, path, delayMs: 8_000, times: 4 }] },
      });
      expect((await stub.write(1, fence, write.op)).status).toBe(502);
      // The record closes (the margin passed) before GitHub applied the change.
      await recordsDue(stub);
      expect(await openRecords(stub)).toEqual([]);
      await sim("/settled");
      await deliverAll();
      const late = (await stub.auditLog(50)).filter((e) => e.kind === "fenced-write-late");
      expect(late).toHaveLength(1);
      expect(late[0]!.detail).toMatchObject({
        number: 1,
        claimId: fence.claimId,
        fence: fence.fence,
        kind: write.op.kind,
        change: write.change,
      });
      // Delivered again (GitHub redelivers): reported once.
      await deliverAll();
      expect((await stub.auditLog(50)).filter((e) => e.kind === "fenced-write-late")).toHaveLength(
        1,
      );
      // GitHub's 8 s delays are real time (about 13 s on a quiet machine): a budget of its own,
      // so a loaded CI machine does not hit the 20 s default.
    }, 60_000);
  }

  it("a lost answer (GitHub applied it): the record stays open a margin, then the issue is free", async () => {
    const { stub, repo, t0, fence } = await holdFor55s("records-lost/app");
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          {
            method: "POST",
            path: `/repos/${repo}/issues/1/comments`,
            status: 502,
            phase: "after",
          },
        ],
      },
    });
    const a = await stub.write(1, fence, { kind: "comment", body: "answer lost" });
    expect(a.status).toBe(502);
    expect(await texts(repo, 1)).toContain("answer lost");
    expect(await openRecords(stub)).toMatchObject([{ number: 1, outcome: "no-answer" }]);
    expect((await stub.claim(1, { agentId: "agent-b" }, t0 + 61_000)).body).toMatchObject({
      reason: "write-in-flight",
    });
    await deliverAll();
    await recordsDue(stub);
    // Applied before its record closed: not late.
    expect((await stub.auditLog(50)).some((e) => e.kind === "fenced-write-late")).toBe(false);
    expect((await grant(stub, 1, "agent-b", {}, t0 + 70_000)).status).toBe(201);
  });

  it("a 429 whose retry-after ends past the deadline is not waited out: 504, nothing written, the issue free at once", async () => {
    const { stub, repo, t0, fence } = await holdFor55s("records-429/app");
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          { method: "POST", path: `/repos/${repo}/issues/1/comments`, status: 429, retryAfter: 5 },
        ],
      },
    });
    // A settle margin of 2 s: at 59 s the deadline (62 s) is 3 s away; GitHub asks for 5 s.
    const at = t0 + 59_000;
    const start = Date.now();
    const result = await runInDurableObject(stub, (o: RepoObject) =>
      fencedWrite(o.claims, o.views, o.store, {
        number: 1,
        request: fence,
        op: { kind: "comment", body: "after the retry-after" },
        fullName: () => repo,
        client: () =>
          (o as unknown as { c: { client(operation: string): GitHubClient } }).c.client("429"),
        installation: { reserveWrites: (n: number) => ({ granted: n, retryAtMs: null }) },
        now: () => at + (Date.now() - start),
        marginMs: 2_000,
      }),
    );
    expect(result).toMatchObject({ status: 504, body: { error: "deadline" } });
    expect((result.body as { message: string }).message).toMatch(/nothing was written/);
    expect(Date.now() - start).toBeLessThan(4_000);
    expect(await texts(repo, 1)).not.toContain("after the retry-after");
    // Nothing was sent after GitHub's refusal: the record closed at once.
    expect(await openRecords(stub)).toEqual([]);
    expect((await stub.claim(1, { agentId: "agent-b" }, t0 + 60_500)).status).toBe(201);
  });

  it("an eviction with a record open: the alarm closes it at deadline plus margin, and the issue comes back", async () => {
    const { stub, t0, fence } = await holdFor55s("records-evict/app");
    // A write recorded at 55 s whose instance goes away before it reports back (as an eviction
    // or a deploy in the middle of the GitHub call leaves it).
    await runInDurableObject(stub, async (o: RepoObject) => {
      expect(o.claims.openWrite(1, fence, "comment", t0 + 55_000, 10_000)).not.toBeNull();
      await o.schedules.rearm();
    });
    await evictDurableObject(stub);
    const open = await runInDurableObject(stub, (o: RepoObject) => o.store.writes.openAt(0));
    expect(open).toMatchObject([{ number: 1, outcome: null }]);
    // Its close is the window's: A's expiry (60 s) plus two margins.
    expect(open[0]!.closeAtMs).toBe(t0 + 60_000 + 2 * 10_000);
    expect((await stub.claim(1, { agentId: "agent-b" }, t0 + 70_000)).body).toMatchObject({
      reason: "write-in-flight",
    });
    // Past its close the record holds nothing back, even before the alarm has run.
    expect((await stub.workQueue({ limit: 10 }, t0 + 80_001)).body).toMatchObject({ total: 1 });
    await recordsDue(stub);
    const closed = (await stub.auditLog(50)).find((e) => e.kind === "write-record-closed");
    expect(closed?.detail).toMatchObject({ number: 1, outcome: "unfinished" });
    expect((await grant(stub, 1, "agent-b", {}, t0 + 70_000)).status).toBe(201);
  });

  it("labels, one call per label: the fence is checked between calls, and a released claim stops the rest", async () => {
    const { stub, repo } = await install({
      repo: "records-labels/app",
      issues: [ready(1, { labels: ["agent:ready", "wip", "draft"] })],
    });
    const g = (await grant(stub, 1, "agent-a")).body;
    const fence = { claimId: g.claimId, fence: g.fence };
    await settleAll(stub);
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [{ method: "DELETE", path: `/repos/${repo}/issues/1/labels/wip`, delayMs: 600 }],
      },
    });
    const pending = stub.write(1, fence, { kind: "labels", add: [], remove: ["wip", "draft"] });
    await faultsReached();
    // The holder releases while its first call is in flight.
    expect((await stub.release(1, { ...fence, outcome: "abandoned" })).status).toBe(200);
    const result = await pending;
    expect(result).toMatchObject({ status: 409, body: { error: "stale-fence" } });
    expect((result.body as { message: string }).message).toMatch(/-wip changed, -draft not/);
    const labels = await labelsOf(repo, 1);
    expect(labels).not.toContain("wip");
    expect(labels).toContain("draft");
  });
});
