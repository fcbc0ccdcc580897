// A simulated fleet against one RepoObject (real SQLite, real RPC, GitHub = the simulator):
// 20 agents on 50 issues claim, heartbeat, release, crash, write with fresh and stale fences,
// race each other for the next issue, while the clock jumps and the object is evicted.
// Some writes lose GitHub's answer (applied, answered 502).
// Invariants: never two live holders of an issue; fences strictly increase; a stale fence
// writes nothing to GitHub; no grant of a larger fence while a write record of fence f is open;
// an issue whose claim expired is claimable again unless stuck.

import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { IDD_VERIFY_SETTLE_MS, PREEMPT_CHECK_MARGIN_MS } from "../../shared/claims/preemption.ts";
import { parseWriteMarker } from "../../shared/claims/write-records.ts";
import { ConfigSchema } from "../../shared/config/schema.ts";
import { liveHolder, resolveClaims } from "../../shared/idd/claims.ts";
import { renderClaimedBy, renderUnclaimedBy } from "../../shared/idd/comment-markers.ts";
import { deliverAll, install, issueRecord, seed, seedIssue, settle, sim } from "./helpers.ts";

const AGENTS = 20;
const ISSUES = 50;
const REPO = "fleet-sim/app";

type Held = { number: number; claimId: string; fence: number };
type Op =
  | { kind: "claim"; agent: number; issue: number | null }
  | { kind: "burst"; agents: number[] }
  | { kind: "heartbeat"; agent: number }
  | { kind: "release"; agent: number; outcome: "done" | "abandoned" | "failed" }
  | { kind: "crash"; agent: number }
  | { kind: "advance"; ms: number }
  | { kind: "alarm" }
  | { kind: "evict" }
  | { kind: "write"; agent: number; stale: boolean; lost: boolean; handoff: boolean };

const agent = fc.integer({ min: 0, max: AGENTS - 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("claim" as const),
      agent,
      issue: fc.option(fc.integer({ min: 1, max: ISSUES }), { nil: null }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("burst" as const),
      agents: fc.uniqueArray(agent, { minLength: 2, maxLength: 8 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("heartbeat" as const), agent }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("release" as const),
      agent,
      outcome: fc.constantFrom("done" as const, "abandoned" as const, "failed" as const),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("crash" as const), agent }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      ms: fc.integer({ min: 1_000, max: 3_600_000 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("alarm" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("write" as const),
      agent,
      stale: fc.boolean(),
      // GitHub applies the comment and its answer is lost (a 502 after applying).
      lost: fc.boolean(),
      // The holder then releases and a rival claims the issue at once.
      handoff: fc.boolean(),
    }),
  },
);

const record = (number: number) =>
  issueRecord(number, { id: 10_000 + number, labels: ["agent:ready"] });

let target: { repoId: number; installationId: number };

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
  const seeded = await seed({
    repo: REPO,
    issues: Array.from({ length: ISSUES }, (_, i) => seedIssue(i + 1, { labels: ["agent:ready"] })),
  });
  target = { repoId: seeded.repoId, installationId: seeded.installationId };
});

/** A fresh RepoObject holding the 50 issues, addressed to the simulator's repository. */
async function freshRepo(run: number) {
  const stub = env.REPO.get(env.REPO.idFromName(`fleet-sim-${run}-${crypto.randomUUID()}`));
  await runInDurableObject(stub, (o: RepoObject) => {
    o.store.transaction(() => {
      o.store.setIdentity({
        repoId: target.repoId,
        fullName: REPO,
        installationId: target.installationId,
        status: "active",
      });
      o.store.setConfig(
        {
          ok: true,
          // Mirroring is covered elsewhere; here every GitHub write is a fenced one.
          config: ConfigSchema.parse({ idd: { mirrorClaims: false }, claims: { maxAttempts: 4 } }),
        },
        "2026-11-01T00:00:00Z",
      );
      o.store.apply(
        Array.from({ length: ISSUES }, (_, i) => ({
          type: "issue" as const,
          issue: record(i + 1),
        })),
      );
    });
  });
  return stub;
}

