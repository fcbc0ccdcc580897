import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildQueueView, buildQueueViewSteps } from "../../functions/objects/repo/queue-view.ts";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { compactOf, scanCompact } from "../../shared/graph/compact-analysis.ts";
import { decodeCursor, type GraphList, type PageCursor } from "../../shared/graph/pages.ts";
import { scratch } from "../../shared/graph/scratch.ts";
import type { GraphEvent, IssueRecord } from "../../shared/ingest/events.ts";
import { retentionCutoffs } from "../../shared/schedule/retention.ts";
import { MAX_PICTURE_NODES } from "../../shared/status/picture.ts";
import { renderGraphSvg } from "../../shared/status/svg.ts";
import { oraclePicture } from "../support/oracle/picture.ts";
import { oracleScan } from "../support/oracle/scan.ts";
import { install, seedIssue, sim } from "./helpers.ts";

const NOW_MS = Date.parse("2026-11-29T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
let nextRepoId = 9100;

/** A fresh RepoObject marked as reconciled: these tests are about reading the graph. */
async function freshRepo() {
  const id = nextRepoId++;
  const stub = env.REPO.get(env.REPO.idFromName(String(id)));
  await runInDurableObject(stub, (o: RepoObject) => {
    o.store.setIdentity({
      repoId: id,
      fullName: "acme/pages",
      installationId: 91,
      status: "active",
    });
    o.store.updateWatermarks({ lastFullReconcileAt: "2026-11-29T00:00:00Z" });
  });
  return stub;
}

function issue(number: number, patch: Partial<IssueRecord> = {}): IssueRecord {
  return {
    number,
    id: 100_000 + number,
    title: `Issue ${number}`,
    state: "open",
    stateReason: null,
    createdAt: "2026-11-01T00:00:00Z",
    updatedAt: "2026-11-28T00:00:00Z",
    closedAt: null,
    labels: [],
    body: null,
    ...patch,
  };
}

/** Every page of one list, following `next` from the first page. */
async function allPages(
  stub: DurableObjectStub<RepoObject>,
  list: GraphList,
  limit: number,
  machine?: string,
): Promise<unknown[]> {
  const out: unknown[] = [];
  let cursor: PageCursor | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await stub.graphPage(
      { list, limit, ...(cursor ? { cursor } : {}) },
      NOW_MS,
      machine,
    );
    out.push(...page.items);
    if (page.next === null) return out;
    cursor = decodeCursor(page.next) ?? undefined;
  }
  throw new Error("no last page");
}

