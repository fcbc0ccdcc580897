// A large installation under GitHub's limits (issue 25): repositories installed at once against
// the simulator's limits, 100 in `npm test` and the issue's 1,000 with `LARGE_INSTALL_REPOS=1000
// npm run test:unit -- --project worker-large` (75-90 s on 2 cores; in `npm test` it made the
// suite two minutes longer, 12 instead of 10, whether it ran after the worker project's files
// or beside them). A project of its own (`worker-large`, vitest.config.ts), with its own
// simulator: no other test's installation shares its scaled-down limit.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { githubClock } from "../../../functions/clock.ts";
import type { InstallationObject } from "../../../functions/objects/installation/installation-object.ts";
import type { InstallationStore } from "../../../functions/objects/installation/installation-store.ts";
import { installationHourlyLimit, PERMIT_BOUND } from "../../../shared/budget/reconcile-permits.ts";
import {
  deliverAll,
  installationStub,
  permitHolders,
  repoStub,
  seedIssue,
  settle,
  sim,
} from "../helpers.ts";

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

describe("a large installation under GitHub's limits", () => {
  // Installed at once against the simulator's limits: its hourly budget scaled down so that the
  // budget and not the machine holds the line back (the install needs about three windows),
  // its windows passed by moving the simulator's clock and the Worker's GitHub clock together
  // (functions/clock.ts): no wall-clock sleep. At 1,000 repositories about a third of the time
  // goes to creating their objects (about 20 ms a RepoObject, created and migrated; the
  // directory's name and id keys go to at most 256 bucket objects, not two new objects a
  // repository) and the rest to their first reconciles and producer runs (about 50 ms each).
  // The line, the bound and the budget are the same at any size (the property test in
  // test/unit/budget/reconcile-permits.test.ts covers sizes and evictions); `npm run bench --
  // install` runs 1,000 and 3,000 through `wrangler dev`.
  const N = inject("largeInstallRepos");
  it(`${N.toLocaleString("en")} repositories: no secondary-limit refusal, no exhausted hour; webhooks apply meanwhile`, async () => {
    // 2 billed requests a repository (one GraphQL page and the config read, one per resource):
    // GitHub's hourly limit for N repositories, scaled so a window holds about a third of each.
    const scale = Math.round((N / 3 / installationHourlyLimit(N)) * 10_000) / 10_000;
    await sim("/rate-limit", { method: "PUT", body: { scale, windowSeconds: WINDOW_SECONDS } });
    try {
      await installLarge(N);
    } finally {
      await sim("/rate-limit", { method: "PUT", body: { scale: 1, windowSeconds: 3600 } });
      await sim("/clock", { body: { now: null } });
      githubClock.offsetMs = 0;
    }
    // At 1,000: 75-90 s alone on 2 cores.
  }, 300_000);
});

/** The simulator's rate-limit window in this test (simulator time, passed by moving clocks). */
const WINDOW_SECONDS = 60;

/** A window passes: the simulator's clock and the Worker's GitHub clock move on together. */
async function windowPasses(): Promise<void> {
  await sim("/clock", { body: { advanceSeconds: WINDOW_SECONDS } });
  githubClock.offsetMs += WINDOW_SECONDS * 1000;
}