async function commentBodies(numbers: Iterable<number>): Promise<Set<string>> {
  const out = new Set<string>();
  for (const n of numbers) {
    for (const c of await sim<Array<{ body: string }>>(`/repos/${REPO}/issues/${n}/comments`)) {
      // A fenced comment ends with its write marker: the holder's text is what came before.
      out.add(
        parseWriteMarker(c.body) === null ? c.body : c.body.replace(/\n\n<!--[^\n]*-->$/, ""),
      );
    }
  }
  return out;
}

describe("fleet simulation", () => {
  it("20 agents, 50 issues, crashes, clock jumps and evictions: one holder per issue, growing fences, stale writes rejected, expired claims come back", async () => {
    let run = 0;
    /** Grants refused because a write of the issue's earlier claim may still land. */
    let inFlightRefusals = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 5, maxLength: 30 }),
        fc.boolean(),
        async (ops, evictOnce) => {
          run += 1;
          const stub = await freshRepo(run);
          let now = Date.now();
          let maxFence = 0;
          const held = new Map<number, Held>();
          /** Fences known dead: released, or refused on heartbeat. */
          const spent: Held[] = [];
          const staleBodies: Array<{ number: number; body: string }> = [];
          const expiredOn = new Set<number>();
          const grantOf = (a: number, r: { status: number; body?: unknown }) => {
            if ((r.body as { reason?: string } | undefined)?.reason === "write-in-flight") {
              inFlightRefusals += 1;
            }
            if (r.status !== 201) return;
            const g = r.body as { claimId: string; fence: number; issue: { number: number } };
            expect(g.fence).toBeGreaterThan(maxFence); // fences strictly increase
            maxFence = g.fence;
            held.set(a, { number: g.issue.number, claimId: g.claimId, fence: g.fence });
          };
          const ops2 = evictOnce
            ? [
                ...ops.slice(0, ops.length >> 1),
                { kind: "evict" as const },
                ...ops.slice(ops.length >> 1),
              ]
            : ops;
          for (const [i, o] of ops2.entries()) {
            switch (o.kind) {
              case "claim": {
                if (held.has(o.agent)) break;
                grantOf(
                  o.agent,
                  await stub.claim(o.issue, { agentId: `agent-${o.agent}`, ttlSeconds: 600 }, now),
                );
                break;
              }
              case "burst": {
                const free = o.agents.filter((a) => !held.has(a));
                const results = await Promise.all(
                  free.map((a) =>
                    stub.claim(null, { agentId: `agent-${a}`, ttlSeconds: 600 }, now),
                  ),
                );
                const numbers = results
                  .filter((r) => r.status === 201)
                  .map((r) => (r.body as { issue: { number: number } }).issue.number);
                expect(new Set(numbers).size).toBe(numbers.length); // claim-next never hands one issue twice
                for (const [k, r] of results.entries()) {
                  if (r.status !== 201) continue;
                  const g = r.body as { claimId: string; fence: number; issue: { number: number } };
                  expect(g.fence).toBeGreaterThan(0);
                  held.set(free[k]!, {
                    number: g.issue.number,
                    claimId: g.claimId,
                    fence: g.fence,
                  });
                  maxFence = Math.max(maxFence, g.fence);
                }
                break;
              }
              case "heartbeat": {
                const h = held.get(o.agent);
                if (!h) break;
                const r = await stub.heartbeat(h.number, h, now);
                if (r.status !== 200) {
                  expect(r.status).toBe(409);
                  spent.push(h);
                  held.delete(o.agent);
                  expiredOn.add(h.number);
                }
                break;
              }
              case "release": {
                const h = held.get(o.agent);
                if (!h) break;
                const r = await stub.release(h.number, { ...h, outcome: o.outcome }, now);
                if (r.status === 409) expiredOn.add(h.number);
                else expect(r.status).toBe(200);
                spent.push(h);
                held.delete(o.agent);
                break;
              }
              case "crash": {
                const h = held.get(o.agent);
                if (h) {
                  // Its claim lives on until it expires: not a stale fence yet.
                  held.delete(o.agent);
                  expiredOn.add(h.number);
                }
                break;
              }
              case "advance":
                now += o.ms;
                break;
              case "alarm":
                await runInDurableObject(stub, (obj: RepoObject) => obj.claims.runExpiry(now));
                break;
              case "evict":
                await evictDurableObject(stub);
                break;
              case "write": {
                const h = o.stale ? spent[spent.length - 1] : held.get(o.agent);
                if (!h) break;
                const body = `sim-${run}-${i} ${o.stale ? "stale" : "fresh"} fence ${h.fence}`;
                if (o.lost) {
                  await sim("/faults", {
                    method: "PUT",
                    body: {
                      requests: [
                        {
                          method: "POST",
                          path: `/repos/${REPO}/issues/${h.number}/comments`,
                          status: 502,
                          phase: "after",
                        },
                      ],
                    },
                  });
                }
                const r = await stub.write(h.number, h, { kind: "comment", body }, now);
                if (o.lost) await sim("/faults", { method: "DELETE" });
                if (o.stale) {
                  expect(r.status).toBe(409);
                  staleBodies.push({ number: h.number, body });
                } else {
                  // Live (201), rate-limited (429), expired meanwhile (409), or its answer
                  // lost (502): never anything else.
                  expect([201, 409, 429, ...(o.lost ? [502] : [])]).toContain(r.status);
                  if (r.status === 409) staleBodies.push({ number: h.number, body });
                }
                if (o.handoff && !o.stale && held.get(o.agent) === h) {
                  // The holder gives up at once and a rival asks for the issue at the same
                  // instant: refused while the write may still land (a lost answer).
                  await stub.release(h.number, { ...h, outcome: "abandoned" }, now);
                  spent.push(h);
                  held.delete(o.agent);
                  const rival = [...Array(AGENTS).keys()].find((a) => !held.has(a));
                  if (rival !== undefined) {
                    const c = await stub.claim(
                      h.number,
                      { agentId: `agent-${rival}`, ttlSeconds: 600 },
                      now,
                    );
                    // Never granted while the lost write's record is open (stuck may be the reason given).
                    if (r.status === 502) expect(c.status).toBe(409);
                    grantOf(rival, c);
                  }
                }
                break;
              }
            }
            // Never two live holders of one issue.
            const live = (await stub.liveClaims(now)).body as {
              claims: Array<{ number: number; fence: number }>;
            };
            const numbers = live.claims.map((c) => c.number);
            expect(new Set(numbers).size).toBe(numbers.length);
            // No grant of a larger fence while a write record of fence f is open on the issue.
            const open = await runInDurableObject(stub, (obj: RepoObject) =>
              obj.store.writes.openAt(now),
            );
            for (const r of open) {
              for (const c of live.claims.filter((c) => c.number === r.number)) {
                expect(c.fence).toBeLessThanOrEqual(r.fence);
              }
            }
          }
          // Stale writes reached no GitHub state.
          if (staleBodies.length > 0) {
            const bodies = await commentBodies(new Set(staleBodies.map((s) => s.number)));
            for (const s of staleBodies) expect(bodies.has(s.body)).toBe(false);
          }
          // Two days later every claim has expired: each issue whose claim expired or was dropped
          // is claimable again, unless it is stuck (or was released done).
          now += 2 * 86_400_000;
          for (const number of expiredOn) {
            // The claim ends the claims due by `now` first, and the last of them can dead-letter
            // the issue: read its row as the claim will see it.
            const fleet = await runInDurableObject(stub, (o: RepoObject) => {
              o.claims.runExpiry(now);
              return o.store.claims.fleet(number);
            });
            const r = await stub.claim(number, { agentId: "auditor" }, now);
            if (fleet.stuck) expect(r.body).toMatchObject({ reason: "stuck" });
            else expect(r.status).toBe(201);
            if (r.status === 201) now += 1; // keep fences unique per instant; nothing else changes
            if (r.status === 201) {
              const g = r.body as { claimId: string; fence: number };
              await stub.release(
                number,
                { claimId: g.claimId, fence: g.fence, outcome: "done" },
                now,
              );
            }
          }
        },
      ),
      {
        numRuns: 100,
        // A lost write handed off at once is rare in random runs (about one op in a hundred,
        // and only when its agent holds a claim): this one meets it every time.
        examples: [
          [
            [
              { kind: "claim", agent: 0, issue: 1 },
              { kind: "write", agent: 0, stale: false, lost: true, handoff: true },
              { kind: "advance", ms: 60_000 },
              { kind: "claim", agent: 2, issue: 1 },
              { kind: "alarm" },
            ],
            false,
          ],
        ],
      },
    );
    // The runs did meet writes in flight (the invariant above was put to the test).
    expect(inFlightRefusals).toBeGreaterThan(0);
  }, 300_000);
});

