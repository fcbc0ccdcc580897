// Claim throughput against the host's own floor (issue 21, replacing spec 9's absolute 500 pairs a
// second): the same 50 clients first loop `GET /healthz` (a route that touches no Durable Object),
// then claim-next → release through the HTTP API with a fleet key on one repository of 1,000 open
// issues (IDD mirroring coalesced behind its write delay), then `/healthz` again; and, on a
// repository where a trusted IDD marker was seen (synchronous mirroring: each grant posts its
// `claimed-by` before it answers), claim+release pairs a minute against what the installation's
// write budget allows for their marker posts. On `wrangler dev` and on `switchyard serve` (node),
// one after the other (`BENCH_HOST` picks one).
import process from "node:process";
import { seedFiles } from "../infra/github-sim/contents.ts";
import { seedSnapshot } from "../infra/github-sim/seed.ts";
import { type LocalHost, type LocalStack, startLocalStack, waitFor } from "../infra/local-stack.ts";
import { DEFAULT_BUDGET } from "../shared/budget/write-budget.ts";
import type { Benchmark } from "./benchmark.ts";
import { benchHosts, hostLabel } from "./host.ts";

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/**
 * The synchronous-mirroring phase: a warm-up that spends the fresh budget's first minute (a burst
 * no steady fleet sees again), then the measured window, at least the budget's shortest window.
 */
const IDD_WARMUP_SECONDS = Number(process.env.BENCH_IDD_WARMUP_SECONDS ?? 60);
const IDD_SECONDS = Number(process.env.BENCH_IDD_SECONDS ?? 60);
/** Repositories of the optional spread phase (0: skipped). */
const SPREAD = Number(process.env.BENCH_CLAIMS_SPREAD ?? 0);
const BIG = 1000;
const SMALL = 100;
const IDD_ISSUES = 200;
// Pairs are released `abandoned`: attempts must not dead-letter the issues mid-run.
const CONFIG = "claims:\n  maxAttempts: 100\n";
/** What IDD's reading needs of each pair: a `claimed-by` at the grant, an `unclaimed-by` at the release. */
const MARKERS_PER_PAIR = 2;

/** The issue's targets (issue 21, "Benchmark"). */
const FLOOR_SHARE = 0.6;
const P99_FACTOR = 3;
const BUDGET_SHARE = 0.8;