describe("graph API pages", () => {
  it("concatenated pages of blocked, ready and kicks equal the unpaged lists", async () => {
    const stub = await freshRepo();
    await runInDurableObject(stub, (o: RepoObject) => {
      const events: GraphEvent[] = [];
      for (let n = 1; n <= 300; n++) events.push({ type: "issue", issue: issue(n) });
      // #1..#150 are each blocked by #(n + 150); the even blockers then close: kicks.
      for (let n = 1; n <= 150; n++)
        events.push({
          type: "blocked-by",
          issue: n,
          blocker: n + 150,
          present: true,
          at: "2026-11-28T01:00:00Z",
        });
      // #301..#320 each have one sub-issue, #(152 + 2k), closed below: rollup candidates.
      for (let k = 0; k < 20; k++) {
        events.push({ type: "issue", issue: issue(301 + k) });
        events.push({
          type: "parent",
          child: 152 + 2 * k,
          parent: 301 + k,
          at: "2026-11-28T01:00:00Z",
        });
      }
      o.store.apply(events);
      o.store.apply(
        Array.from({ length: 75 }, (_, k) => ({
          type: "issue" as const,
          issue: issue(152 + 2 * k, {
            state: "closed",
            stateReason: "completed",
            closedAt: "2026-11-29T11:00:00Z",
            updatedAt: "2026-11-29T11:00:00Z",
          }),
        })),
      );
    });
    const whole = await stub.graph(NOW_MS, "m-7", 1000);
    expect(whole.blocked).toHaveLength(75);
    expect(whole.kicks).toHaveLength(75 + 20);
    expect(whole.rollupCandidates).toHaveLength(20);
    expect(whole.ready.length).toBe(75 + 75 + 20);
    expect(whole.pages.ready).toEqual({ total: 170, next: null });

    const first = await stub.graph(NOW_MS, "m-7", 20);
    expect(first.blocked).toEqual(whole.blocked.slice(0, 20));
    expect(first.pages.blocked.total).toBe(75);
    expect(first.pages.blocked.next).not.toBeNull();
    expect(first.stats).toEqual(whole.stats);

    for (const limit of [1, 7, 20, 100]) {
      expect(await allPages(stub, "blocked", limit, "m-7")).toEqual(whole.blocked);
      expect(await allPages(stub, "ready", limit, "m-7")).toEqual(whole.ready);
      expect(await allPages(stub, "kicks", limit, "m-7")).toEqual(whole.kicks);
      expect(await allPages(stub, "rollupCandidates", limit, "m-7")).toEqual(
        whole.rollupCandidates,
      );
    }
    // The first page's cursor continues where the overview stopped.
    const next = await stub.graphPage(
      { list: "blocked", limit: 20, cursor: decodeCursor(first.pages.blocked.next!)! },
      NOW_MS,
      "m-7",
    );
    expect(next.items).toEqual(whole.blocked.slice(20, 40));

    // The compact graph kept current event by event answers what the plain scan of the stored
    // rows answers, and what a compact graph streamed from the tables answers.
    await runInDurableObject(stub, (o: RepoObject) => {
      const now = iso(NOW_MS);
      const config = o.store.config();
      const { causes } = o.store.pendingCloses(o.store.watermarks().producer.seq);
      const options = { now, config, causes, machine: "m-7" };
      const plain = oracleScan(o.store.snapshot(now), options);
      expect(scanCompact(o.store.compactGraph(), options)).toEqual(plain);
      expect(scanCompact(o.store.reads.compact("acme/pages", config.labels), options)).toEqual(
        plain,
      );
      expect(plain.ready).toEqual(whole.ready);
      expect(plain.blocked).toEqual(whole.blocked);
      expect(plain.kicks).toEqual(whole.kicks);
      expect(plain.rollupCandidates).toEqual(whole.rollupCandidates);
    });
  });

  it("over HTTP: following `next` from the first page gives the unpaged lists; bad cursors are 400", async () => {
    const { exports } = await import("cloudflare:workers");
    const issues = [];
    for (let n = 1; n <= 24; n++)
      issues.push(seedIssue(n, n % 3 === 0 && n < 24 ? { blockedBy: [n + 1] } : {}));
    await install({ repo: "pages-http/app", issues });
    const token = "ghp_pagesHttpReader";
    await sim("/users", {
      body: { login: "pages-reader", token, repos: { "pages-http/app": "write" } },
    });
    const get = async (query: string) => {
      const r = await exports.default.fetch(
        `https://switchyard.test/v1/repos/pages-http/app/graph${query}`,
        { headers: { authorization: `Bearer ${token}` } },
      );
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    const whole = (await get("?machine=m2&limit=1000")).body as {
      ready: number[];
      blocked: unknown[];
      pages: Record<string, { next: string | null }>;
    };
    expect(whole.ready.length).toBe(17);
    expect(whole.blocked.length).toBe(7);
    const first = (await get("?machine=m2&limit=5")).body as typeof whole;
    for (const list of ["ready", "blocked"] as const) {
      const items = [...first[list]];
      let next = first.pages[list]!.next;
      while (next !== null) {
        const page = await get(`?machine=m2&list=${list}&limit=5&cursor=${next}`);
        expect(page.status).toBe(200);
        items.push(...(page.body.items as unknown[]));
        next = page.body.next as string | null;
      }
      expect(items).toEqual(whole[list]);
    }
    const bad = await get("?list=ready&cursor=not-a-cursor");
    expect(bad.status).toBe(400);
    expect(String(bad.body.message)).toMatch(/^query cursor: /);
    const other = await get(`?list=blocked&cursor=${first.pages.ready!.next}`);
    expect(other.status).toBe(400);
    expect(String(other.body.message)).toMatch(/^query cursor: a cursor of list ready/);
  });

  it("serves the kept scan until the graph changes", async () => {
    const stub = await freshRepo();
    await runInDurableObject(stub, async (o: RepoObject) => {
      o.store.apply([{ type: "issue", issue: issue(1) }]);
      const a = o.scans.current(NOW_MS);
      expect(o.scans.current(NOW_MS + 1000)).toBe(a);
      o.store.apply([{ type: "issue", issue: issue(2) }]);
      const b = o.scans.current(NOW_MS + 2000);
      expect(b).not.toBe(a);
      expect(b.result.ready).toEqual([1, 2]);
      // The replaced scan's arrays went back to the pool: it reads nothing any more.
      expect(a.compact.openOrder.length).toBe(0);
      expect(b.compact.openOrder.length).toBe(2);
      // Made in steps with pauses; a change landing in a pause voids the work (made again).
      o.store.apply([{ type: "issue", issue: issue(3) }]);
      let pauses = 0;
      await o.scans.prepare(NOW_MS + 3000, async () => {
        pauses += 1;
        if (pauses === 2) o.store.apply([{ type: "issue", issue: issue(4) }]);
      });
      expect(pauses).toBeGreaterThan(4);
      const c = o.scans.current(NOW_MS + 3000);
      expect(c.result.ready).toEqual([1, 2, 3, 4]);
      expect(o.scans.current(NOW_MS + 3000)).toBe(c);
    });
  });

  it("serves a scan made before a change (while a reconcile streams) only if it was rendered then", async () => {
    const stub = await freshRepo();
    await runInDurableObject(stub, async (o: RepoObject) => {
      o.store.apply([{ type: "issue", issue: issue(1) }]);
      // Never read: its lists would be rendered from slots the change may have moved.
      const unread = o.scans.current(NOW_MS);
      expect(o.scans.recent(NOW_MS + 1000, 5_000)).toBe(unread);
      o.store.apply([{ type: "issue", issue: issue(2) }]);
      expect(o.scans.recent(NOW_MS + 1000, 5_000)).toBeNull();
      // Read before the change: what it showed then is what it shows.
      const read = o.scans.current(NOW_MS + 1000);
      expect(read.result.ready).toEqual([1, 2]);
      o.store.apply([{ type: "issue", issue: issue(3) }]);
      const served = o.scans.recent(NOW_MS + 2000, 5_000);
      expect(served).toBe(read);
      expect(served?.result.ready).toEqual([1, 2]);
      // While a full reconcile runs, a scan made for the producer (which never reads the lists)
      // is rendered at once, so the pages landing next do not make readers scan again.
      o.store.reconcileRuns.start({ runId: "r", generation: 0, startedMs: NOW_MS, labels: "[]" });
      const planned = o.scans.current(NOW_MS + 3000);
      expect(planned.rendered()).toBe(true);
      o.store.apply([{ type: "issue", issue: issue(4) }]);
      expect(o.scans.recent(NOW_MS + 4000, 5_000)).toBe(planned);
      expect(planned.result.ready).toEqual([1, 2, 3]);
    });
  });

  it("keeps the scan and the queue view through retitlings, and shows the new titles", async () => {
    const stub = await freshRepo();
    await runInDurableObject(stub, async (o: RepoObject) => {
      const ready = { labels: ["agent:ready"] };
      o.store.apply([1, 2, 3].map((n) => ({ type: "issue" as const, issue: issue(n, ready) })));
      const scan = o.scans.current(NOW_MS);
      const view = o.views.current(NOW_MS);
      const retitle = (n: number, title: string, at: string) =>
        o.store.apply([{ type: "issue", issue: issue(n, { ...ready, title, updatedAt: at }) }]);
      expect(retitle(2, "Renamed", "2026-11-28T01:00:00Z")).not.toEqual([]);
      expect(o.scans.current(NOW_MS)).toBe(scan);
      expect(o.views.current(NOW_MS)).toBe(view);
      const queued = o.views.answer({ limit: 10 }, NOW_MS).body as {
        items: Array<{ number: number; title: string }>;
      };
      expect(queued.items.map((i) => [i.number, i.title])).toEqual([
        [1, "Issue 1"],
        [2, "Renamed"],
        [3, "Issue 3"],
      ]);

      // The compact graph dropped and made anew (the daily prune does), then a retitling: the
      // view of the old graph does not hold, or its titles would stay the old ones.
      o.store.prune(retentionCutoffs(NOW_MS));
      o.scans.current(NOW_MS);
      retitle(3, "Renamed after the prune", "2026-11-28T01:30:00Z");
      const afterPrune = o.views.answer({ limit: 10 }, NOW_MS).body as typeof queued;
      expect(afterPrune.items.find((i) => i.number === 3)?.title).toBe("Renamed after the prune");

      // A retitling landing in a pause does not void a scan in the making: one attempt's pauses.
      o.store.apply([{ type: "issue", issue: issue(4, ready) }]);
      let alone = 0;
      await o.scans.prepare(NOW_MS, async () => {
        alone += 1;
      });
      o.store.apply([{ type: "issue", issue: issue(5, ready) }]);
      let pauses = 0;
      await o.scans.prepare(NOW_MS, async () => {
        pauses += 1;
        if (pauses === 2) retitle(1, "Renamed too", "2026-11-28T02:00:00Z");
      });
      expect(pauses).toBe(alone);
      expect(o.scans.current(NOW_MS).result.ready).toEqual([1, 2, 3, 4, 5]);

      // Anything else the rules read does make them anew: a label, a close, a requirement.
      const kept = o.scans.current(NOW_MS);
      o.store.apply([
        { type: "issue", issue: issue(3, { labels: [], updatedAt: "2026-11-28T03:00:00Z" }) },
      ]);
      const relabelled = o.scans.current(NOW_MS);
      expect(relabelled).not.toBe(kept);
      o.store.apply([
        {
          type: "issue",
          issue: issue(2, {
            ...ready,
            title: "Renamed",
            state: "closed",
            closedAt: "2026-11-28T04:00:00Z",
            updatedAt: "2026-11-28T04:00:00Z",
          }),
        },
      ]);
      const closed = o.scans.current(NOW_MS);
      expect(closed).not.toBe(relabelled);
      expect(closed.result.ready).toEqual([1, 3, 4, 5]);
      const before = o.views.current(NOW_MS);
      o.store.apply([
        {
          type: "issue",
          issue: issue(4, {
            ...ready,
            body: "<!-- requires: gpu -->",
            updatedAt: "2026-11-28T05:00:00Z",
          }),
        },
      ]);
      expect(o.scans.current(NOW_MS)).not.toBe(closed);
      const after = o.views.current(NOW_MS);
      expect(after).not.toBe(before);
      expect(compactOf(before.analysis)?.flags.length).toBe(0);
      expect(compactOf(after.analysis)?.flags.length).toBeGreaterThan(0);
      expect(after.items.find((i) => i.number === 4)?.requires).toEqual(["gpu"]);
    });
  });

  it("a graph read in chunks, with events landing between chunks, equals the tables", async () => {
    const stub = await freshRepo();
    await runInDurableObject(stub, async (o: RepoObject) => {
      const at = (m: number) => iso(NOW_MS - 3_600_000 + m * 60_000);
      const seed: GraphEvent[] = [];
      for (let n = 1; n <= 60; n++) {
        seed.push({
          type: "issue",
          issue: issue(n, { labels: n % 5 === 0 ? ["agent:ready"] : [] }),
        });
        seed.push({
          type: "blocked-by",
          issue: n,
          blocker: (n % 60) + 1,
          present: true,
          at: at(1),
        });
        if (n % 3 === 0) seed.push({ type: "parent", child: n, parent: n - 1, at: at(1) });
        seed.push({
          type: "label-event",
          number: n,
          label: "agent:ready",
          action: "labeled",
          actor: "octo",
          at: at(2),
        });
      }
      o.store.apply(seed);
      // Drop what the seeding built: the next read streams the tables again.
      o.store.prune(retentionCutoffs(NOW_MS));
      let k = 0;
      const changes: GraphEvent[][] = [
        [{ type: "blocked-by", issue: 3, blocker: 4, present: false, at: at(5) }],
        [
          {
            type: "issue",
            issue: issue(59, { state: "closed", closedAt: at(6), updatedAt: at(6) }),
          },
        ],
        [{ type: "issue-removed", number: 2, at: at(7) }],
        [
          {
            type: "label-event",
            number: 55,
            label: "agent:ready",
            action: "unlabeled",
            actor: null,
            at: at(8),
          },
        ],
        [{ type: "parent", child: 57, parent: null, previous: 56, at: at(9) }],
        [{ type: "issue", issue: issue(61) }],
      ];
      await o.store.prepareGraph(async () => {
        const batch = changes[k++ % changes.length]!;
        o.store.apply(batch);
      }, 7);
      expect(k).toBeGreaterThan(10);
      const now = iso(NOW_MS);
      const options = { now, config: o.store.config() };
      expect(scanCompact(o.store.compactGraph(), options)).toEqual(
        oracleScan(o.store.snapshot(now), options),
      );
    });
  });

  it("the compact graph follows random events applied through the store (property)", async () => {
    const ref = fc.oneof(
      { weight: 5, arbitrary: fc.integer({ min: 1, max: 8 }) as fc.Arbitrary<number | string> },
      { weight: 1, arbitrary: fc.constantFrom("other/lib#1", "acme/pages#2") },
    );
    const at = fc.integer({ min: 0, max: 20 }).map((m) => iso(NOW_MS - 3_600_000 + m * 60_000));
    const event: fc.Arbitrary<GraphEvent> = fc.oneof(
      fc
        .record({
          n: fc.integer({ min: 1, max: 8 }),
          closed: fc.boolean(),
          labels: fc.uniqueArray(
            fc.constantFrom("agent:ready", "agent:hold", "agent:processing", "bug"),
            { maxLength: 2 },
          ),
          body: fc.constantFrom(null, "<!-- requires: gpu -->", "plain"),
          at,
        })
        .map(({ n, closed, labels, body, at }) => ({
          type: "issue" as const,
          issue: issue(n, {
            state: closed ? "closed" : "open",
            stateReason: closed ? "completed" : null,
            closedAt: closed ? at : null,
            updatedAt: at,
            labels,
            body,
          }),
        })),
      fc
        .record({ issue: fc.integer({ min: 1, max: 8 }), blocker: ref, present: fc.boolean(), at })
        .map((e) => ({ type: "blocked-by" as const, ...e })),
      fc
        .record({
          child: fc.integer({ min: 1, max: 8 }),
          parent: fc.option(ref, { nil: null }),
          at,
        })
        .map((e) => ({ type: "parent" as const, ...e })),
      fc
        .record({ number: fc.integer({ min: 1, max: 8 }), at })
        .map((e) => ({ type: "issue-removed" as const, ...e })),
      fc
        .record({
          number: fc.integer({ min: 1, max: 8 }),
          label: fc.constantFrom("agent:ready", "needs-human-confirm", "agent:processing"),
          action: fc.constantFrom("labeled" as const, "unlabeled" as const),
          at,
        })
        .map((e) => ({ type: "label-event" as const, actor: "octo", ...e })),
      fc
        .record({ state: fc.constantFrom("open" as const, "closed" as const), at })
        .map(({ state, at }) => ({
          type: "external" as const,
          ref: "other/lib#1",
          state,
          closedAt: state === "closed" ? at : null,
          at,
        })),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(event, { maxLength: 4 }), { maxLength: 8 }),
        async (batches) => {
          const stub = await freshRepo();
          await runInDurableObject(stub, (o: RepoObject) => {
            // Built first, so every later change reaches it as an in-place update.
            o.store.compactGraph();
            const now = iso(NOW_MS);
            for (const batch of batches) {
              o.store.apply(batch);
              const options = { now, config: o.store.config() };
              expect(scanCompact(o.store.compactGraph(), options)).toEqual(
                oracleScan(o.store.snapshot(now), options),
              );
            }
            const graph = o.store.compactGraph();
            for (const i of o.store.snapshot(now).issues) {
              const stored = o.store.sql<{ requires: string | null }>`
              SELECT requires FROM issues WHERE number = ${i.number}`[0]!.requires;
              expect([...graph.requiresOf(graph.presentSlot(i.number))]).toEqual(
                stored === null ? [] : JSON.parse(stored),
              );
            }
          });
        },
      ),
      { numRuns: 25 },
    );
  }, 60_000);
});

