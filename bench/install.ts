// A large installation through the public surfaces (issue 25): the Worker under `wrangler dev`,
// the GitHub simulator holding N repositories of 10 issues, the App installed on all of them at
// once. The simulator's hourly budget is scaled down (and its window shortened) so that the
// budget, not the machine, bounds the install: the time until every repository is reconciled is
// reported as a ratio to the time the budget alone allows (what was billed, spent at the
// simulator's limit a window after another). Also: the most concurrent requests of the
// installation (at most the permit bound's worth), secondary-limit refusals and exhausted-hour
// refusals (zero), and how long a webhook sent during the install takes to show in the graph.
import process from "node:process";
import { seedSnapshot } from "../infra/github-sim/seed.ts";
import { startLocalStack, waitFor } from "../infra/local-stack.ts";
import { PERMIT_BOUND } from "../shared/budget/reconcile-permits.ts";
import type { Benchmark } from "./benchmark.ts";
import { syntheticSnapshot } from "./synthetic.ts";

const SIZES = (process.env.BENCH_INSTALL_SIZES ?? "1000,3000").split(",").map(Number);
const ISSUES = 10;
const OWNER = "install-org";
/**
 * The simulator's window (GitHub's is an hour): short, so the bench takes minutes, yet longer
 * than this machine needs to create and reconcile a window's share of the repositories, or the
 * machine and not the budget bounds the install. By default 60 s per 1,000 repositories (at 60 s
 * for 3,000, the creation alone outlasted what the budget allowed: bench/README.md).
 */
const windowSeconds = (n: number) =>
  Number(process.env.BENCH_INSTALL_WINDOW_SECONDS ?? Math.max(30, Math.round((60 * n) / 1000)));
/** Windows the budget alone needs for the whole install: the scale is chosen for it. */
const WINDOWS = 3;
/**
 * Requests billed per 10-issue repository on its first day: the config read and one GraphQL
 * page, and where an issue carries `agent:processing` its label events and a comments page.
 * The synthetic issues' seed includes the repository count: at 1,000 one of them does (4,000
 * billed), at 300 and 3,000 none does (2 a repository, so the budget needs 1.5 windows).
 */
const EXPECTED_PER_REPO = 4;
const WEBHOOK_SAMPLES = 20;

interface Run {
  repositories: number;
  seconds: number;
  budgetSeconds: number;
  ratio: number;
  billed: number;
  hourlyLimit: number;
  maxConcurrent: number;
  secondaryRefusals: number;
  exhausted: number;
  webhookP99Ms: number;
  /** Of that: until the simulator had pushed the delivery and the Worker acknowledged it. */
  pushP99Ms: number;
  /** The most deliveries the simulator had queued ahead of a sampled one (it pushes one at a time). */
  maxBacklog: number;
  /** When the last repository's graph first answered: every repository's object created (s). */
  installedSeconds: number;
  /**
   * Each webhook sample: seconds into the install when opened, ms the graph read before opening
   * took (a stalled graph API delays the sample; this shows by how much), until pushed, until shown.
   */
  samples: Array<{ atS: number; readMs: number; pushedMs: number; shownMs: number }>;
  /** The slowest of the samples' graph reads before opening (ms). */
  readMaxMs: number;
  /** Endpoints GitHub refused for an exhausted hour, with how many. */
  refusedBy: string[];
  /** Requests counted against a rate limit, by endpoint (every identity's: the installation's, mostly). */
  billedBy: string[];
}

interface Counters {
  identities: Record<
    string,
    { requests: number; maxConcurrent: number; secondaryRefusals: number }
  >;
  byEndpoint: Record<string, { rateLimited: number; statuses: Record<string, number> }>;
}

const p99 = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
};

