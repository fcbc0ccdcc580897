// The org queue at scale (issue 23): the Worker under `wrangler dev` with 500 installed
// repositories of one owner, 50 of them with ready work. 50 concurrent clients loop claim-next →
// release, first on one repository's own route (the baseline), then on the owner's route
// (`POST /v1/orgs/{owner}/claims`, releases on the grant's repository). Targets: the org
// claim-next p99 at most 2x the single-repository claim-next p99 of the same run; zero double
// grants; work appearing in the owner's queue within 2 s of the repository's own queue showing it.
import process from "node:process";
import { seedFiles } from "../infra/github-sim/contents.ts";
import { seedSnapshot } from "../infra/github-sim/seed.ts";
import { startLocalStack, waitFor } from "../infra/local-stack.ts";
import { HEAD_SIZE } from "../shared/org/head.ts";
import type { Benchmark } from "./benchmark.ts";
import { benchHost, hostLabel } from "./host.ts";

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const REPOS = Number(process.env.BENCH_ORG_REPOS ?? 500);
const WITH_WORK = Number(process.env.BENCH_ORG_WITH_WORK ?? 50);
const ISSUES = 100;
const SAMPLES = 10;
const ROUNDS = Number(process.env.BENCH_ORG_ROUNDS ?? 2);
const SETTLE_MS = Number(process.env.BENCH_ORG_SETTLE_MS ?? 20_000);
/** The owner: a user account, so the benchmark's user is its owner and mints owner keys. */
const OWNER = "orgbench";
// Pairs are released `abandoned`: attempts must not dead-letter the issues mid-run.
const CONFIG = "claims:\n  maxAttempts: 100\n";

interface Phase {
  route: "repository" | "org";
  pairs: number;
  pairsPerSecond: number;
  claimP50: number;
  claimP99: number;
  releaseP99: number;
  doubleGrants: number;
  errors: number;
  noWork: number;
  repositoriesTouched: number;
  /** Every claim-next's latency, ascending (pooled across rounds for the ratio). */
  claimMs: number[];
}

const pct = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

const issue = (number: number, labels: string[]) => ({
  number,
  title: `Issue ${number}`,
  state: "open" as const,
  stateReason: null,
  createdAt: "2026-11-01T00:00:00Z",
  updatedAt: "2026-11-01T00:00:00Z",
  closedAt: null,
  labels,
});

