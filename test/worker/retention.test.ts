// Retention and uninstall on real SQLite storage: every table of the RepoObject stays within its
// stated bound after months of simulated activity (the daily prune called with a clock far
// ahead), and an uninstall leaves no rows but the fencing counter and the identity/generation
// meta. Both tests list every table from sqlite_master, so a table added without a bound and a
// wipe fails them.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { DAY_MS, formatInstant, HOUR_MS } from "../../shared/graph/time.ts";
import type { GraphEvent } from "../../shared/ingest/events.ts";
import {
  AUDIT_LIMIT,
  CLAIM_HISTORY_PER_ISSUE,
  CLAIM_HISTORY_RETENTION_MS,
  DELIVERY_RETENTION_MS,
  FLEET_KEY_RETENTION_MS,
  TOMBSTONE_RETENTION_MS,
} from "../../shared/schedule/retention.ts";
import { deliverAll, install, seedIssue, settle, sim } from "./helpers.ts";

type Stub = DurableObjectStub<RepoObject>;

/** Tables SQLite or the runtime keep for themselves, not the repository's data. */
const internal = (name: string) =>
  name === "_schema" || name.startsWith("sqlite_") || name.startsWith("_cf_");

/** Row counts of every table of the object (from sqlite_master). */
function tableCounts(storage: DurableObjectStorage): Record<string, number> {
  const names = storage.sql
    .exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
    .toArray()
    .map((r) => r.name)
    .filter((n) => !internal(n));
  const out: Record<string, number> = {};
  for (const name of names) {
    out[name] = storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM "${name}"`).one().n ?? 0;
  }
  return out;
}

const at = (ms: number) => formatInstant(ms);

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

describe("retention", () => {
  it("keeps every table within its bound after months of events, pruned daily", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("retention-months")) as Stub;
    const DAYS = 120;
    const base = Date.parse("2027-01-01T00:00:00Z");
    const end = base + DAYS * DAY_MS;
    const PER_DAY_DELIVERIES = 50;
    const PER_DAY_AUDIT = 30;
    await runInDurableObject(stub, (o: RepoObject) => {
      o.store.setIdentity({
        repoId: 777001,
        fullName: "acme/retention",
        installationId: 777,
        status: "active",
      });
      const claims = o.store.claims;
      // Two failed attempts on #3 (not stuck: the default dead letter is at 3): they must stay.
      for (const [i, outcome] of (["failed", "abandoned"] as const).entries()) {
        const fence = claims.nextFence();
        const claimId = `sy-attempt-${i}`;
        claims.insert({
          claimId,
          number: 3,
          agentId: "agent-x",
          machine: null,
          fence,
          branch: "issue/3",
          ttlMs: HOUR_MS,
          grantedMs: base,
          expiresMs: base + HOUR_MS,
        });
        claims.end(claimId, base + 1_000, outcome, null);
        claims.setMarker(claimId, "skip");
      }
      o.store.applyEvents([
        { type: "blocked-by", issue: 1, blocker: "other/lib#1", present: true, at: at(base) },
        { type: "external", ref: "other/lib#1", state: "open", closedAt: null, at: at(base) },
      ]);

      for (let d = 0; d < DAYS; d++) {
        const t = base + d * DAY_MS;
        const ref = `other/lib#${100 + d}`;
        const events: GraphEvent[] = [
          { type: "issue-removed", number: 10_000 + d, at: at(t) },
          { type: "comment-removed", id: 500_000 + d, at: at(t) },
          {
            type: "label-event",
            number: 1,
            label: "agent:ready",
            action: "labeled",
            actor: "bot",
            at: at(t),
          },
          {
            type: "label-event",
            number: 1,
            label: "agent:ready",
            action: "unlabeled",
            actor: "alice",
            at: at(t + HOUR_MS),
          },
          { type: "blocked-by", issue: 2, blocker: ref, present: true, at: at(t) },
          { type: "external", ref, state: "open", closedAt: null, at: at(t) },
          { type: "blocked-by", issue: 2, blocker: ref, present: false, at: at(t + 2 * HOUR_MS) },
        ];
        o.store.applyEvents(events);
        for (let i = 0; i < PER_DAY_DELIVERIES; i++) o.store.recordDelivery(`d-${d}-${i}`, t + i);
        for (let i = 0; i < PER_DAY_AUDIT; i++) o.store.audit("test", { d, i }, t + i);
        // A claim a day on #2, released `done` (its marker settled).
        const fence = claims.nextFence();
        const claimId = `sy-day-${d}`;
        claims.insert({
          claimId,
          number: 2,
          agentId: "agent-y",
          machine: null,
          fence,
          branch: "issue/2",
          ttlMs: HOUR_MS,
          grantedMs: t,
          expiresMs: t + HOUR_MS,
        });
        claims.end(claimId, t + 60_000, "done", null);
        claims.setMarker(claimId, "released");
        claims.recordIdempotent(`key-${d}`, claimId, 2, true, t);
        claims.setTrust(`user-${d}`, true, t);
        // A fleet state set and cleared again: a row with nothing set.
        claims.setFlag(1_000 + d, "processing", true);
        claims.setFlag(1_000 + d, "processing", false);
        o.createKey({
          id: `key-${d}`,
          name: `key ${d}`,
          hash: `hash-${d}`,
          createdBy: null,
          createdMs: t,
          expiresMs: t + 10 * DAY_MS,
        });
        if (d % 2 === 0) o.revokeKey(`key-${d}`, t + HOUR_MS);
        // The breaker: a new head a day with a report on it; priority values set and cleared.
        o.store.ci.setHead(`sha-${d}`, t);
        o.store.ci.report(
          `sha-${d}`,
          {
            source: "check",
            key: "1:build",
            name: "build",
            runId: d + 1,
            attempt: 1,
            status: "completed",
            conclusion: "success",
            url: null,
          },
          t,
        );
        o.store.priority.set(2_000 + d, `item-${d}`, "High", t);
        o.store.priority.set(2_000 + d, `item-${d}`, null, t + HOUR_MS);
        o.store.priority.addReread(`item-${d}`, t);
        // A fenced write a day on #2, answered at once (its record closed).
        const record = o.store.writes.open({
          number: 2,
          claimId,
          fence,
          kind: "comment",
          startedMs: t + 1_000,
          deadlineMs: t + 30_000,
          closeAtMs: t + 40_000,
        });
        o.store.writes.finish(record.id, "answered", t + 2_000, t + 2_000);
        o.prune(t + 12 * HOUR_MS); // the daily schedule
      }
      o.prune(end);
    });

    const result = await runInDurableObject(stub, (o: RepoObject, state) => {
      const sql = state.storage.sql;
      const one = (query: string) => sql.exec<{ n: number }>(query).one().n;
      return {
        counts: tableCounts(state.storage),
        oldestTombstone: one(`SELECT MIN(at_ms) AS n FROM tombstones`),
        oldestDelivery: one(`SELECT MIN(received_ms) AS n FROM deliveries`),
        absentEdges: one(`SELECT COUNT(*) AS n FROM blockers WHERE present = 0`),
        doneClaims: one(`SELECT COUNT(*) AS n FROM claims WHERE outcome = 'done'`),
        activityAudit: one(`SELECT COUNT(*) AS n FROM audit WHERE lane = 'activity'`),
        recordAudit: one(`SELECT COUNT(*) AS n FROM audit WHERE lane = 'record'`),
        attempts: o.store.claims.attempts(3, 0).length,
        external: sql
          .exec<{ ref: string }>(`SELECT ref FROM external`)
          .toArray()
          .map((r) => r.ref),
        latestUnlabeled: o.store.lastUnlabeledMs(1, "agent:ready"),
      };
    });
    const day = (ms: number) => Math.ceil(ms / DAY_MS);
    const { counts } = result;
    // Every table has a stated bound here: a new table fails until it has one (and a prune).
    const bounds: Record<string, number> = {
      meta: 10, // fixed keys and a few counters
      issues: 0, // mirrors GitHub (none stored in this test)
      parents: 0,
      comments: 0,
      schedules: 0,
      outbox: 0,
      fence: 1,
      tombstones: day(TOMBSTONE_RETENTION_MS) + 1,
      comment_tombstones: day(TOMBSTONE_RETENTION_MS) + 1,
      blockers: day(TOMBSTONE_RETENTION_MS) + 2, // absent edges for 30 days, one present
      external: 1, // only what a present edge refers to
      label_events: 2, // the latest labeled and unlabeled of #1 agent:ready
      deliveries: (day(DELIVERY_RETENTION_MS) + 1) * PER_DAY_DELIVERIES,
      audit: 2 * AUDIT_LIMIT, // each lane keeps its latest (shared/schedule/audit-lanes.ts)
      claims: day(CLAIM_HISTORY_RETENTION_MS) + 1 + 2, // recent history + #3's two attempts
      issue_fleet: 0,
      idempotency: day(DELIVERY_RETENTION_MS) + 1,
      author_trust: 2,
      fleet_keys: day(FLEET_KEY_RETENTION_MS) + 12, // unexpired (10 days) + 30 days after
      reconcile_run: 1, // the full reconcile in progress, if one is
      reconcile_seen: 0, // the issues a run in progress saw: gone when it ends (none ran here)
      ci_state: 1, // the breaker's one row
      ci_reports: 2, // the head's and the previous head's (older commits' go after a day)
      priority_items: day(TOMBSTONE_RETENTION_MS) + 1, // cleared options kept as tombstones
      priority_rereads: 1, // re-reads that never succeeded go after a day
      priority_state: 0,
      write_records: day(DELIVERY_RETENTION_MS) + 1, // closed records, as long as idempotency keys
      reply_openings: 0, // go with their issue (none stored in this test)
      reply_comments: day(TOMBSTONE_RETENTION_MS) + 1, // deleted comments, as comment_tombstones
      reply_answered: 0, // one per issue, gone with it
      reply_attempts: 0, // one per issue, gone with it
    };
    expect(Object.keys(counts).sort()).toEqual(Object.keys(bounds).sort());
    const over = Object.entries(bounds).filter(([table, bound]) => (counts[table] ?? 0) > bound);
    expect(over.map(([table, bound]) => `${table}: ${counts[table]} > ${bound}`)).toEqual([]);
    expect(counts.label_events).toBe(2);
    expect(result.latestUnlabeled).toBe(base + (DAYS - 1) * DAY_MS + HOUR_MS);
    expect(result.external).toEqual(["other/lib#1"]);
    expect(result.attempts).toBe(2);
    expect(result.doneClaims).toBeGreaterThan(0);
    expect(result.absentEdges).toBeGreaterThan(0);
    expect(result.oldestTombstone).toBeGreaterThanOrEqual(end - TOMBSTONE_RETENTION_MS);
    expect(result.oldestDelivery).toBeGreaterThanOrEqual(end - DELIVERY_RETENTION_MS);
    expect(result.activityAudit).toBe(AUDIT_LIMIT);
    // Keys minted and revoked (the record lane) are all still there.
    expect(result.recordAudit).toBe(DAYS + DAYS / 2);
  });

  it("a direct claim → release done loop keeps the issue's history bounded and never flushes key or fenced-write audit entries", async () => {
    const { stub } = await install({
      repo: "retention-loop/app",
      issues: [seedIssue(1, { labels: ["agent:ready"] })],
    });
    stub.createKey({
      id: "loop-key",
      name: "loop",
      hash: "hash-loop",
      createdBy: "alice",
      createdMs: Date.now(),
      expiresMs: null,
    });
    const first = await stub.claim(1, { agentId: "writer" });
    expect(first.status).toBe(201);
    const { claimId, fence } = first.body as { claimId: string; fence: number };
    const wrote = await stub.write(1, { claimId, fence }, { kind: "comment", body: "on record" });
    expect(wrote.status).toBe(201);
    expect((await stub.release(1, { claimId, fence, outcome: "done" })).status).toBe(200);
    // Twice the audit ring's size in claims and releases, straight at the object.
    const LOOPS = AUDIT_LIMIT;
    const rows = await runInDurableObject(stub, async (o: RepoObject, state) => {
      for (let i = 0; i < LOOPS; i++) {
        const grant = await o.claim(1, { agentId: `loop-${i % 7}` });
        expect(grant.status).toBe(201);
        const g = grant.body as { claimId: string; fence: number };
        const done = await o.release(1, { claimId: g.claimId, fence: g.fence, outcome: "done" });
        expect(done.status).toBe(200);
      }
      const one = (q: string) => state.storage.sql.exec<{ n: number }>(q).one().n;
      return {
        claims: one(`SELECT COUNT(*) AS n FROM claims WHERE number = 1`),
        audit: one(`SELECT COUNT(*) AS n FROM audit`),
      };
    });
    expect(rows.claims).toBeLessThanOrEqual(CLAIM_HISTORY_PER_ISSUE + 1);
    expect(rows.audit).toBeLessThanOrEqual(2 * AUDIT_LIMIT + 100);
    const log = await stub.auditLog(10 * AUDIT_LIMIT);
    const kinds = new Set(log.map((e) => e.kind));
    expect(kinds.has("key-created"), [...kinds].join()).toBe(true);
    expect(kinds.has("fenced-write")).toBe(true);
    // The high-volume ones are still there, the latest of them.
    expect(log[0]!.kind).toBe("release");
  });

  it("a tombstone outlives a late redelivery: the deleted issue does not come back", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("retention-tombstone")) as Stub;
    const base = Date.parse("2027-03-01T00:00:00Z");
    const back = await runInDurableObject(stub, (o: RepoObject) => {
      o.store.setIdentity({
        repoId: 777002,
        fullName: "acme/tomb",
        installationId: 777,
        status: "active",
      });
      o.store.applyEvents([{ type: "issue-removed", number: 5, at: at(base) }]);
      // GitHub redelivers for up to 3 days; a week of daily prunes later it is still stopped.
      for (let d = 1; d <= 7; d++) o.prune(base + d * DAY_MS);
      return o.store.apply([
        {
          type: "issue",
          issue: {
            number: 5,
            id: null,
            title: "Deleted",
            state: "open",
            stateReason: null,
            createdAt: at(base - DAY_MS),
            updatedAt: at(base - HOUR_MS),
            closedAt: null,
            labels: [],
          },
        },
      ]);
    });
    expect(back).toEqual([]);
  });
});