async function installLarge(N: number): Promise<void> {
  await sim("/counters/reset", { method: "POST" });
  const ids = new Map<string, number>();
  // Seeded in parallel batches (the simulator answers each at once), then installed at once.
  for (let i = 0; i < N; i += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, N - i) }, (_, k) =>
        sim<{ repo: string; repoId: number }>("/seed", {
          body: {
            snapshot: {
              repo: `fleet-org/r${i + k}`,
              issues: [seedIssue(1), seedIssue(2, { blockedBy: [1] })],
            },
            install: false,
          },
        }),
      ),
    );
    for (const b of batch) ids.set(b.repo, b.repoId);
  }
  const { id: installationId } = await sim<{ id: number }>("/installations", {
    body: { account: "fleet-org", repositories: "all" },
  });
  const inst = installationStub(installationId);
  expect((await deliverAll()).map((d) => d.status)).toEqual([200]);
  // The transitions: every repository is created, put in line, and the first in line told.
  await runDurableObjectAlarm(inst);
  // The rest did not ask (nobody asks on the same tick): they wait to be told, asking again by
  // themselves only as a fallback, a lease or more away.
  const last = repoStub(ids.get(`fleet-org/r${N - 1}`)!);
  const lastFull = (await last.status()).schedules.find((s) => s.name === "reconcile-full");
  expect(lastFull?.dueMs).toBeGreaterThan(Date.now() + 9 * 60_000);
  expect((await last.graph()).firstReconcile).toMatchObject({ state: "waiting" });

  const webhookLatencies: number[] = [];
  let sentWebhooks = false;
  let windows = 0;
  const opened: number[] = [];
  for (let round = 0; round < 2_000; round++) {
    const progress = (await inst.pacing(null)).installation;
    if (progress.reconciled === N) break;
    if (!sentWebhooks && progress.reconciled >= N / 5) {
      // Mid-install: issues opened in repositories at the back of the line are applied at
      // once (the acknowledgement path waits for no permit).
      sentWebhooks = true;
      await sim("/outbox/drain", { method: "POST" });
      const names = new Map([...ids].map(([name, id]) => [id, name]));
      const lastInLine = (
        await runInDurableObject(inst, (o: InstallationObject) =>
          (o as unknown as { store: InstallationStore }).store.permits
            .permits()
            .filter((p) => p.leaseUntilMs === null),
        )
      )
        .slice(-3)
        .map((p) => p.repoId);
      expect(lastInLine).toHaveLength(3);
      for (const id of lastInLine) {
        await sim(`/repos/${names.get(id)}/issues`, { body: { title: "opened mid-install" } });
      }
      const t0 = Date.now();
      const delivered = await deliverAll();
      webhookLatencies.push((Date.now() - t0) / delivered.length);
      expect(delivered.map((d) => d.status)).toEqual([200, 200, 200]);
      for (const id of lastInLine) {
        const graph = await repoStub(id).graph();
        expect(graph.stats.issues).toBe(1);
        expect(graph.firstReconcile).toMatchObject({ state: "waiting" });
      }
      opened.push(...lastInLine);
    }
    // The installation tells the next in line; each holder runs its reconcile to the end.
    await runDurableObjectAlarm(inst);
    const holding = await permitHolders(inst);
    await Promise.all(holding.map((id) => settle(repoStub(id))));
    // Nobody holds a permit and the line still waits: the budget holds it back until the
    // window resets.
    if (holding.length === 0) {
      windows += 1;
      await windowPasses();
    }
  }
  // The budget, not the bound, held the line back.
  expect(windows).toBeGreaterThanOrEqual(2);
  expect(sentWebhooks).toBe(true);
  const progress = (await inst.pacing(null)).installation;
  expect(progress).toMatchObject({ reconciled: N, waiting: 0, inFlight: 0 });
  for (const id of [...opened, ids.get("fleet-org/r0")!]) {
    const graph = await repoStub(id).graph();
    expect(graph.firstReconcile).toMatchObject({ state: "done" });
    expect(graph.stats.issues).toBe(opened.includes(id) ? 3 : 2);
  }
  const counters = await sim<Counters>("/counters");
  const mine = counters.identities[`installation:${installationId}`]!;
  // No other installation was at work meanwhile (an earlier test's reconciles, going on in the
  // background): the scaled-down limit would cut its open window below what it had spent, and
  // its refusals would count below as if this installation had exhausted its hour.
  expect(
    Object.keys(counters.identities).filter(
      (k) => k.startsWith("installation:") && k !== `installation:${installationId}`,
    ),
  ).toEqual([]);
  expect(mine.rateLimitRefusals).toBe(0);
  expect(counters.secondaryRateLimited).toBe(0);
  // No request refused for an exhausted hour (GitHub's 403 or 429) on any endpoint.
  const refused = Object.entries(counters.byEndpoint).filter(
    ([, e]) => (e.statuses["403"] ?? 0) + (e.statuses["429"] ?? 0) > 0,
  );
  expect(refused).toEqual([]);
  expect(mine.secondaryRefusals).toBe(0);
  // Far below GitHub's 100: at most the bound's reconciles, one request at a time each.
  expect(mine.maxConcurrent).toBeLessThanOrEqual(PERMIT_BOUND * 2);
  expect(webhookLatencies.every((ms) => ms < 1_000)).toBe(true);
}

interface Counters {
  secondaryRateLimited: number;
  byEndpoint: Record<string, { statuses: Record<string, number> }>;
  identities: Record<
    string,
    {
      requests: number;
      maxConcurrent: number;
      secondaryRefusals: number;
      rateLimitRefusals: number;
    }
  >;
}
