// Claim throughput (spec 9: at least 500 claim+release pairs a second on one repository locally,
// zero double grants): the Worker under `wrangler dev`, 50 concurrent clients looping
// claim-next → release through the HTTP API with fleet keys, on one repository of 1,000 open
// issues with IDD mirroring on, then spread over 20 repositories.
import process from "node:process";
import autocannon from "autocannon";
import { seedFiles } from "../infra/github-sim/contents.ts";
import { seedSnapshot } from "../infra/github-sim/seed.ts";
import { startLocalStack, waitFor } from "../infra/local-stack.ts";
import type { Benchmark } from "./benchmark.ts";
import { benchHost, hostLabel } from "./host.ts";

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const REPOS = 20;
const BIG = 1000;
const SMALL = 100;
// Pairs are released `abandoned`: attempts must not dead-letter the issues mid-run.
const CONFIG = "claims:\n  maxAttempts: 100\n";

interface Phase {
  repos: number;
  pairs: number;
  pairsPerSecond: number;
  claimP50: number;
  claimP99: number;
  releaseP50: number;
  releaseP99: number;
  doubleGrants: number;
  errors: number;
  noWork: number;
  githubWrites: number;
}

const pct = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

export const claimsBenchmark: Benchmark = {
  name: "claims",
  async run() {
    // Mirroring coalesces behind the write delay (2 s by default, as deployed).
    const stack = await startLocalStack("bench-claims", { host: benchHost() });
    try {
      const state = stack.sim.sim.state;
      const repos: string[] = [];
      for (let r = 0; r < REPOS; r++) {
        const count = r === 0 ? BIG : SMALL;
        const fullName = `fleet/r${r}`;
        seedSnapshot(state, {
          repo: fullName,
          issues: Array.from({ length: count }, (_, i) => ({
            number: i + 1,
            title: `Issue ${i + 1}`,
            state: "open",
            stateReason: null,
            createdAt: "2026-11-01T00:00:00Z",
            updatedAt: "2026-11-01T00:00:00Z",
            closedAt: null,
            labels: ["agent:ready"],
          })),
        });
        await seedFiles(state, state.requireRepo("fleet", `r${r}`), {
          ".github/switchyard.yml": CONFIG,
        });
        repos.push(fullName);
      }
      stack.sim.sim.webhooks.pushUrl = `${stack.workerUrl}/webhooks/github`;
      const admin = `ghp_bench${crypto.randomUUID().replace(/-/g, "")}`;
      await post(`${stack.sim.url}/_sim/users`, {
        login: "fleet-admin",
        token: admin,
        repos: Object.fromEntries(repos.map((r) => [r, "admin"])),
      });
      state.install(
        "fleet",
        repos.map((r) => r.split("/")[1]!),
        "fleet-admin",
      );
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
        )) as { key: string };
        keys.set(repo, key.key);
      }

      const phase = async (count: number): Promise<Phase> => {
        const writesBefore = stack.sim.sim.counter.snapshot().total;
        const holders = new Map<string, number>();
        const claimMs: number[] = [];
        const releaseMs: number[] = [];
        let pairs = 0;
        let doubleGrants = 0;
        let errors = 0;
        let noWork = 0;
        const deadline = performance.now() + SECONDS * 1000;
        const client = async (c: number) => {
          const repo = repos[c % count]!;
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
            };
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
        const started = performance.now();
        await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
        const elapsed = (performance.now() - started) / 1000;
        // Let the coalesced mirror writes go out, then count what reached GitHub.
        await new Promise((r) => setTimeout(r, 5_000));
        claimMs.sort((a, b) => a - b);
        releaseMs.sort((a, b) => a - b);
        return {
          repos: count,
          pairs,
          pairsPerSecond: pairs / elapsed,
          claimP50: pct(claimMs, 0.5),
          claimP99: pct(claimMs, 0.99),
          releaseP50: pct(releaseMs, 0.5),
          releaseP99: pct(releaseMs, 0.99),
          doubleGrants,
          errors,
          noWork,
          githubWrites: stack.sim.sim.counter.snapshot().total - writesBefore,
        };
      };

      // The floor: what wrangler dev serves on this machine for a route touching no Durable Object.
      const floor = await autocannon({
        url: `${stack.workerUrl}/floor`,
        connections: CLIENTS,
        duration: 5,
      });
      const phases = [await phase(1), await phase(REPOS)];
      const f = (n: number) => n.toFixed(1);
      return {
        report: [
          `${CLIENTS} clients looping claim-next → release (abandoned) for ${SECONDS} s against ${hostLabel(benchHost())}; fleet keys; IDD mirroring on (2 s write delay)`,
          "| repositories | pairs | pairs/s | claim p50 ms | claim p99 ms | release p50 ms | release p99 ms | double grants | errors | 204s | GitHub requests after |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
          `| floor: GET of an unknown route, ${CLIENTS} connections | ${floor.requests.total} requests | ${floor.requests.average} req/s | ${floor.latency.p50} | ${floor.latency.p99} | - | - | - | ${floor.errors} | - | - |`,
          ...phases.map(
            (p) =>
              `| ${p.repos === 1 ? `1 (${BIG} issues)` : `${p.repos}`} | ${p.pairs} | ${p.pairsPerSecond.toFixed(0)} | ${f(p.claimP50)} | ${f(p.claimP99)} | ${f(p.releaseP50)} | ${f(p.releaseP99)} | ${p.doubleGrants} | ${p.errors} | ${p.noWork} | ${p.githubWrites} |`,
          ),
        ],
        targets: [
          {
            name: `one repository: at least 500 pairs a second (${phases[0]!.pairsPerSecond.toFixed(0)})`,
            ok: phases[0]!.pairsPerSecond >= 500,
          },
          ...phases.map((p) => ({
            name: `${p.repos} repo(s): zero double grants (${p.doubleGrants}) and zero errors (${p.errors})`,
            ok: p.doubleGrants === 0 && p.errors === 0,
          })),
        ],
        figures: {
          clients: CLIENTS,
          seconds: SECONDS,
          floor: { rps: floor.requests.average, p50: floor.latency.p50, p99: floor.latency.p99 },
          phases,
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