// --- switchyard agents and IDD agents on the same issues ----------------------------------------
//
// Three switchyard agents (fleet API, mirroring on) and three IDD agents (markers on GitHub,
// following seed 002's "Claim verification": post `claimed-by`, wait the settle delay, re-read;
// a trusted competing claim in a strictly later second makes the claimant post `unclaimed-by`
// and stop; a claim IDD's reading ignored stops without a release) race for three issues, while
// GitHub loses answers to switchyard's marker posts, sits on or loses answers to its holders'
// fenced writes, and webhooks arrive late or never.
// Time is virtual: the simulator's clock stamps every comment, and verifications, the IDD
// agents' and switchyard's, run in the order of that clock (switchyard's is its marker's
// `created_at` plus IDD's settle delay plus its margin; the object's own verify times are
// parked so the runtime's clock never runs one early). Invariant at every quiet point (all
// webhooks delivered, every alarm and verification run): IDD's reading of each issue's comments
// (the shared IDD parser) and switchyard's live claims name the same holder, and an issue with
// a live claimant (a switchyard claim, an IDD agent that verified its claim) is never held by
// nobody.

const MIXED_ISSUES = 3;
const MIXED_AGENTS = 3;
const SY_SETTLE_MS = IDD_VERIFY_SETTLE_MS + PREEMPT_CHECK_MARGIN_MS;
/** Far beyond any virtual time of a run: where switchyard's own verify times wait. */
const PARKED_MS = 8_000_000_000_000;