export const orgBenchmark: Benchmark = {
  name: "org",
  async run() {
    const stack = await startLocalStack("bench-org", { host: benchHost() });
    try {
      const state = stack.sim.sim.state;
      const names = Array.from({ length: REPOS }, (_, i) => `r${i}`);
      for (const [i, name] of names.entries()) {
        const ready = i < WITH_WORK;
        seedSnapshot(state, {
          repo: `${OWNER}/${name}`,
          issues: ready
            ? Array.from({ length: ISSUES }, (_, n) => issue(n + 1, ["agent:ready"]))
            : [issue(1, [])],
        });
        if (ready) {
          await seedFiles(state, state.requireRepo(OWNER, name), {
            ".github/switchyard.yml": CONFIG,
          });
        }
      }
      stack.sim.sim.webhooks.pushUrl = `${stack.workerUrl}/webhooks/github`;
      const admin = `ghp_bench${crypto.randomUUID().replace(/-/g, "")}`;
      await post(`${stack.sim.url}/_sim/users`, {
        login: OWNER,
        token: admin,
        repos: Object.fromEntries(names.map((n) => [`${OWNER}/${n}`, "admin"])),
      });
      const installStarted = performance.now();
      state.install(OWNER, "all", OWNER);
      await waitFor(
        `${REPOS} repositories reconciled`,
        async () => {
          const res = await fetch(`${stack.workerUrl}/v1/repos/${OWNER}/r0/graph?limit=1`, {
            headers: { authorization: `Bearer ${admin}` },
          });
          if (!res.ok) return undefined;
          const g = (await res.json()) as { installation: { reconciled: number } | null };
          return (g.installation?.reconciled ?? 0) >= REPOS ? true : undefined;
        },
        30 * 60_000,
      );
      const installSeconds = (performance.now() - installStarted) / 1000;
      const ownerKey = (
        (await post(`${stack.workerUrl}/v1/orgs/${OWNER}/keys`, { name: "bench" }, admin)) as {
          key: string;
        }
      ).key;
      const repoKey = (
        (await post(`${stack.workerUrl}/v1/repos/${OWNER}/r0/keys`, { name: "bench" }, admin)) as {
          key: string;
        }
      ).key;
      const orgQueue = async (query: string) => {
        const res = await fetch(`${stack.workerUrl}/v1/orgs/${OWNER}/queue?${query}`, {
          headers: { authorization: `Bearer ${ownerKey}` },
        });
        if (!res.ok) throw new Error(`org queue: ${res.status} ${await res.text()}`);
        return (await res.json()) as { total: number; items: Array<{ repo: string }> };
      };
      // Every repository with work has pushed its head.
      await waitFor(
        "the owner's queue holding every repository's head",
        async () =>
          (await orgQueue("limit=1")).total >= WITH_WORK * Math.min(HEAD_SIZE, ISSUES)
            ? true
            : undefined,
        10 * 60_000,
      );

      const phase = async (route: "repository" | "org"): Promise<Phase> => {
        const holders = new Set<string>();
        const touched = new Set<string>();
        const claimMs: number[] = [];
        const releaseMs: number[] = [];
        let pairs = 0;
        let doubleGrants = 0;
        let errors = 0;
        let noWork = 0;
        const token = route === "org" ? ownerKey : repoKey;
        const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
        const claimUrl =
          route === "org"
            ? `${stack.workerUrl}/v1/orgs/${OWNER}/claims`
            : `${stack.workerUrl}/v1/repos/${OWNER}/r0/claims`;
        const deadline = performance.now() + SECONDS * 1000;
        const client = async (c: number) => {
          while (performance.now() < deadline) {
            let t = performance.now();
            const res = await fetch(claimUrl, {
              method: "POST",
              headers,
              body: JSON.stringify({ agentId: `client-${c}`, machine: `m${c}` }),
            });
            claimMs.push(performance.now() - t);
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
            const g = (await res.json()) as {
              claimId: string;
              fence: number;
              issue: { number: number };
              repo?: string;
            };
            const repo = g.repo ?? `${OWNER}/r0`;
            const key = `${repo}#${g.issue.number}`;
            if (holders.has(key)) doubleGrants += 1;
            holders.add(key);
            touched.add(repo);
            // "Work": other clients' answers are handled meanwhile. A grant of this issue seen
            // before this client sends its release was made while this claim was live.
            await new Promise((r) => setImmediate(r));
            holders.delete(key);
            t = performance.now();
            const rel = await fetch(
              `${stack.workerUrl}/v1/repos/${repo}/issues/${g.issue.number}/claim/release`,
              {
                method: "POST",
                headers,
                body: JSON.stringify({ claimId: g.claimId, fence: g.fence, outcome: "abandoned" }),
              },
            );
            releaseMs.push(performance.now() - t);
            await rel.arrayBuffer();
            if (rel.status === 200) pairs += 1;
            else errors += 1;
          }
        };
        const started = performance.now();
        await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
        const elapsed = (performance.now() - started) / 1000;
        claimMs.sort((a, b) => a - b);
        releaseMs.sort((a, b) => a - b);
        return {
          route,
          pairs,
          pairsPerSecond: pairs / elapsed,
          claimP50: pct(claimMs, 0.5),
          claimP99: pct(claimMs, 0.99),
          releaseP99: pct(releaseMs, 0.99),
          doubleGrants,
          errors,
          noWork,
          repositoriesTouched: touched.size,
          claimMs,
        };
      };

      // The install's follow-up work (producer runs, label writes) shares the Worker's thread:
      // let it pass, then alternate the routes so that neither gets the quieter moments alone.
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const phases: Phase[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        for (const route of ["repository", "org"] as const) {
          phases.push(await phase(route));
          // Let the releases' pushes settle before the next phase.
          await new Promise((r) => setTimeout(r, 3_000));
        }
      }
      const pooled = (route: Phase["route"]) =>
        phases
          .filter((p) => p.route === route)
          .flatMap((p) => p.claimMs)
          .sort((a, b) => a - b);
      const singleMs = pooled("repository");
      const orgMs = pooled("org");

      // Propagation: an idle repository gains ready work; from its own queue showing it to the
      // owner's queue showing it (both polled every 25 ms).
      const lags: number[] = [];
      const totals: number[] = [];
      for (let s = 0; s < SAMPLES; s++) {
        const name = names[WITH_WORK + Math.floor(((s + 0.5) / SAMPLES) * (REPOS - WITH_WORK))]!;
        const t0 = performance.now();
        await post(`${stack.sim.url}/_sim/repos/${OWNER}/${name}/issues`, {
          title: "new work",
          labels: ["agent:ready"],
        });
        let repoAt: number | null = null;
        let orgAt: number | null = null;
        await waitFor(
          `new work of ${name} in the owner's queue`,
          async () => {
            const [own, owner] = await Promise.all([
              fetch(`${stack.workerUrl}/v1/repos/${OWNER}/${name}/queue?limit=5`, {
                headers: { authorization: `Bearer ${ownerKey}` },
              }).then((r) => r.json() as Promise<{ total: number }>),
              orgQueue(`repos=${name}&limit=5`),
            ]);
            const now = performance.now();
            if (repoAt === null && own.total > 0) repoAt = now;
            if (orgAt === null && owner.items.length > 0) orgAt = now;
            await new Promise((r) => setTimeout(r, 25));
            return repoAt !== null && orgAt !== null ? true : undefined;
          },
          60_000,
        );
        lags.push(Math.max(0, orgAt! - repoAt!));
        totals.push(orgAt! - t0);
      }
      lags.sort((a, b) => a - b);
      totals.sort((a, b) => a - b);

      const f = (n: number) => n.toFixed(1);
      const singleP99 = pct(singleMs, 0.99);
      const orgP99 = pct(orgMs, 0.99);
      const ratio = orgP99 / Math.max(1e-9, singleP99);
      return {
        report: [
          `${REPOS} repositories of one owner (${WITH_WORK} with ${ISSUES} ready issues, the others one issue without work), installed at once in ${installSeconds.toFixed(0)} s; ${CLIENTS} clients looping claim-next → release (abandoned) for ${SECONDS} s a phase, ${ROUNDS} rounds of both routes, against ${hostLabel(benchHost())}`,
          "| claim-next route | pairs | pairs/s | claim p50 ms | claim p99 ms | release p99 ms | double grants | errors | 204s | repositories granted from |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
          ...phases.map(
            (p) =>
              `| ${p.route === "org" ? `POST /v1/orgs/${OWNER}/claims (owner key)` : `POST /v1/repos/${OWNER}/r0/claims (fleet key)`} | ${p.pairs} | ${p.pairsPerSecond.toFixed(0)} | ${f(p.claimP50)} | ${f(p.claimP99)} | ${f(p.releaseP99)} | ${p.doubleGrants} | ${p.errors} | ${p.noWork} | ${p.repositoriesTouched} |`,
          ),
          `claim-next p99 over all rounds: repository ${f(singleP99)} ms (p50 ${f(pct(singleMs, 0.5))}), org ${f(orgP99)} ms (p50 ${f(pct(orgMs, 0.5))}): org/single ${ratio.toFixed(2)}x`,
          `new work, repository queue → owner queue (${SAMPLES} samples): p50 ${f(pct(lags, 0.5))} ms, max ${f(lags.at(-1) ?? 0)} ms; issue opened on the simulator → owner queue: p50 ${f(pct(totals, 0.5))} ms, max ${f(totals.at(-1) ?? 0)} ms`,
        ],
        targets: [
          {
            name: `org claim-next p99 at most 2x the single-repository p99 (${ratio.toFixed(2)}x)`,
            ok: ratio <= 2,
          },
          {
            name: `new work in the owner's queue within 2 s of the repository's (max ${f(lags.at(-1) ?? 0)} ms)`,
            ok: (lags.at(-1) ?? Number.POSITIVE_INFINITY) <= 2_000,
          },
          ...phases.map((p) => ({
            name: `${p.route}: zero double grants (${p.doubleGrants}) and zero errors (${p.errors})`,
            ok: p.doubleGrants === 0 && p.errors === 0,
          })),
        ],
        figures: {
          repos: REPOS,
          withWork: WITH_WORK,
          clients: CLIENTS,
          seconds: SECONDS,
          installSeconds,
          phases: phases.map(({ claimMs: _ms, ...p }) => p),
          singleP99,
          orgP99,
          ratio,
          lagsMs: lags,
          totalsMs: totals,
        },
      };
    } finally {
      await stack.close();
    }
  },
};

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