interface Floor {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

interface Phase {
  repos: number;
  pairs: number;
  pairsPerSecond: number;
  /** Claim and release requests a second (204s and refusals included). */
  requestsPerSecond: number;
  claimP50: number;
  claimP99: number;
  /**
   * When the slowest 1% of claims were sent (seconds into the phase, how many in each second):
   * bunched in a second or two, a stall held them; spread out, queueing did.
   */
  slowClaimsAt: string;
  releaseP50: number;
  releaseP99: number;
  doubleGrants: number;
  errors: number;
  noWork: number;
  githubWrites: number;
}

/** Figures of the measured window after the warm-up, unless said otherwise. */
interface IddPhase {
  seconds: number;
  /** Grants over the whole phase, each checked for its marker on GitHub. */
  grants: number;
  pairs: number;
  pairsPerMinute: number;
  allowedPairsPerMinute: number;
  /** 503 `mirror-failed` answers (nothing granted; the budget was spent or GitHub refused). */
  mirrorFailed: number;
  /** Grants whose `claimed-by` is not on GitHub: must be zero. */
  grantsWithoutMarker: number;
  claimedByPosts: number;
  unclaimedByPosts: number;
  labelWrites: number;
  /** Releases (whole phase) whose `unclaimed-by` was not on GitHub when the phase ended. */
  unclaimedByOwed: number;
  claimP50: number;
  claimP99: number;
  doubleGrants: number;
  errors: number;
  noWork: number;
}

interface HostRun {
  host: LocalHost;
  floorBefore: Floor;
  floorAfter: Floor;
  floor: { rps: number; p99: number };
  one: Phase;
  spread: Phase | null;
  idd: IddPhase;
}

const pct = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const openIssues = (count: number, ready: (n: number) => boolean) =>
  Array.from({ length: count }, (_, i) => ({
    number: i + 1,
    title: `Issue ${i + 1}`,
    state: "open" as const,
    stateReason: null,
    createdAt: "2026-11-01T00:00:00Z",
    updatedAt: "2026-11-01T00:00:00Z",
    closedAt: null,
    labels: ready(i + 1) ? ["agent:ready"] : [],
  }));

export const claimsBenchmark: Benchmark = {
  name: "claims",
  async run() {
    const runs: HostRun[] = [];
    for (const host of benchHosts(["wrangler", "node"])) runs.push(await runOn(host));
    const f = (n: number) => n.toFixed(1);
    const pc = (n: number) => `${(n * 100).toFixed(0)}%`;
    const report: string[] = [
      `${CLIENTS} clients, the same in every row: GET /healthz (the floor, no Durable Object) for ${SECONDS} s, claim-next → release (abandoned) for ${SECONDS} s with a fleet key, GET /healthz again; then, on a repository with a trusted IDD marker (synchronous mirroring; write budget ${DEFAULT_BUDGET.perMinute} a minute, ${MARKERS_PER_PAIR} marker posts a pair), claim-next → release for ${IDD_WARMUP_SECONDS} s of warm-up and ${IDD_SECONDS} s measured (clients honour Retry-After)`,
      "| host | floor req/s (before / after) | floor p99 ms | claim+release req/s | share of floor | pairs/s | claim p50 / p99 ms | release p50 / p99 ms | double grants | errors | 204s | GitHub requests after |",
      "|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ];
    for (const r of runs) {
      for (const p of [r.one, ...(r.spread ? [r.spread] : [])]) {
        report.push(
          `| ${hostLabel(r.host)}, ${p.repos === 1 ? `1 repository (${BIG} issues)` : `${p.repos} repositories`} | ${r.floor.rps.toFixed(0)} (${r.floorBefore.rps.toFixed(0)} / ${r.floorAfter.rps.toFixed(0)}) | ${f(r.floor.p99)} | ${p.requestsPerSecond.toFixed(0)} | ${pc(p.requestsPerSecond / r.floor.rps)} | ${p.pairsPerSecond.toFixed(0)} | ${f(p.claimP50)} / ${f(p.claimP99)} | ${f(p.releaseP50)} / ${f(p.releaseP99)} | ${p.doubleGrants} | ${p.errors} | ${p.noWork} | ${p.githubWrites} |`,
        );
      }
    }
    for (const r of runs)
      for (const p of [r.one, ...(r.spread ? [r.spread] : [])])
        report.push(
          `${hostLabel(r.host)}, ${p.repos} ${p.repos === 1 ? "repository" : "repositories"}: the slowest 1% of claims were sent at ${p.slowClaimsAt}`,
        );
    report.push(
      "",
      "| host, synchronous mirroring | pairs | pairs/min | allowed/min | share | marker posts/2 a minute | 503 mirror-failed | claimed-by / unclaimed-by / label writes | claim p50 / p99 ms | grants (whole phase) | without marker | unclaimed-by owed at the end | double grants | errors | 204s |",
      "|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
      ...runs.map(
        ({ host, idd: d }) =>
          `| ${hostLabel(host)} (${IDD_ISSUES} issues, ${d.seconds.toFixed(0)} s) | ${d.pairs} | ${d.pairsPerMinute.toFixed(1)} | ${d.allowedPairsPerMinute.toFixed(1)} | ${pc(d.pairsPerMinute / d.allowedPairsPerMinute)} | ${((((d.claimedByPosts + d.unclaimedByPosts) / 2) * 60) / d.seconds).toFixed(1)} | ${d.mirrorFailed} | ${d.claimedByPosts} / ${d.unclaimedByPosts} / ${d.labelWrites} | ${f(d.claimP50)} / ${f(d.claimP99)} | ${d.grants} | ${d.grantsWithoutMarker} | ${d.unclaimedByOwed} | ${d.doubleGrants} | ${d.errors} | ${d.noWork} |`,
      ),
    );
    const targets = runs.flatMap(({ host, floor, one, idd }) => {
      const on = hostLabel(host);
      const share = one.requestsPerSecond / floor.rps;
      return [
        {
          name: `${on}: claim+release at least ${pc(FLOOR_SHARE)} of the floor (${pc(share)}: ${one.requestsPerSecond.toFixed(0)} of ${floor.rps.toFixed(0)} req/s)`,
          ok: share >= FLOOR_SHARE,
        },
        {
          name: `${on}: zero double grants (${one.doubleGrants}) and zero errors (${one.errors})`,
          ok: one.doubleGrants === 0 && one.errors === 0,
        },
        {
          name: `${on}: claim p99 at most ${P99_FACTOR}x the floor's (${f(one.claimP99)} ms against ${f(floor.p99)} ms: ${(one.claimP99 / floor.p99).toFixed(2)}x)`,
          ok: one.claimP99 <= P99_FACTOR * floor.p99,
        },
        {
          name: `${on}, synchronous mirroring: at least ${pc(BUDGET_SHARE)} of the pairs a minute the write budget allows (${idd.pairsPerMinute.toFixed(1)} of ${idd.allowedPairsPerMinute.toFixed(1)})`,
          ok: idd.pairsPerMinute >= BUDGET_SHARE * idd.allowedPairsPerMinute,
        },
        {
          name: `${on}, synchronous mirroring: zero grants whose marker failed (${idd.grantsWithoutMarker} of ${idd.grants}), zero double grants (${idd.doubleGrants}) and zero errors (${idd.errors})`,
          ok: idd.grantsWithoutMarker === 0 && idd.doubleGrants === 0 && idd.errors === 0,
        },
      ];
    });
    return {
      report,
      targets,
      figures: {
        clients: CLIENTS,
        seconds: SECONDS,
        iddWarmupSeconds: IDD_WARMUP_SECONDS,
        iddSeconds: IDD_SECONDS,
        runs,
      },
    };
  },
};

async function runOn(host: LocalHost): Promise<HostRun> {
  // Mirroring coalesces behind the write delay (2 s by default, as deployed).
  const stack = await startLocalStack(`bench-claims-${host}`, { host });
  try {
    const state = stack.sim.sim.state;
    stack.sim.sim.webhooks.pushUrl = `${stack.workerUrl}/webhooks/github`;
    const admin = `ghp_bench${crypto.randomUUID().replace(/-/g, "")}`;
    // The fleet: one repository of 1,000 issues (and the spread phase's, if asked for).
    const fleet = Array.from({ length: Math.max(1, SPREAD) }, (_, r) => `fleet/r${r}`);
    for (const [r, fullName] of fleet.entries()) {
      seedSnapshot(state, {
        repo: fullName,
        issues: openIssues(r === 0 ? BIG : SMALL, () => true),
      });
      await seedFiles(state, state.requireRepo("fleet", `r${r}`), {
        ".github/switchyard.yml": CONFIG,
      });
    }
    // IDD agents work on idd/app: an installation of its own, so its write budget is its own.
    const iddRepo = "idd/app";
    seedSnapshot(state, { repo: iddRepo, issues: openIssues(IDD_ISSUES, () => true) });
    await seedFiles(state, state.requireRepo("idd", "app"), { ".github/switchyard.yml": CONFIG });
    const repos = [...fleet, iddRepo];
    await post(`${stack.sim.url}/_sim/users`, {
      login: "fleet-admin",
      token: admin,
      repos: Object.fromEntries(repos.map((r) => [r, "admin"])),
    });
    state.install(
      "fleet",
      fleet.map((r) => r.split("/")[1]!),
      "fleet-admin",
    );
    state.install("idd", ["app"], "fleet-admin");
    const keys = new Map<string, string>();
    for (const repo of repos) {
      await waitFor(
        `${repo} reconciled`,
        async () => {
          const res = await fetch(`${stack.workerUrl}/v1/repos/${repo}/graph`, {
            headers: { authorization: `Bearer ${admin}` },
          });
          if (!res.ok) return undefined;
          const g = (await res.json()) as { watermarks: { lastFullReconcileAt: string | null } };
          return g.watermarks.lastFullReconcileAt ? true : undefined;
        },
        180_000,
      );
      const key = (await post(
        `${stack.workerUrl}/v1/repos/${repo}/keys`,
        { name: "bench" },
        admin,
      )) as {
        key: string;
      };
      keys.set(repo, key.key);
    }

    const floorBefore = await floorPhase(stack);
    const one = await claimPhase(stack, fleet.slice(0, 1), keys);
    const floorAfter = await floorPhase(stack);
    const spread = SPREAD > 1 ? await claimPhase(stack, fleet, keys) : null;
    const idd = await iddPhase(stack, iddRepo, keys.get(iddRepo)!);
    return {
      host,
      floorBefore,
      floorAfter,
      // The machine is shared: the floor is the mean of the runs either side of the phase.
      floor: {
        rps: (floorBefore.rps + floorAfter.rps) / 2,
        p99: (floorBefore.p99 + floorAfter.p99) / 2,
      },
      one,
      spread,
      idd,
    };
  } finally {
    await stack.close();
  }
}

/** The same clients as the claim phases, looping a GET of `/healthz` (no Durable Object). */
async function floorPhase(stack: LocalStack): Promise<Floor> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const client = async () => {
    while (performance.now() < deadline) {
      const t = performance.now();
      const res = await fetch(`${stack.workerUrl}/healthz`);
      await res.arrayBuffer();
      latencies.push(performance.now() - t);
      if (!res.ok) errors += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, () => client()));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50: pct(latencies, 0.5),
    p99: pct(latencies, 0.99),
    errors,
  };
}

