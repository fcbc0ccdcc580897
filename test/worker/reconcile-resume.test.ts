// The full reconcile streams page by page across alarm runs (RECONCILE_PAGE_SIZE 20 and
// RECONCILE_PAGES_PER_RUN 2 in vitest.worker.config.ts): cut short after k pages, by a thrown
// fault or an eviction, it resumes from its persisted cursor and ends where an uninterrupted
// one ends; and it never removes an issue before it has read every page.
import {
  abortAllDurableObjects,
  evictDurableObject,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installationClient } from "../../functions/github-client.ts";
import { reconcileFull } from "../../functions/objects/repo/reconcile-fetch.ts";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { MemoryTokenCache } from "../../shared/github/auth.ts";
import type { Snapshot, SnapshotInput } from "../../shared/graph/snapshot.ts";
import { DAY_MS, formatInstant } from "../../shared/graph/time.ts";
import {
  faultsLeft,
  install,
  postLabelDeleted,
  repoStub,
  seed,
  seedClosed,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";
import { facts } from "./random-ops.ts";

type SeedIssue = SnapshotInput["issues"][number];
type Stub = Awaited<ReturnType<typeof install>>["stub"];

/** RECONCILE_PAGE_SIZE and RECONCILE_PAGES_PER_RUN of the test Worker. */
const PAGE = 20;
const PAGES_PER_RUN = 2;
const PAGE_QUERY = "POST /graphql SwitchyardIssuesPage";

const shape = fc.record({
  closed: fc.boolean(),
  blocker: fc.option(fc.nat(), { nil: null }),
  parent: fc.option(fc.nat(), { nil: null }),
  label: fc.constantFrom(null, "bug", "agent:hold"),
});

/** Issues #1..#n; each blocker and parent is an earlier issue. */
function issuesOf(shapes: Array<typeof shape extends fc.Arbitrary<infer T> ? T : never>) {
  return shapes.map((s, i): SeedIssue => {
    const n = i + 1;
    const extra: Partial<SeedIssue> = {};
    if (n > 1 && s.blocker !== null) extra.blockedBy = [(s.blocker % (n - 1)) + 1];
    if (n > 1 && s.parent !== null) extra.parent = (s.parent % (n - 1)) + 1;
    if (s.label) extra.labels = [s.label];
    return s.closed ? seedClosed(n, 3 * DAY_MS, extra) : seedIssue(n, extra);
  });
}

const stored = (stub: Stub) => runInDurableObject(stub, (o: RepoObject) => o.store.snapshot());

/** The stored graph without what differs between two repositories seeded alike. */
async function graphOf(stub: Stub) {
  const { repo: _repo, now: _now, ...rest } = await stored(stub);
  return rest;
}

async function fullReconciles(stub: Stub) {
  return (await stub.auditLog(500)).filter(
    (a) => a.kind === "reconcile" && (a.detail as { kind: string }).kind === "full",
  ) as unknown as Array<{ detail: { corrected: string[]; run: { runId: string; pages: number } } }>;
}

/** One step of the full reconcile inside the object (the `reconcile-full` schedule's work). */
function fullStep(o: RepoObject, settings = { pageSize: PAGE, pagesPerRun: PAGES_PER_RUN }) {
  const identity = o.store.identity()!;
  const client = installationClient(env, identity.installationId, new MemoryTokenCache(), "test", {
    id: identity.repoId,
    fullName: identity.fullName,
  });
  return reconcileFull(o.store, client, Date.now, settings);
}

/** Successful page requests since the counters were reset. */
async function pagesServed(): Promise<number> {
  const counters = await sim<{
    byEndpoint: Record<string, { statuses: Record<string, number> }>;
  }>("/counters");
  return counters.byEndpoint[PAGE_QUERY]?.statuses["200"] ?? 0;
}

/** Every page request from the (k+1)-th on fails (502 past the client's retries). */
function failPagesAfter(k: number) {
  return sim("/faults", {
    method: "PUT",
    body: {
      requests: [
        {
          method: "POST",
          path: "/graphql",
          operation: "SwitchyardIssuesPage",
          skip: k,
          status: 502,
          times: 1000,
        },
      ],
    },
  });
}

async function startFullReconcile(stub: Stub) {
  await runInDurableObject(stub, async (o: RepoObject) => {
    o.schedules.at("reconcile-full", Date.now());
    await o.schedules.rearm();
  });
}

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});
beforeEach(async () => {
  await sim("/faults", { method: "DELETE" });
});

