// Webhook acknowledgement under load (spec 9: p99 under 50 ms locally, no outbound call on the
// acknowledgement path): the Worker under `wrangler dev`, signed deliveries sent at a fixed rate
// by autocannon from this process, for one repository and for a hundred.
import process from "node:process";
import autocannon from "autocannon";
import { seedSnapshot } from "../infra/github-sim/seed.ts";
import { startLocalStack, waitFor } from "../infra/local-stack.ts";
import { signBody } from "../shared/webhooks/signature.ts";
import type { Benchmark } from "./benchmark.ts";
import { benchHost, hostLabel } from "./host.ts";

const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const REPOS = 100;

interface Phase {
  repos: number;
  requests: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  applied: number;
  appliedPerSecond: number;
  /** Median latency of the first delivery to each (possibly evicted) repository object. */
  coldStartMs: number;
  outbound: number;
}

function issuesEdited(repo: { id: number; fullName: string }, installationId: number, seq: number) {
  const at = new Date(Date.parse("2026-12-01T00:00:00Z") + seq * 1000)
    .toISOString()
    .replace(/\.\d{3}Z$/, "Z");
  return {
    action: "edited",
    issue: {
      id: 10_000_000 + seq,
      node_id: `I_bench_${seq}`,
      number: 1 + (seq % 10),
      title: `Edited ${seq}`,
      state: "open",
      state_reason: null,
      body: null,
      labels: [],
      user: { login: "bench", id: 1, type: "User" },
      created_at: "2026-11-01T00:00:00Z",
      updated_at: at,
      closed_at: null,
    },
    changes: { title: { from: "before" } },
    repository: { id: repo.id, name: repo.fullName.split("/")[1], full_name: repo.fullName },
    sender: { login: "bench", id: 1, type: "User" },
    installation: { id: installationId },
  };
}