type MixedOp =
  | { kind: "sy-claim"; agent: number; issue: number | null; lost: boolean }
  | { kind: "sy-heartbeat"; agent: number }
  | { kind: "sy-release"; agent: number }
  | { kind: "sy-write"; agent: number; fault: "none" | "lost" | "slow" }
  | { kind: "idd-claim"; agent: number; issue: number; blind: boolean; low: boolean }
  | { kind: "idd-release"; agent: number }
  | { kind: "advance"; ms: number }
  | { kind: "deliver" }
  | { kind: "lose-webhook" }
  | { kind: "quiet" };

const mixedAgent = fc.integer({ min: 0, max: MIXED_AGENTS - 1 });
const mixedIssue = fc.integer({ min: 1, max: MIXED_ISSUES });
const mixedOp: fc.Arbitrary<MixedOp> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("sy-claim" as const),
      agent: mixedAgent,
      issue: fc.option(mixedIssue, { nil: null }),
      // GitHub applies switchyard's next marker comment and its answer is lost (502).
      lost: fc.integer({ min: 0, max: 3 }).map((k) => k === 0),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("sy-heartbeat" as const), agent: mixedAgent }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("sy-release" as const), agent: mixedAgent }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("sy-write" as const),
      agent: mixedAgent,
      // GitHub applies the comment and its answer is lost, or answers after the client gave up
      // (a slow GitHub): either way its record stays open a margin.
      fault: fc.constantFrom("none" as const, "lost" as const, "slow" as const),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("idd-claim" as const),
      agent: mixedAgent,
      issue: mixedIssue,
      // Posts without reading first (its read predates the markers that landed since).
      blind: fc.boolean(),
      // Its claim-id sorts before switchyard's (`sy-…`): it wins a same-second tie.
      low: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("idd-release" as const), agent: mixedAgent }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      ms: fc.integer({ min: 0, max: 4_000 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("deliver" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("lose-webhook" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("quiet" as const) }) },
);