async function claimPhase(
  stack: LocalStack,
  repos: string[],
  keys: Map<string, string>,
): Promise<Phase> {
  const writesBefore = stack.sim.sim.counter.snapshot().total;
  const holders = new Map<string, number>();
  const claimMs: number[] = [];
  const claims: Array<{ atMs: number; ms: number }> = [];
  let started = performance.now();
  const releaseMs: number[] = [];
  let pairs = 0;
  let doubleGrants = 0;
  let errors = 0;
  let noWork = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const client = async (c: number) => {
    const repo = repos[c % repos.length]!;
    const headers = {
      authorization: `Bearer ${keys.get(repo)}`,
      "content-type": "application/json",
    };
    const base = `${stack.workerUrl}/v1/repos/${repo}`;
    while (performance.now() < deadline) {
      let t = performance.now();
      const res = await fetch(`${base}/claims`, {
        method: "POST",
        headers,
        body: JSON.stringify({ agentId: `client-${c}`, machine: `m${c}` }),
      });
      claimMs.push(performance.now() - t);
      claims.push({ atMs: t - started, ms: performance.now() - t });
      if (res.status === 204) {
        noWork += 1;
        await res.arrayBuffer();
        continue;
      }
      if (res.status !== 201) {
        errors += 1;
        await res.arrayBuffer();
        continue;
      }
      const g = (await res.json()) as { claimId: string; fence: number; issue: { number: number } };
      const key = `${repo}#${g.issue.number}`;
      if (holders.has(key)) doubleGrants += 1;
      holders.set(key, c);
      // "Work": other clients' responses are handled meanwhile. A grant of this issue seen
      // before this client sends its release was made while this claim was live.
      await new Promise((r) => setImmediate(r));
      holders.delete(key);
      t = performance.now();
      const rel = await fetch(`${base}/issues/${g.issue.number}/claim/release`, {
        method: "POST",
        headers,
        body: JSON.stringify({ claimId: g.claimId, fence: g.fence, outcome: "abandoned" }),
      });
      releaseMs.push(performance.now() - t);
      await rel.arrayBuffer();
      if (rel.status === 200) pairs += 1;
      else errors += 1;
    }
  };
  started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  const elapsed = (performance.now() - started) / 1000;
  const requests = claimMs.length + releaseMs.length;
  // Let the coalesced mirror writes go out, then count what reached GitHub.
  await sleep(5_000);
  claimMs.sort((a, b) => a - b);
  releaseMs.sort((a, b) => a - b);
  const slowest = claims.sort((a, b) => b.ms - a.ms).slice(0, Math.ceil(claims.length / 100));
  const bySecond = new Map<number, number>();
  for (const c of slowest) {
    const second = Math.floor(c.atMs / 1000);
    bySecond.set(second, (bySecond.get(second) ?? 0) + 1);
  }
  const slowClaimsAt = [...bySecond]
    .sort((a, b) => a[0] - b[0])
    .map(([second, n]) => `${second} s: ${n}`)
    .join(", ");
  return {
    repos: repos.length,
    pairs,
    pairsPerSecond: pairs / elapsed,
    requestsPerSecond: requests / elapsed,
    claimP50: pct(claimMs, 0.5),
    claimP99: pct(claimMs, 0.99),
    slowClaimsAt,
    releaseP50: pct(releaseMs, 0.5),
    releaseP99: pct(releaseMs, 0.99),
    doubleGrants,
    errors,
    noWork,
    githubWrites: stack.sim.sim.counter.snapshot().total - writesBefore,
  };
}