export const webhookAck: Benchmark = {
  name: "webhook-ack",
  async run() {
    const stack = await startLocalStack("bench", {
      host: benchHost(),
      vars: { PRODUCER_DEBOUNCE_MS: "2000" },
    });
    try {
      // A hundred installed repositories of ten issues each, reconciled before the load starts.
      const repos: Array<{ id: number; fullName: string }> = [];
      const issues = Array.from({ length: 10 }, (_, i) => ({
        number: i + 1,
        title: `Issue ${i + 1}`,
        state: "open" as const,
        stateReason: null,
        createdAt: "2026-11-01T00:00:00Z",
        updatedAt: "2026-11-01T00:00:00Z",
        closedAt: null,
        labels: [],
      }));
      for (let i = 0; i < REPOS; i++) {
        seedSnapshot(stack.sim.sim.state, { repo: `bench/r${i}`, issues });
        const repo = stack.sim.sim.state.requireRepo("bench", `r${i}`);
        repos.push({ id: repo.id, fullName: `bench/r${i}` });
      }
      stack.sim.sim.webhooks.pushUrl = `${stack.workerUrl}/webhooks/github`;
      // The graph API needs a token: a simulator user with admin on every bench repository.
      const token = `ghp_bench${crypto.randomUUID().replace(/-/g, "")}`;
      const registered = await fetch(`${stack.sim.url}/_sim/users`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          login: "bench-admin",
          token,
          repos: Object.fromEntries(repos.map((r) => [r.fullName, "admin"])),
        }),
      });
      if (!registered.ok) throw new Error(`registering the bench user: ${registered.status}`);
      const auth = { authorization: `Bearer ${token}` };
      const installation = stack.sim.sim.state.install(
        "bench",
        repos.map((r) => r.fullName.split("/")[1]!),
        "bench",
      );
      for (const repo of repos) {
        await waitFor(
          `${repo.fullName} reconciled`,
          async () => {
            const res = await fetch(`${stack.workerUrl}/v1/repos/${repo.fullName}/graph`, {
              headers: auth,
            });
            if (!res.ok) return undefined;
            const g = (await res.json()) as { watermarks: { lastFullReconcileAt: string | null } };
            return g.watermarks.lastFullReconcileAt ? true : undefined;
          },
          120_000,
        );
      }

      let seq = 0;
      const phase = async (count: number): Promise<Phase> => {
        const targets = repos.slice(0, count);
        const total = RATE * SECONDS;
        const bodies: Array<{ body: string; headers: Record<string, string> }> = [];
        for (let i = 0; i < total; i++) {
          seq += 1;
          const body = JSON.stringify(issuesEdited(targets[i % count]!, installation.id, seq));
          bodies.push({
            body,
            headers: {
              "content-type": "application/json",
              "x-github-event": "issues",
              "x-github-delivery": `bench-${seq}`,
              "x-hub-signature-256": await signBody(stack.webhookSecret, body),
            },
          });
        }
        // Warm up: one delivery per repository, not measured. A Durable Object idle for a while
        // is evicted; its first request pays a cold start (reported apart, below).
        const coldStart: number[] = [];
        for (const target of targets) {
          seq += 1;
          const body = JSON.stringify(issuesEdited(target, installation.id, seq));
          const started = performance.now();
          const res = await fetch(`${stack.workerUrl}/webhooks/github`, {
            method: "POST",
            body,
            headers: {
              "content-type": "application/json",
              "x-github-event": "issues",
              "x-github-delivery": `bench-${seq}`,
              "x-hub-signature-256": await signBody(stack.webhookSecret, body),
            },
          });
          await res.arrayBuffer();
          coldStart.push(performance.now() - started);
        }
        const appliedBefore = await appliedCount(stack.workerUrl, targets, auth);
        const outboundBefore = stack.sim.sim.counter.snapshot().total;
        let next = 0;
        const result = await autocannon({
          url: `${stack.workerUrl}/webhooks/github`,
          connections: Number(process.env.BENCH_CONNECTIONS ?? 5),
          overallRate: RATE,
          amount: total,
          requests: [
            {
              method: "POST",
              setupRequest: (req) => {
                const item = bodies[next++ % bodies.length]!;
                return { ...req, body: item.body, headers: item.headers };
              },
            },
          ],
        });
        const outbound = stack.sim.sim.counter.snapshot().total - outboundBefore;
        const applied = (await appliedCount(stack.workerUrl, targets, auth)) - appliedBefore;
        return {
          repos: count,
          requests: result.requests.total,
          p50: result.latency.p50,
          p99: result.latency.p99,
          errors: result.errors + result.timeouts,
          non2xx: result.non2xx,
          applied,
          appliedPerSecond: applied / (result.duration || SECONDS),
          coldStartMs: coldStart.sort((a, b) => a - b)[Math.floor(coldStart.length / 2)]!,
          outbound,
        };
      };

      // The floor: the same load on a route that touches no Durable Object (a JSON 404).
      const floor = await autocannon({
        url: `${stack.workerUrl}/floor`,
        connections: Number(process.env.BENCH_CONNECTIONS ?? 5),
        overallRate: RATE,
        duration: Math.min(SECONDS, 10),
      });
      const phases = [await phase(1), await phase(REPOS)];
      return {
        report: [
          `${RATE} signed issues.edited deliveries a second for ${SECONDS} s (autocannon, ${process.env.BENCH_CONNECTIONS ?? 5} connections) to ${hostLabel(benchHost())}; storage ${process.env.STATE_DIR ?? ".tmp (disk)"}`,
          "| repositories | requests | p50 ms | p99 ms | errors | non-2xx | applied/s | outbound requests | first delivery to an idle object, median ms |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
          `| floor: GET of an unknown route (no Durable Object) | ${floor.requests.total} | ${floor.latency.p50} | ${floor.latency.p99} | ${floor.errors} | - | - | - | - |`,
          ...phases.map(
            (p) =>
              `| ${p.repos} | ${p.requests} | ${p.p50} | ${p.p99} | ${p.errors} | ${p.non2xx} | ${p.appliedPerSecond.toFixed(0)} | ${p.outbound} | ${p.coldStartMs.toFixed(0)} |`,
          ),
        ],
        targets: phases.flatMap((p) => [
          { name: `${p.repos} repo(s): p99 under 50 ms (${p.p99} ms)`, ok: p.p99 < 50 },
          {
            name: `${p.repos} repo(s): zero errors (${p.errors + p.non2xx})`,
            ok: p.errors + p.non2xx === 0,
          },
          {
            name: `${p.repos} repo(s): zero outbound requests while acknowledging (${p.outbound})`,
            ok: p.outbound === 0,
          },
          {
            name: `${p.repos} repo(s): every delivery applied once (${p.applied} of ${p.requests})`,
            ok: p.applied === p.requests,
          },
        ]),
        figures: {
          rate: RATE,
          seconds: SECONDS,
          floor: { p50: floor.latency.p50, p99: floor.latency.p99 },
          phases,
        },
      };
    } finally {
      await stack.close();
    }
  },
};

async function appliedCount(
  workerUrl: string,
  repos: Array<{ fullName: string }>,
  headers: Record<string, string>,
): Promise<number> {
  let total = 0;
  for (const repo of repos) {
    const res = await fetch(`${workerUrl}/v1/repos/${repo.fullName}/graph`, { headers });
    const g = (await res.json()) as { deliveries: { applied: number } };
    total += g.deliveries.applied;
  }
  return total;
}