describe("uninstall", () => {
  it("deletes every stored row of the repository but the fence and the identity/generation meta", async () => {
    const { stub } = await install({
      repo: "retention-uninstall/app",
      issues: [
        seedIssue(1, { labels: ["agent:ready"] }),
        seedIssue(2, { blockedBy: ["other/lib#9"] }),
        seedIssue(3, { parent: 4 }),
        seedIssue(4),
      ],
    });
    const claim = await stub.claim(1, { agentId: "agent-a" });
    expect(claim.status).toBe(201);
    const { fence } = claim.body as { fence: number };
    await deliverAll();
    await settle(stub);
    const now = Date.now();
    await runInDurableObject(stub, (o: RepoObject) => {
      // Whatever the flow above did not store, stored through the store modules.
      o.store.applyEvents([
        { type: "issue-removed", number: 40, at: at(now) },
        { type: "comment-removed", id: 9_001, at: at(now) },
        {
          type: "label-event",
          number: 1,
          label: "agent:processing",
          action: "labeled",
          actor: "bot",
          at: at(now),
        },
        {
          type: "comment",
          id: 9_002,
          number: 1,
          author: { login: "alice", type: "User" },
          body: "<!-- claimed-by: alice -->",
          createdAt: at(now),
          updatedAt: at(now),
        },
        {
          // An opening the reply rules read (its author is only in webhooks' records).
          type: "issue",
          issue: {
            number: 4,
            id: null,
            title: "Issue 4",
            state: "open",
            stateReason: null,
            createdAt: at(now - DAY_MS),
            updatedAt: at(now),
            closedAt: null,
            body: "Design this.",
            author: { login: "alice", type: "User", association: "OWNER" },
            commentCount: 0,
          },
        },
      ]);
      o.store.replies.answer(4, { url: "https://github.com/x/y/issues/4", at: at(now) });
      o.store.replies.failedAttempt(4, { url: "https://github.com/x/y/issues/4", at: at(now) });
      o.store.recordDelivery("uninstall-d1", now);
      o.store.outbox.enqueue(1, [
        { number: 1, label: "agent:ready", action: "remove", reason: "test" },
      ]);
      o.store.claims.recordIdempotent("k", "sy-x", 1, true, now);
      o.store.writes.open({
        number: 1,
        claimId: "sy-x",
        fence,
        kind: "comment",
        startedMs: now,
        deadlineMs: now + 30_000,
        closeAtMs: now + 40_000,
      });
      o.store.claims.setTrust("alice", true, now);
      o.store.claims.setFlag(2, "doneSuppressed", true);
      o.createKey({
        id: "key-1",
        name: "ci",
        hash: "hash-1",
        createdBy: "alice",
        createdMs: now,
        expiresMs: null,
      });
      o.schedules.at("trust", now + DAY_MS);
      // The breaker's head and a report; a priority option, a re-read and the read's state.
      o.store.ci.setHead("sha-1", now);
      o.store.ci.report(
        "sha-1",
        {
          source: "status",
          key: "ci",
          name: "ci",
          runId: 1,
          attempt: 1,
          status: "completed",
          conclusion: "failure",
          url: null,
        },
        now,
      );
      o.store.priority.set(1, "item-1", "High", now);
      o.store.priority.addReread("item-1", now);
      o.store.priority.setState({
        project: "acme/1/Priority",
        projectId: "PVT_1",
        state: "on",
        reason: null,
        readMs: now,
        run: null,
      });
      // A full reconcile in the middle of its run.
      const run = o.store.reconcileRuns.start({
        runId: "run-1",
        generation: o.store.generation(),
        startedMs: now,
        labels: "{}",
      });
      o.store.reconcileRuns.recordPage(run.runId, {
        next: "cursor-1",
        seen: [{ number: 1, updatedMs: now }],
        requests: 1,
        corrected: [],
        atMs: now,
      });
    });
    const before = await runInDurableObject(stub, (_o: RepoObject, state) =>
      tableCounts(state.storage),
    );
    // Every table holds something before the uninstall, so the wipe is really checked.
    for (const [table, rows] of Object.entries(before)) {
      expect({ table, empty: rows === 0 }).toEqual({ table, empty: false });
    }

    const identity = (await stub.identity())!;
    await stub.setLifecycle({ ...identity, status: "removed" });

    const after = await runInDurableObject(stub, async (_o: RepoObject, state) => ({
      counts: tableCounts(state.storage),
      meta: state.storage.sql
        .exec<{ key: string }>(`SELECT key FROM meta ORDER BY key`)
        .toArray()
        .map((r) => r.key),
      alarm: await state.storage.getAlarm(),
    }));
    const left = Object.fromEntries(Object.entries(after.counts).filter(([, n]) => n > 0));
    expect(left).toEqual({ fence: 1, meta: 2 });
    expect(after.meta).toEqual(["generation", "identity"]);
    expect(after.alarm).toBeNull();
    expect((await stub.status()).status).toBe("removed");

    // The fencing counter stays: after a reinstall, fences go on from where they were.
    const current = await runInDurableObject(stub, (o: RepoObject) =>
      o.store.claims.currentFence(),
    );
    expect(current).toBeGreaterThanOrEqual(fence);
  });
});