describe("streaming, resumable full reconcile", () => {
  let run = 0;

  it("cut short after k pages (a thrown fault, an eviction), resumes from its cursor and ends equal to an uninterrupted one", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(shape, { minLength: 2 * PAGE + 1, maxLength: 4 * PAGE + 10 }),
        fc.nat(),
        fc.constantFrom("fault" as const, "evict" as const),
        async (shapes, kRaw, how) => {
          run += 1;
          const issues = issuesOf(shapes);
          const pages = Math.ceil(issues.length / PAGE);
          const k = kRaw % pages;
          const twin = await install({ repo: `resume-twin${run}/app`, issues });

          await sim("/counters/reset", { method: "POST" });
          await failPagesAfter(k);
          const { stub, repo } = await install({ repo: `resume${run}/app`, issues });
          const during = (await stub.status()).reconcile;
          expect(during).toMatchObject({ pagesDone: k, issuesSeen: k * PAGE, restarts: 0 });
          expect((await stored(stub)).issues).toHaveLength(k * PAGE);
          expect((await stub.graph()).watermarks.lastFullReconcileAt).toBeNull();

          if (how === "evict") await evictDurableObject(stub);
          await sim("/faults", { method: "DELETE" });
          // The cron's trigger arrives: the run in progress goes on, it does not begin again.
          expect(await stub.armReconcile()).toBe(true);
          await settle(stub);

          expect((await stub.status()).reconcile).toBeNull();
          const full = await fullReconciles(stub);
          expect(full).toHaveLength(1);
          expect(full[0]!.detail.run).toMatchObject({ runId: during!.runId, pages });
          // No page was read twice: the run went on from its cursor.
          expect(await pagesServed()).toBe(pages);
          expect(await graphOf(stub)).toEqual(await graphOf(twin.stub));
          const truth = await sim<Snapshot>(`/repos/${repo}/snapshot`);
          expect(facts(await stored(stub))).toEqual(facts(truth));
          expect((await stub.graph()).watermarks.lastFullReconcileAt).not.toBeNull();
        },
      ),
      { numRuns: 6 },
    );
  }, 240_000);

  it("never removes an issue from a partial run: one missing only from unread pages stays until the run completes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(shape, { minLength: 2 * PAGE + 1, maxLength: 3 * PAGE + 10 }),
        fc.nat(),
        fc.nat(),
        fc.constantFrom("fault" as const, "evict" as const),
        async (shapes, kRaw, xRaw, how) => {
          run += 1;
          const issues = issuesOf(shapes);
          const { stub, repo } = await install({ repo: `partial${run}/app`, issues });
          expect(await fullReconciles(stub)).toHaveLength(1);
          // Deleted on GitHub in a page the next run reads after it is cut short; the webhook is
          // lost, so only a full reconcile can find out.
          const pages = Math.ceil((issues.length - 1) / PAGE);
          const k = kRaw % pages;
          const x = k * PAGE + 1 + (xRaw % (issues.length - k * PAGE));
          await sim(`/repos/${repo}/issues/${x}`, { method: "DELETE" });
          await sim("/outbox/drain", { method: "POST" });

          await failPagesAfter(k);
          await startFullReconcile(stub);
          await settle(stub);
          expect((await stub.status()).reconcile).toMatchObject({ pagesDone: k });
          expect((await stored(stub)).issues.map((i) => i.number)).toContain(x);

          if (how === "evict") await evictDurableObject(stub);
          await sim("/faults", { method: "DELETE" });
          await startFullReconcile(stub);
          await settle(stub);

          expect((await stub.status()).reconcile).toBeNull();
          expect((await stored(stub)).issues.map((i) => i.number)).not.toContain(x);
          const full = await fullReconciles(stub);
          expect(full).toHaveLength(2);
          expect(full[0]!.detail.corrected).toContain(`issue #${x} removed`);
          const truth = await sim<Snapshot>(`/repos/${repo}/snapshot`);
          expect(facts(await stored(stub))).toEqual(facts(truth));
        },
      ),
      { numRuns: 6 },
    );
  }, 240_000);

  it("a step killed in the middle of a page resumes from its cursor after the retry backoff, not its lease", async () => {
    const issues = Array.from({ length: 3 * PAGE }, (_, i) => seedIssue(i + 1));
    const { stub, repoId } = await install({ repo: "resume-abort/app", issues });
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          {
            method: "POST",
            path: "/graphql",
            operation: "SwitchyardIssuesPage",
            skip: 1,
            delayMs: 1_000,
          },
        ],
      },
    });
    await startFullReconcile(stub);
    const alarm = runDurableObjectAlarm(stub).catch(() => false);
    // The second page's request reached GitHub (its rule is used up): the first page is stored.
    expect(await faultsLeft(0)).toBe(true);
    const during = (await stub.status()).reconcile;
    expect(during).toMatchObject({ pagesDone: 1 });
    // The isolate dies while the second page is on its way (a crash, not a graceful eviction).
    await abortAllDurableObjects();
    await alarm;
    // Stubs die with their instances; a new one reaches the object's next instance.
    const again = repoStub(repoId);
    const after = await again.status();
    expect(after.reconcile).toMatchObject({ runId: during!.runId, pagesDone: 1 });
    const row = after.schedules.find((s) => s.name === "reconcile-full");
    expect(row?.dueMs).toBeLessThan(Date.now() + 60_000);
    await settle(again);
    expect((await again.status()).reconcile).toBeNull();
    const full = await fullReconciles(again);
    expect(full).toHaveLength(2);
    expect(full[0]!.detail.run).toMatchObject({ runId: during!.runId, pages: 3 });
  }, 30_000);

  it("an alarm run reads a bounded share of the pages and re-arms the rest", async () => {
    const issues = Array.from({ length: 5 * PAGE - 3 }, (_, i) => seedIssue(i + 1));
    const { stub } = await install({ repo: "resume-steps/app", issues });
    const [first] = await fullReconciles(stub);
    expect(first!.detail.run.pages).toBe(5);
    // Driven step by step: the step function of the `reconcile-full` schedule.
    const steps = await runInDurableObject(stub, async (o: RepoObject) => {
      const out: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const outcome = await fullStep(o);
        out.push(
          outcome?.kind === "full-step"
            ? { kind: outcome.kind, pages: outcome.progress.pagesDone }
            : { kind: outcome?.kind, pages: outcome?.run?.pages, corrected: outcome?.corrections },
        );
      }
      return out;
    });
    expect(steps).toEqual([
      { kind: "full-step", pages: 2 },
      { kind: "full-step", pages: 4 },
      { kind: "full", pages: 5, corrected: [] },
    ]);
  }, 30_000);

  it("while a run streams pages in, the graph API shows a scan at most 5 s old instead of one per request", async () => {
    const issues = Array.from({ length: 5 * PAGE - 3 }, (_, i) => seedIssue(i + 1));
    const { stub } = await install({ repo: "resume-reads/app", issues });
    const seen = await runInDurableObject(stub, async (o: RepoObject) => {
      const count = async (atMs: number) => (await o.graph(atMs)).stats.issues;
      const t0 = Date.now();
      const before = await count(t0);
      // A run in progress (two of five pages read), then a change lands (as a webhook would).
      const step = await fullStep(o);
      const kept = await count(t0 + 100);
      o.store.applyEvents([
        { type: "issue-removed", number: 5 * PAGE - 3, at: formatInstant(Date.now() + 1000) },
      ]);
      const stale = await count(t0 + 1_000);
      const aged = await count(t0 + 6_000);
      return { step: step?.kind, before, kept, stale, aged };
    });
    expect(seen).toEqual({
      step: "full-step",
      before: 5 * PAGE - 3,
      kept: 5 * PAGE - 3,
      stale: 5 * PAGE - 3,
      aged: 5 * PAGE - 4,
    });
    // Once no run is in progress, a change shows at once again.
    const after = await runInDurableObject(stub, async (o: RepoObject) => {
      o.store.reconcileRuns.abandon();
      const t = Date.now() + 10_000;
      const first = (await o.graph(t)).stats.issues;
      o.store.applyEvents([
        { type: "issue-removed", number: 5 * PAGE - 4, at: formatInstant(Date.now() + 2000) },
      ]);
      return { first, next: (await o.graph(t + 100)).stats.issues };
    });
    expect(after).toEqual({ first: 5 * PAGE - 4, next: 5 * PAGE - 5 });
  }, 30_000);

  it("begins again when a label is renamed or deleted during a run (pages read before may hold the old labels)", async () => {
    const issues = Array.from({ length: 5 * PAGE - 3 }, (_, i) => seedIssue(i + 1));
    const repo = "resume-labels/app";
    const { stub, repoId, installationId } = await install({ repo, issues });
    const step = () =>
      runInDurableObject(stub, async (o: RepoObject) => {
        const outcome = await fullStep(o);
        const run = o.store.reconcileRuns.current();
        return {
          kind: outcome?.kind,
          runId: run?.runId,
          pages: run?.pages,
          restarts: run?.restarts,
        };
      });
    const first = await step();
    expect(first.kind).toBe("full-step");
    const response = await postLabelDeleted(
      { repo, repoId, installationId },
      "agent:hold",
      "octocat",
    );
    expect(response.status).toBe(200);
    // The hint schedules the full reconcile too: its alarms finish the work. The run that
    // completes is a new one, begun after the hint and counted as a restart, that read every page.
    await settle(stub);
    const done = (await fullReconciles(stub))[0]!.detail.run as {
      runId: string;
      pages: number;
      restarts: number;
    };
    expect(done.runId).not.toBe(first.runId);
    expect(done.restarts).toBe(first.restarts! + 1);
    expect(done.pages).toBe(5);
  }, 30_000);

  it("begins again from the first page when GitHub refuses the cursor", async () => {
    const issues = Array.from({ length: 3 * PAGE }, (_, i) => seedIssue(i + 1));
    const seeded = await seed({ repo: "resume-cursor/app", issues });
    await sim("/outbox/drain", { method: "POST" });
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          {
            method: "POST",
            path: "/graphql",
            operation: "SwitchyardIssuesPage",
            skip: 1,
            status: 200,
            body: { errors: [{ message: "`Y3Vyc29y` does not appear to be a valid cursor." }] },
          },
        ],
      },
    });
    const stub = repoStub(seeded.repoId);
    const outcome = await runInDurableObject(stub, async (o: RepoObject) => {
      o.store.setIdentity({
        repoId: seeded.repoId,
        fullName: seeded.repo,
        installationId: seeded.installationId,
        status: "active",
      });
      const result = await fullStep(o, { pageSize: PAGE, pagesPerRun: 10 });
      return { result, count: o.store.snapshot().issues.length };
    });
    expect(outcome.result).toMatchObject({ kind: "full", run: { pages: 3, restarts: 1 } });
    expect(outcome.count).toBe(3 * PAGE);
  }, 30_000);

  it("abandons the run when the repository stops being active between two steps", async () => {
    const issues = Array.from({ length: 3 * PAGE }, (_, i) => seedIssue(i + 1));
    const { stub } = await install({ repo: "resume-suspend/app", issues });
    await failPagesAfter(1);
    await startFullReconcile(stub);
    await settle(stub);
    const before = (await stub.status()).reconcile;
    expect(before).toMatchObject({ pagesDone: 1 });
    const identity = (await stub.identity())!;
    await stub.setLifecycle({ ...identity, status: "suspended" });
    await sim("/faults", { method: "DELETE" });
    await stub.setLifecycle({ ...identity, status: "active" });
    await settle(stub);
    // A new run after the unsuspension; the old one's pages never complete anything.
    const full = await fullReconciles(stub);
    expect(full).toHaveLength(2);
    expect(full[0]!.detail.run.runId).not.toBe(before!.runId);
    expect((await stub.status()).reconcile).toBeNull();
  }, 30_000);
});