async function run(n: number): Promise<Run> {
  const stack = await startLocalStack(`bench-install-${n}`);
  try {
    const state = stack.sim.sim.state;
    const names = Array.from({ length: n }, (_, i) => `r${i}`);
    for (const name of names) {
      seedSnapshot(state, { ...syntheticSnapshot(ISSUES, n), repo: `${OWNER}/${name}` });
    }
    const control = (path: string, method: string, body: unknown) =>
      fetch(`${stack.sim.url}/_sim${path}`, {
        method,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(async (r) => {
        if (!r.ok) throw new Error(`simulator ${path}: ${r.status} ${await r.text()}`);
        return r.json() as Promise<unknown>;
      });
    // GitHub's hourly limit for n repositories, scaled so the install needs WINDOWS windows.
    const hourly = Math.min(12_500, 5_000 + 50 * Math.max(0, n - 20));
    const scale = (n * EXPECTED_PER_REPO) / WINDOWS / hourly;
    const windowS = windowSeconds(n);
    await control("/rate-limit", "PUT", { scale, windowSeconds: windowS });
    const hourlyLimit = Math.max(1, Math.round(hourly * scale));
    const token = `ghp_install${crypto.randomUUID().replace(/-/g, "")}`;
    await control("/users", "POST", {
      login: "install-admin",
      token,
      repos: Object.fromEntries(names.map((name) => [`${OWNER}/${name}`, "admin"])),
    });
    const auth = { authorization: `Bearer ${token}` };
    stack.sim.sim.webhooks.pushUrl = `${stack.workerUrl}/webhooks/github`;
    const graph = async (name: string) => {
      const res = await fetch(`${stack.workerUrl}/v1/repos/${OWNER}/${name}/graph`, {
        headers: auth,
      });
      if (!res.ok) return undefined;
      return (await res.json()) as {
        stats: { issues: number };
        installation: { reconciled: number } | null;
      };
    };

    const started = performance.now();
    const installation = state.install(OWNER, "all", "install-admin");
    // Webhooks during the install: an issue opened in a repository, until its graph shows it.
    const latencies: number[] = [];
    const pushLatencies: number[] = [];
    let maxBacklog = 0;
    const samples: Run["samples"] = [];
    const emitter = stack.sim.sim.webhooks;
    let installedSeconds = Number.NaN;
    const installed = waitFor(
      "every repository's object",
      async () => ((await graph(names.at(-1)!)) ? true : undefined),
      60 * 60_000,
    ).then(() => {
      installedSeconds = (performance.now() - started) / 1000;
    });
    installed.catch(() => undefined);
    const webhooks = (async () => {
      for (let i = 0; i < WEBHOOK_SAMPLES; i++) {
        await new Promise((r) => setTimeout(r, 2_000));
        const name = names[Math.floor(((i + 0.5) / WEBHOOK_SAMPLES) * n)]!;
        const read0 = performance.now();
        const before = (await graph(name))?.stats.issues ?? 0;
        const t0 = performance.now();
        // Deliveries ahead of this one in the simulator's push queue (pushed one at a time).
        const backlog = emitter.emitted - emitter.pushed.length;
        await control(`/repos/${OWNER}/${name}/issues`, "POST", { title: "mid-install" });
        const id = emitter.outbox.at(-1)?.id;
        let pushedMs = Number.NaN;
        const pushed = waitFor(
          `the push of ${name}'s webhook`,
          async () => emitter.pushed.find((p) => p.id === id),
          60_000,
        ).then((result) => {
          // The Worker's answer as the simulator saw it, not when this poll noticed it.
          pushedMs = result.answeredAtMs - t0;
          pushLatencies.push(pushedMs);
        });
        await waitFor(
          `the webhook of ${name}`,
          async () => ((await graph(name))?.stats.issues ?? 0) > before || undefined,
          60_000,
        );
        latencies.push(performance.now() - t0);
        await pushed;
        maxBacklog = Math.max(maxBacklog, backlog);
        samples.push({
          atS: Math.round((t0 - started) / 100) / 10,
          readMs: Math.round(t0 - read0),
          pushedMs: Math.round(pushedMs),
          shownMs: Math.round(performance.now() - t0),
        });
      }
    })();
    // Awaited below; a failure meanwhile must not end the process before the stack is closed.
    webhooks.catch(() => undefined);
    await waitFor(
      `${n} repositories reconciled`,
      async () => ((await graph("r0"))?.installation?.reconciled ?? 0) >= n || undefined,
      60 * 60_000,
    );
    const seconds = (performance.now() - started) / 1000;
    await webhooks;
    await installed;
    const counters = (await (await fetch(`${stack.sim.url}/_sim/counters`)).json()) as Counters;
    const mine = counters.identities[`installation:${installation.id}`];
    const exhausted = Object.values(counters.byEndpoint).reduce(
      (sum, e) => sum + (e.statuses["403"] ?? 0) + (e.statuses["429"] ?? 0),
      0,
    );
    const refusedBy = Object.entries(counters.byEndpoint)
      .filter(([, e]) => (e.statuses["403"] ?? 0) + (e.statuses["429"] ?? 0) > 0)
      .map(
        ([endpoint, e]) => `${endpoint}: ${(e.statuses["403"] ?? 0) + (e.statuses["429"] ?? 0)}`,
      );
    const billedBy = Object.entries(counters.byEndpoint)
      .filter(([, e]) => e.rateLimited > 0)
      .sort(([, a], [, b]) => b.rateLimited - a.rateLimited)
      .map(([endpoint, e]) => `${endpoint}: ${e.rateLimited}`);
    const billed = mine?.requests ?? 0;
    // Spent at the limit a window after another: the budget alone allows no faster install.
    const budgetSeconds = (billed / hourlyLimit) * windowS;
    await control("/rate-limit", "PUT", { scale: 1, windowSeconds: 3600 });
    return {
      repositories: n,
      seconds,
      budgetSeconds,
      ratio: seconds / budgetSeconds,
      billed,
      hourlyLimit,
      maxConcurrent: mine?.maxConcurrent ?? 0,
      secondaryRefusals: mine?.secondaryRefusals ?? 0,
      exhausted,
      webhookP99Ms: p99(latencies),
      pushP99Ms: p99(pushLatencies),
      maxBacklog,
      installedSeconds,
      samples,
      readMaxMs: Math.max(0, ...samples.map((x) => x.readMs)),
      refusedBy,
      billedBy,
    };
  } finally {
    await stack.close();
  }
}

export const installBenchmark: Benchmark = {
  name: "install",
  async run() {
    const runs: Run[] = [];
    for (const n of SIZES) runs.push(await run(n));
    const report = [
      `windows of ${SIZES.map((n) => `${windowSeconds(n)} s`).join(", ")} (GitHub: an hour), budget scaled so the install needs ${WINDOWS} windows`,
      "| repositories | time (s) | budget alone (s) | ratio | billed | limit/window | max concurrent | secondary refusals | 403/429 | webhook p99 (ms) | of it, pushed p99 (ms) | push backlog |",
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
      ...runs.map(
        (r) =>
          `| ${r.repositories} | ${r.seconds.toFixed(1)} | ${r.budgetSeconds.toFixed(1)} | ${r.ratio.toFixed(2)} | ${r.billed} | ${r.hourlyLimit} | ${r.maxConcurrent} | ${r.secondaryRefusals} | ${r.exhausted} | ${r.webhookP99Ms.toFixed(0)} | ${r.pushP99Ms.toFixed(0)} | ${r.maxBacklog} |`,
      ),
      ...runs.map(
        (r) =>
          `${r.repositories}: every object created at ${r.installedSeconds.toFixed(1)} s; slowest graph read before a sample ${r.readMaxMs} ms; webhook samples (s into the install: ms read before/pushed/shown): ${r.samples.map((x) => `${x.atS}: ${x.readMs}/${x.pushedMs}/${x.shownMs}`).join(", ")}`,
      ),
      ...runs.flatMap((r) =>
        r.refusedBy.length > 0 ? [`${r.repositories}: refused ${r.refusedBy.join(", ")}`] : [],
      ),
      ...runs.map((r) => `${r.repositories}: billed by endpoint ${r.billedBy.join(", ")}`),
    ];
    return {
      report,
      targets: [
        {
          name: "time at most 1.2x what the budget alone allows",
          ok: runs.every((r) => r.ratio <= 1.2),
        },
        {
          name: `at most ${PERMIT_BOUND * 2} concurrent requests (the permit bound's reconciles)`,
          ok: runs.every((r) => r.maxConcurrent <= PERMIT_BOUND * 2),
        },
        { name: "zero secondary-limit refusals", ok: runs.every((r) => r.secondaryRefusals === 0) },
        { name: "zero exhausted-hour refusals", ok: runs.every((r) => r.exhausted === 0) },
      ],
      figures: { runs },
    };
  },
};