describe("status page picture", () => {
  it("draws from the kept scan and the chosen issues what the oracle draws from every issue", async () => {
    const stub = await freshRepo();
    // 450 issues with parents and blockers (own, own spelled with the repository, and in other
    // repositories), a third closed, some held, waiting on a human or locked: the picture keeps 300.
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const at = "2026-11-28T01:00:00Z";
    await runInDurableObject(stub, (o: RepoObject) => {
      const { labels } = o.store.config();
      const events: GraphEvent[] = [];
      for (let n = 1; n <= 450; n++) {
        const closed = next(3) === 0;
        const tag = next(10);
        events.push({
          type: "issue",
          issue: issue(n, {
            title: `Issue ${n} <&>`,
            labels: [[labels.hold], [labels.needsHuman], [labels.processing]][tag] ?? [],
            ...(closed
              ? { state: "closed", stateReason: "completed", closedAt: "2026-11-29T10:00:00Z" }
              : {}),
          }),
        });
        if (tag === 2) {
          events.push({
            type: "label-event",
            number: n,
            label: labels.processing,
            action: "labeled",
            actor: "bot",
            at: "2026-11-29T11:50:00Z",
          });
        }
        if (n > 1 && next(4) === 0)
          events.push({ type: "parent", child: n, parent: 1 + next(n - 1), at });
        for (let k = next(3); k > 0; k--) {
          const pick = next(20);
          const blocker =
            pick === 0 ? "other/lib#3" : pick === 1 ? `acme/pages#${1 + next(450)}` : 1 + next(460);
          events.push({ type: "blocked-by", issue: n, blocker, present: true, at });
        }
      }
      o.store.apply(events);
    });
    const [bounded, whole] = await runInDurableObject(stub, async (o: RepoObject) => {
      const view = await o.statusView(NOW_MS);
      const marks = {
        queued: new Set(view.queue.items.map((i) => i.number)),
        claimed: new Set(view.claims.map((c) => c.number)),
        stuck: new Set(view.deadLetters.map((d) => d.number)),
      };
      return [
        view.picture,
        oraclePicture(o.store.snapshot(iso(NOW_MS)), o.store.config(), marks),
      ] as const;
    });
    expect(whole.nodes).toHaveLength(MAX_PICTURE_NODES);
    expect(whole.leftOut).toBe(450 - MAX_PICTURE_NODES);
    // Every kind appears, and open issues were left out too (the cut falls inside the ranking).
    expect(new Set(whole.nodes.map((n) => n.kind))).toEqual(
      new Set(["ready", "claimed", "blocked", "held", "open"]),
    );
    expect(whole.nodes.filter((n) => n.kind !== "closed").length).toBe(MAX_PICTURE_NODES);
    expect(bounded).toEqual(whole);
    const issueUrl = (n: number) => `https://github.com/acme/pages/issues/${n}`;
    expect(renderGraphSvg(bounded, { issueUrl })).toBe(renderGraphSvg(whole, { issueUrl }));
  });
});