/**
 * A trusted IDD agent's marker on #1, then the same clients looping claim-next → release for
 * IDD_WARMUP_SECONDS (not measured) and IDD_SECONDS: each grant posts its `claimed-by` before it answers, and answers 503
 * `mirror-failed` (with Retry-After, which the clients honour) once the write budget is spent.
 */
async function iddPhase(stack: LocalStack, repo: string, key: string): Promise<IddPhase> {
  const state = stack.sim.sim.state;
  const [owner, name] = repo.split("/") as [string, string];
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const base = `${stack.workerUrl}/v1/repos/${repo}`;
  await post(`${stack.sim.url}/_sim/users`, {
    login: "idd-writer",
    token: `ghp_idd${crypto.randomUUID().replace(/-/g, "")}`,
    repos: { [repo]: "write" },
  });
  const at = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  await post(`${stack.sim.url}/_sim/repos/${repo}/issues/1/comments`, {
    body: `<!-- claimed-by: idd-bot c-bench supersedes: none ${at} branch: issue/1-issue-1 -->`,
    actor: "idd-writer",
  });
  // The marker's webhook applied: #1 is held by the IDD agent (a refusal costs no GitHub write).
  await waitFor(
    "the IDD marker to hold #1",
    async () => {
      const res = await fetch(`${base}/issues/1/claim`, {
        method: "POST",
        headers,
        body: JSON.stringify({ agentId: "probe" }),
      });
      const body = (await res.json()) as { holder?: { agentId?: string } };
      return res.status === 409 && body.holder?.agentId === "idd-bot" ? true : undefined;
    },
    60_000,
  );
  const iddRepo = state.requireRepo(owner, name);
  const appWrites = () => {
    let claimedBy = 0;
    let unclaimedBy = 0;
    let labels = 0;
    for (const issue of iddRepo.issues.values()) {
      for (const c of issue.comments) {
        if (!c.user.endsWith("[bot]")) continue;
        if (c.body.includes("<!-- claimed-by:")) claimedBy += 1;
        if (c.body.includes("<!-- unclaimed-by:")) unclaimedBy += 1;
      }
      labels += issue.labelEvents.filter((e) => e.actor.endsWith("[bot]")).length;
    }
    return { claimedBy, unclaimedBy, labels };
  };
  const start0 = appWrites();
  const grants: Array<{ number: number; claimId: string }> = [];
  const holders = new Set<number>();
  // Measured only in the window after the warm-up.
  const claimMs: number[] = [];
  let pairs = 0;
  let mirrorFailed = 0;
  let measuring = false;
  let before = appWrites();
  let released = 0;
  // Over the whole phase, warm-up included.
  let doubleGrants = 0;
  let errors = 0;
  let noWork = 0;
  const started = performance.now();
  const windowStart = started + IDD_WARMUP_SECONDS * 1000;
  const deadline = windowStart + IDD_SECONDS * 1000;
  const warm = setTimeout(() => {
    measuring = true;
    before = appWrites();
  }, IDD_WARMUP_SECONDS * 1000);
  const client = async (c: number) => {
    while (performance.now() < deadline) {
      const t = performance.now();
      const res = await fetch(`${base}/claims`, {
        method: "POST",
        headers,
        body: JSON.stringify({ agentId: `client-${c}`, machine: `m${c}` }),
      });
      if (measuring) claimMs.push(performance.now() - t);
      if (res.status === 503) {
        const body = (await res.json()) as { reason?: string };
        if (body.reason !== "mirror-failed") errors += 1;
        else if (measuring) mirrorFailed += 1;
        const wait = Number(res.headers.get("retry-after") ?? 1) * 1000;
        await sleep(Math.max(0, Math.min(wait, deadline - performance.now())));
        continue;
      }
      if (res.status === 204) {
        noWork += 1;
        await res.arrayBuffer();
        await sleep(100);
        continue;
      }
      if (res.status !== 201) {
        errors += 1;
        await res.arrayBuffer();
        continue;
      }
      const g = (await res.json()) as { claimId: string; fence: number; issue: { number: number } };
      grants.push({ number: g.issue.number, claimId: g.claimId });
      if (holders.has(g.issue.number)) doubleGrants += 1;
      holders.add(g.issue.number);
      await new Promise((r) => setImmediate(r));
      holders.delete(g.issue.number);
      const rel = await fetch(`${base}/issues/${g.issue.number}/claim/release`, {
        method: "POST",
        headers,
        body: JSON.stringify({ claimId: g.claimId, fence: g.fence, outcome: "abandoned" }),
      });
      await rel.arrayBuffer();
      if (rel.status !== 200) errors += 1;
      else {
        released += 1;
        if (measuring) pairs += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  clearTimeout(warm);
  const seconds = (performance.now() - windowStart) / 1000;
  const inWindow = appWrites();
  // Every grant answered 201 had its marker on GitHub before the answer: check each one.
  const onGitHub = (g: { number: number; claimId: string }) =>
    iddRepo.issues
      .get(g.number)!
      .comments.some((c) => c.body.includes("<!-- claimed-by:") && c.body.includes(g.claimId));
  const grantsWithoutMarker = grants.filter((g) => !onGitHub(g)).length;
  claimMs.sort((a, b) => a - b);
  return {
    seconds,
    grants: grants.length,
    pairs,
    pairsPerMinute: (pairs * 60) / seconds,
    allowedPairsPerMinute: DEFAULT_BUDGET.perMinute / MARKERS_PER_PAIR,
    mirrorFailed,
    grantsWithoutMarker,
    claimedByPosts: inWindow.claimedBy - before.claimedBy,
    unclaimedByPosts: inWindow.unclaimedBy - before.unclaimedBy,
    labelWrites: inWindow.labels - before.labels,
    unclaimedByOwed: released - (inWindow.unclaimedBy - start0.unclaimedBy),
    claimP50: pct(claimMs, 0.5),
    claimP99: pct(claimMs, 0.99),
    doubleGrants,
    errors,
    noWork,
  };
}

async function post(url: string, body: unknown, token?: string): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}