type SimComment = { id: number; user: string; body: string; created_at: string };
type IddClaim = { issue: number; claimId: string; postedMs: number; verified: boolean };

const isoSecond = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

describe("fleet simulation with IDD agents", () => {
  it("switchyard and IDD agents race for issues under lost answers and late webhooks: at every quiet point both readings name the same holder, and a live claimant is never left held by nobody", async () => {
    let run = 0;
    /** What the runs met: the protocols' meeting points, counted over all runs. */
    const met = { preempted: 0, reposted: 0, mirrorFailed: 0, backedOff: 0, ignored: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(mixedOp, { minLength: 6, maxLength: 18 }), async (ops) => {
        run += 1;
        await sim("/faults", { method: "DELETE" });
        const { stub, repo } = await install(
          {
            repo: `fleet-idd-${run}/app`,
            issues: Array.from({ length: MIXED_ISSUES }, (_, i) =>
              seedIssue(i + 1, { labels: ["agent:ready"] }),
            ),
          },
          { ".github/switchyard.yml": "claims:\n  maxAttempts: 100\n" },
        );
        await sim("/users", {
          body: { login: "writer", token: `tok-fleet-idd-${run}`, repos: { [repo]: "write" } },
        });
        // Virtual time starts on a whole second, a little ahead of the runtime's clock.
        let now = Math.ceil(Date.now() / 1000) * 1000 + 1000;
        const setClock = () => sim("/clock", { body: { now: new Date(now).toISOString() } });
        await setClock();
        const syHeld = new Map<number, Held>();
        const iddHeld = new Map<number, IddClaim>();
        let minted = 0;

        const commentsOf = (n: number) => sim<SimComment[]>(`/repos/${repo}/issues/${n}/comments`);
        const reading = async (n: number, claimId: string | null = null) => {
          const list = await commentsOf(n);
          const bots = [...new Set(list.map((c) => c.user).filter((u) => u.endsWith("[bot]")))];
          return resolveClaims(
            list.map((c) => ({
              id: c.id,
              createdAt: c.created_at,
              author: { login: c.user, type: c.user.endsWith("[bot]") ? "Bot" : "User" },
              body: c.body,
            })),
            { now: isoSecond(now), staleHours: 24, trusted: ["writer", ...bots], claimId },
          );
        };
        const postAsIdd = async (n: number, body: string) => {
          await sim(`/repos/${repo}/issues/${n}/comments`, { body: { body, actor: "writer" } });
        };
        /** The object's own verify times wait; the simulation runs them on the virtual clock. */
        const park = () =>
          runInDurableObject(stub, (o: RepoObject) => {
            o.store.sql`UPDATE claims SET verify_ms = ${PARKED_MS} WHERE verify_ms IS NOT NULL`;
          });
        /** Verifications waiting: the IDD agents' and switchyard's, each with its virtual due time. */
        const pending = async () => {
          const events: Array<{ dueMs: number; idd?: number; sy?: string }> = [];
          for (const [agent, c] of iddHeld) {
            if (!c.verified) events.push({ dueMs: c.postedMs + IDD_VERIFY_SETTLE_MS, idd: agent });
          }
          const waiting = await runInDurableObject(stub, (o: RepoObject) =>
            o.store.sql<{ claim_id: string; number: number }>`SELECT claim_id, number FROM claims
              WHERE verify_ms IS NOT NULL AND ended_ms IS NULL`.map((r) => ({
              claimId: r.claim_id,
              number: r.number,
            })),
          );
          for (const w of waiting) {
            const mine = (await commentsOf(w.number)).filter(
              (c) => c.body.startsWith("<!-- claimed-by:") && c.body.includes(` ${w.claimId} `),
            );
            const landed = mine.length > 0 ? Date.parse(mine.at(-1)!.created_at) : now;
            events.push({ dueMs: landed + SY_SETTLE_MS, sy: w.claimId });
          }
          return events.sort((a, b) => a.dueMs - b.dueMs);
        };
        /** IDD's claim verification (seed 002) for agent `agent`'s fresh claim. */
        const verifyIdd = async (agent: number) => {
          const c = iddHeld.get(agent)!;
          const read = await reading(c.issue, c.claimId);
          if (read.ownership === "owned") {
            c.verified = true;
            return;
          }
          iddHeld.delete(agent);
          // Only step 4 failed (the claim is its own, a later competitor stands): release first.
          if (read.ownership === "contested") met.backedOff += 1;
          else met.ignored += 1;
          if (read.ownership === "contested") {
            await postAsIdd(
              c.issue,
              renderUnclaimedBy({
                agentId: `idd-${agent}`,
                claimId: c.claimId,
                timestamp: isoSecond(now),
              }),
            );
          }
        };
        const verifySwitchyard = async (claimId: string) => {
          await runInDurableObject(stub, async (o: RepoObject) => {
            o.store
              .sql`UPDATE claims SET verify_ms = ${Date.now() - 1} WHERE claim_id = ${claimId}`;
            o.schedules.at("verify", Date.now() - 1);
            await o.schedules.rearm();
          });
          await runDurableObjectAlarm(stub);
          await park();
        };
        /** Time moves to `until`, running every verification due by then in clock order. */
        const runUntil = async (until: number) => {
          for (let guard = 0; guard < 50; guard++) {
            const next = (await pending())[0];
            if (!next || next.dueMs > until) break;
            if (next.dueMs > now) {
              now = next.dueMs;
              await setClock();
            }
            if (next.idd !== undefined) await verifyIdd(next.idd);
            else await verifySwitchyard(next.sy!);
          }
          if (until > now) {
            now = until;
            await setClock();
          }
        };
        /**
         * The object's schedules meet the virtual clock: what is due by `now` (a grant's mirror
         * writes are scheduled on the grant's clock) runs now.
         */
        const timePasses = () =>
          runInDurableObject(stub, async (o: RepoObject) => {
            o.store.sql`UPDATE schedules SET due_ms = ${Date.now()}
              WHERE leased = 0 AND due_ms <= ${now} AND due_ms > ${Date.now()}`;
            await o.schedules.rearm();
          });
        const settleObject = async () => {
          for (let i = 0; i < 3; i++) {
            await deliverAll();
            await timePasses();
            await settle(stub);
            await park();
          }
        };
        /** Everything delivered and run, then both readings compared, issue by issue. */
        const quiet = async () => {
          for (let round = 0; round < 12; round++) {
            await settleObject();
            const events = await pending();
            if (events.length === 0) break;
            await runUntil(events[0]!.dueMs);
          }
          await settleObject();
          expect(await pending()).toEqual([]);
          const live = (
            (await stub.liveClaims(now)).body as {
              claims: Array<{ number: number; claimId: string; agentId: string }>;
            }
          ).claims;
          for (let n = 1; n <= MIXED_ISSUES; n++) {
            const holder = liveHolder(await reading(n));
            const sy = live.filter((c) => c.number === n);
            const idd = [...iddHeld.values()].filter((c) => c.issue === n);
            expect(sy.length + idd.length).toBeLessThanOrEqual(1); // one live claimant
            const claimant = sy[0]?.claimId ?? idd[0]?.claimId ?? null;
            // Both readings name the same holder; a live claimant is never held by nobody.
            expect({ issue: n, holder: holder?.claimId ?? null }).toEqual({
              issue: n,
              holder: claimant,
            });
          }
          // Switchyard agents learn what became of their claims (preempted ones answer 409).
          for (const [agent, h] of syHeld) {
            if (!live.some((c) => c.claimId === h.claimId)) syHeld.delete(agent);
          }
        };

        for (const o of ops) {
          switch (o.kind) {
            case "sy-claim": {
              if (syHeld.has(o.agent)) break;
              if (o.lost) {
                await sim("/faults", {
                  method: "POST",
                  body: {
                    requests: [
                      {
                        method: "POST",
                        path: `/repos/${repo}/issues/*/comments`,
                        status: 502,
                        phase: "after",
                      },
                    ],
                  },
                });
              }
              const r = await stub.claim(
                o.issue,
                { agentId: `sy-agent-${o.agent}`, ttlSeconds: 3600 },
                now,
              );
              expect([201, 204, 409, 503]).toContain(r.status);
              if (r.status === 201) {
                const g = r.body as { claimId: string; fence: number; issue: { number: number } };
                syHeld.set(o.agent, { number: g.issue.number, claimId: g.claimId, fence: g.fence });
              }
              break;
            }
            case "sy-heartbeat": {
              const h = syHeld.get(o.agent);
              if (!h) break;
              const r = await stub.heartbeat(h.number, h, now);
              if (r.status !== 200) {
                expect(r.status).toBe(409);
                syHeld.delete(o.agent);
              }
              break;
            }
            case "sy-release": {
              const h = syHeld.get(o.agent);
              if (!h) break;
              const r = await stub.release(h.number, { ...h, outcome: "abandoned" }, now);
              expect([200, 409]).toContain(r.status);
              syHeld.delete(o.agent);
              break;
            }
            case "sy-write": {
              const h = syHeld.get(o.agent);
              if (!h) break;
              if (o.fault !== "none") {
                const path = `/repos/${repo}/issues/${h.number}/comments`;
                await sim("/faults", {
                  method: "POST",
                  body: {
                    requests: [
                      o.fault === "lost"
                        ? { method: "POST", path, status: 502, phase: "after" }
                        : { method: "POST", path, delayMs: 2_000 },
                    ],
                  },
                });
              }
              const r = await stub.write(h.number, h, { kind: "comment", body: "progress" }, now);
              expect([201, 409, 429, 502]).toContain(r.status);
              await sim("/faults", { method: "DELETE" });
              break;
            }
            case "idd-claim": {
              if (iddHeld.has(o.agent)) break;
              if (!o.blind && (await reading(o.issue)).freshClaim !== "claimable") break;
              minted += 1;
              const claimId = `${o.low ? "a" : "z"}-${run}-${minted}`;
              await postAsIdd(
                o.issue,
                renderClaimedBy({
                  agentId: `idd-${o.agent}`,
                  claimId,
                  supersedes: null,
                  timestamp: isoSecond(now),
                  branch: `issue/${o.issue}-x`,
                }),
              );
              iddHeld.set(o.agent, {
                issue: o.issue,
                claimId,
                postedMs: Math.floor(now / 1000) * 1000,
                verified: false,
              });
              break;
            }
            case "idd-release": {
              const c = iddHeld.get(o.agent);
              if (!c?.verified) break;
              await postAsIdd(
                c.issue,
                renderUnclaimedBy({
                  agentId: `idd-${o.agent}`,
                  claimId: c.claimId,
                  timestamp: isoSecond(now),
                }),
              );
              iddHeld.delete(o.agent);
              break;
            }
            case "advance":
              await runUntil(now + o.ms);
              break;
            case "deliver":
              await deliverAll();
              break;
            case "lose-webhook":
              await sim("/faults", {
                method: "POST",
                body: { webhooks: [{ event: "issue_comment", kind: "drop" }] },
              });
              break;
            case "quiet":
              await quiet();
              break;
          }
          await park();
          // No grant of a larger fence while a write record of fence f is open on the issue.
          const open = await runInDurableObject(stub, (obj: RepoObject) =>
            obj.store.writes.openAt(now),
          );
          const liveNow = (
            (await stub.liveClaims(now)).body as {
              claims: Array<{ number: number; fence: number }>;
            }
          ).claims;
          for (const r of open) {
            for (const c of liveNow.filter((c) => c.number === r.number)) {
              expect(c.fence).toBeLessThanOrEqual(r.fence);
            }
          }
        }
        await quiet();
        await sim("/faults", { method: "DELETE" });
        for (const e of await stub.auditLog(200)) {
          if (e.kind === "preempted") met.preempted += 1;
          if (e.kind === "marker-reposted") met.reposted += 1;
          if (e.kind === "mirror-failed") met.mirrorFailed += 1;
        }
      }),
      { numRuns: 20 },
    );
    await sim("/clock", { body: { now: null } });
    // The runs did put the protocols against each other (not only side by side).
    expect(met.preempted + met.backedOff).toBeGreaterThan(0);
  }, 600_000);
});