describe("queue view made in steps", () => {
  it("pauses between its passes, starts again when the graph changes in a pause, and equals the view made at once", async () => {
    const stub = await freshRepo();
    await runInDurableObject(stub, async (o: RepoObject) => {
      o.store.apply(
        [1, 2, 3].map((n) => ({
          type: "issue" as const,
          issue: issue(n, { labels: ["agent:ready"] }),
        })),
      );
      let pauses = 0;
      await o.views.prepare(NOW_MS, async () => {
        pauses += 1;
        if (pauses === 2) {
          o.store.apply([{ type: "issue", issue: issue(4, { labels: ["agent:ready"] }) }]);
        }
      });
      expect(pauses).toBeGreaterThan(4);
      // Kept for the graph as it is now: the synchronous read takes it as it is.
      const kept = (o.views as unknown as { view: { version: number } | null }).view;
      expect(kept?.version).toBe(o.store.rulesVersion);
      const prepared = o.views.current(NOW_MS);
      expect(prepared).toBe(kept);
      expect(prepared.items.map((i) => i.number)).toEqual([1, 2, 3, 4]);
      expect(prepared.items).toEqual(buildQueueView(o.store, o.store.claims, NOW_MS).items);
    });
  });

  it("gives its analysis's arrays back when voided after the analysis finished", async () => {
    const stub = await freshRepo();
    await runInDurableObject(stub, async (o: RepoObject) => {
      // Enough issues for arrays the pool keeps (4 KiB and up).
      o.store.apply(
        Array.from({ length: 1_500 }, (_, i) => ({ type: "issue" as const, issue: issue(i + 1) })),
      );
      const steps = () => buildQueueViewSteps(o.store, o.store.claims, NOW_MS);
      let count = 0;
      for (const whole = steps(); !whole.next().done; ) count += 1;
      // Stopped at its last pause: the analysis is done, the view is not.
      const voided = steps();
      for (let k = 0; k < count; k++) voided.next();
      const kept = scratch.keptBytes;
      voided.return(undefined as never);
      expect(scratch.keptBytes).toBeGreaterThan(kept);
    });
  });
});
