// A large repository through the public surfaces (issue 10): the Worker under `wrangler dev`
// with default settings (the local stack's: the isolate's V8 heap capped at 128 MB as on the
// platform; MINIFLARE_WORKERD_V8_FLAGS="" measures workerd uncapped), the GitHub simulator
// holding a synthetic repository of 20k and 100k issues with bodies. Reports the first full
// reconcile (visible in the graph API), workerd's resident memory over idle while it reconciles
// and while the producer runs, close → `agent:ready`, webhook acknowledgements while the
// producer plans, and the same reconcile at a GitHub latency of 300 ms a request with the
// Worker killed and restarted in the middle.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import process from "node:process";
import { Worker } from "node:worker_threads";
import { seedSnapshot } from "../infra/github-sim/seed.ts";
import {
  descendants,
  type LocalStack,
  startLocalStack,
  waitFor,
  workerdV8Flags,
} from "../infra/local-stack.ts";
import { signBody } from "../shared/webhooks/signature.ts";
import type { Benchmark } from "./benchmark.ts";
import { syntheticSnapshot } from "./synthetic.ts";

const SIZES = (process.env.BENCH_SCALE_SIZES ?? "20000,100000").split(",").map(Number);
/** The size the slow-GitHub run uses (1,000 pages at 300 ms would take many minutes at 100k). */
const SLOW_SIZE = Number(process.env.BENCH_SCALE_SLOW_SIZE ?? 20_000);
const LATENCY_MS = 300;
/**
 * Runs of each size at latency 0; the targets are judged on the median of each figure (single
 * runs of the 100k repository swing by about 15 MiB).
 */
const RUNS = Math.max(1, Number(process.env.BENCH_SCALE_RUNS ?? 1));
/**
 * `queue.replies` in the repository's `.github/switchyard.yml` (unset: no file, the default
 * `answers`): `off` measures the graph without reply state (issue 22).
 */
const REPLIES = process.env.BENCH_SCALE_REPLIES;
/** Blocker → blocked pairs added to the repository, one per close → `agent:ready` sample. */
const CHAINS = 5;
const ACK_RATE = 20;
const OWNER = "scale";
const CONFIG_PATH = ".github/switchyard.yml";
const MiB = 2 ** 20;

/** Sends the signed deliveries at a fixed rate and posts back each one's latency (ms). */
const SENDER = `
const { parentPort, workerData } = require("node:worker_threads");
const { url, items, intervalMs } = workerData;
(async () => {
  const latencies = [];
  const inflight = [];
  const start = performance.now();
  for (let i = 0; i < items.length; i++) {
    const wait = start + i * intervalMs - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    inflight.push(
      fetch(url, { method: "POST", body: items[i].body, headers: items[i].headers }).then(async (res) => {
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
      }),
    );
  }
  await Promise.all(inflight);
  parentPort.postMessage(latencies);
})();
`;

const BODY = `${"This synthetic issue body stands in for a real one: steps, context, links. ".repeat(8)}\n<!-- requires: node -->`;

interface Resident {
  /** VmRSS: everything resident. */
  rss: number;
  /** RssAnon: heaps (V8's, malloc's, SQLite's page cache). */
  anon: number;
  /** RssFile: mapped files (the binary, and any database file SQLite maps). */
  file: number;
}

/**
 * Resident memory of the workerd that runs the Worker, in bytes: the one holding the Durable
 * Objects' databases open. `wrangler dev` runs a second workerd of its own (its dev proxy, which
 * every request and the inspector pass through); `proxy` is that one's RSS, reported apart.
 */
function workerdResident(stack: LocalStack): Resident & { proxy: number } {
  const total = { rss: 0, anon: 0, file: 0, proxy: 0 };
  const kb = (status: string, field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
  for (const pid of descendants(stack.workerPid())) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      if (!/^Name:\s+workerd/m.test(status)) continue;
      if (!holdsOpen(pid, stack.stateDir)) {
        total.proxy += kb(status, "VmRSS");
        continue;
      }
      total.rss += kb(status, "VmRSS");
      total.anon += kb(status, "RssAnon");
      total.file += kb(status, "RssFile") + kb(status, "RssShmem");
    } catch {
      // exited
    }
  }
  return total;
}

/**
 * Whether process `pid` has a file under `dir` open, decided once per process: a no is asked
 * again only in the 10 s after the process is first seen (a Worker opens its databases on first
 * use). Listing workerd's descriptors on every sample slowed the Worker by half.
 */
const opens = new Map<number, { found: boolean; firstMs: number; atMs: number }>();
function holdsOpen(pid: number, dir: string): boolean {
  const now = Date.now();
  const known = opens.get(pid);
  if (known && (known.found || now - known.firstMs > 10_000 || now - known.atMs < 2_000))
    return known.found;
  const found = listsOpen(pid, dir);
  opens.set(pid, { found, firstMs: known?.firstMs ?? now, atMs: now });
  return found;
}

function listsOpen(pid: number, dir: string): boolean {
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(dir)) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/** Each part's growth over idle, in MiB. */
const over = (
  peak: Resident & { proxy: number },
  idle: Resident & { proxy: number },
): Resident & { proxy: number } => ({
  rss: (peak.rss - idle.rss) / MiB,
  anon: (peak.anon - idle.anon) / MiB,
  file: (peak.file - idle.file) / MiB,
  proxy: (peak.proxy - idle.proxy) / MiB,
});

/** Samples workerd's resident memory every 100 ms until stopped; each part's peak is reported. */
function rssSampler(stack: LocalStack) {
  const peak = workerdResident(stack);
  const sample = () => {
    const now = workerdResident(stack);
    peak.rss = Math.max(peak.rss, now.rss);
    peak.anon = Math.max(peak.anon, now.anon);
    peak.file = Math.max(peak.file, now.file);
    peak.proxy = Math.max(peak.proxy, now.proxy);
  };
  const timer = setInterval(sample, 100);
  return {
    stop(): Resident & { proxy: number } {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/**
 * The Worker isolate's memory (the Durable Objects run in it) through `wrangler dev`'s inspector,
 * sampled every 100 ms: the V8 heap in use plus what lives outside it on the isolate's account
 * (typed arrays' and other array buffers' memory, workerd's objects on the C++ heap). What a
 * Durable Object's 128 MB is charged against, without workerd's own memory, SQLite's caches or
 * garbage RSS has not given back.
 */
async function heapSampler(url: string | null) {
  if (url === null) return null;
  const base = url.replace("ws://", "http://").replace(/\/ws$/, "");
  const [target] = (await (await fetch(`${base}/json`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  // The inspector proxy refuses a client without an Origin it knows (a browser's DevTools).
  const ws = new WebSocket(target!.webSocketDebuggerUrl, {
    headers: { origin: "http://127.0.0.1" },
  } as unknown as string[]);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error(`the Worker's inspector at ${url} refused the connection`));
  });
  let id = 0;
  const waiting = new Map<number, (usage: { used: number; total: number }) => void>();
  ws.onmessage = (e) => {
    const m = JSON.parse(String(e.data)) as {
      id?: number;
      result?: {
        usedSize?: number;
        totalSize?: number;
        embedderHeapUsedSize?: number;
        backingStorageSize?: number;
      };
    };
    const r = m.result;
    if (m.id !== undefined)
      waiting.get(m.id)?.({
        used: (r?.usedSize ?? 0) + (r?.embedderHeapUsedSize ?? 0) + (r?.backingStorageSize ?? 0),
        total: r?.totalSize ?? 0,
      });
    waiting.delete(m.id ?? -1);
  };
  const usage = () =>
    new Promise<{ used: number; total: number }>((resolve) => {
      id += 1;
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ id, method: "Runtime.getHeapUsage" }));
    });
  let peak = 0;
  let last = 0;
  // totalSize: what V8 has committed for the heap (used plus garbage and free pages it keeps).
  let peakTotal = 0;
  let lastTotal = 0;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void usage().then((u) => {
      busy = false;
      last = u.used;
      lastTotal = u.total;
      peak = Math.max(peak, u.used);
      peakTotal = Math.max(peakTotal, u.total);
    });
  }, 100);
  return {
    /** The peaks since the last reset, and the latest reading. */
    take() {
      const out = { peak, last, peakTotal };
      peak = last;
      peakTotal = lastTotal;
      return out;
    },
    close() {
      clearInterval(timer);
      ws.close();
    },
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.floor(s.length / 2)]!;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(s.length * p))]!;
};

interface Run {
  issues: number;
  latencyMs: number;
  reconcileS: number;
  reconcileRssMiB: number;
  producerRssMiB: number;
  /** Each part's peak growth over idle, MiB (`proxy`: wrangler's own workerd, not the Worker's). */
  reconcileResident: Resident & { proxy: number };
  producerResident: Resident & { proxy: number };
  /** Peak V8 heap of the Worker isolate (null: no inspector, e.g. across a restart). */
  reconcileHeapMiB: number | null;
  producerHeapMiB: number | null;
  /** Peak heap V8 committed (used + garbage + kept pages). */
  reconcileHeapTotalMiB: number | null;
  producerHeapTotalMiB: number | null;
  closeToReadyMs: number[];
  ackIdle: { p50: number; p99: number };
  ackProducer: { p50: number; p99: number };
  restarted: boolean;
  complete: boolean;
}

/**
 * A synthetic repository of `n` issues with ~600-byte bodies, plus `CHAINS` pairs at the end:
 * an open blocker and an open issue blocked only by it (closing the first readies the second).
 */
function repository(n: number, name: string) {
  const base = syntheticSnapshot(n);
  // No labels: a settled repository, where the producer owes nothing after the first reconcile
  // (otherwise its backlog of label writes, paced at GitHub's write budget, is what a close
  // waits behind, and the figure measures the budget, not the Worker).
  const issues = base.issues.map((i) => ({ ...i, labels: [], body: BODY }));
  for (let k = 0; k < CHAINS; k++) {
    const blocker = n + 1 + 2 * k;
    for (const number of [blocker, blocker + 1]) {
      issues.push({
        number,
        title: `Chain ${k} ${number === blocker ? "blocker" : "blocked"}`,
        state: "open",
        stateReason: null,
        createdAt: "2026-01-01T00:00:00Z",
        updatedAt: "2026-11-01T00:00:00Z",
        closedAt: null,
        labels: [],
        parent: null,
        blockedBy: number === blocker ? [] : [blocker],
        body: BODY,
      });
    }
  }
  return { ...base, repo: `${OWNER}/${name}`, issues };
}

async function run(n: number, opts: { latencyMs: number; restart: boolean }): Promise<Run> {
  const name = `r${n}${opts.latencyMs > 0 ? "slow" : ""}`;
  const stack = await startLocalStack(`bench-scale-${name}`);
  try {
    const state = stack.sim.sim.state;
    seedSnapshot(state, repository(n, name));
    const repo = state.requireRepo(OWNER, name);
    if (REPLIES !== undefined) {
      const text = `queue:\n  replies: ${REPLIES}\n`;
      const size = Buffer.byteLength(text);
      const sha = createHash("sha1").update(`blob ${size}\0${text}`).digest("hex");
      repo.files.set(CONFIG_PATH, { path: CONFIG_PATH, text, sha, size });
    }
    stack.sim.sim.webhooks.pushUrl = `${stack.workerUrl}/webhooks/github`;
    const token = `ghp_scale${crypto.randomUUID().replace(/-/g, "")}`;
    const registered = await fetch(`${stack.sim.url}/_sim/users`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        login: "scale-admin",
        token,
        repos: { [`${OWNER}/${name}`]: "admin" },
      }),
    });
    if (!registered.ok) throw new Error(`registering the bench user: ${registered.status}`);
    const auth = { authorization: `Bearer ${token}` };
    if (opts.latencyMs > 0) {
      stack.sim.sim.faults.set({
        requests: [{ path: "**", delayMs: opts.latencyMs, times: 1_000_000_000 }],
      });
    }
    // Idle: the Worker started and answered once, nothing installed.
    await new Promise((r) => setTimeout(r, 2_000));
    const idle = workerdResident(stack);

    const graph = async () => {
      const res = await fetch(`${stack.workerUrl}/v1/repos/${OWNER}/${name}/graph`, {
        headers: auth,
      });
      if (!res.ok) return undefined;
      return (await res.json()) as {
        stats: { issues: number };
        watermarks: { lastFullReconcileAt: string | null };
      };
    };

    const heap = opts.restart ? null : await heapSampler(stack.inspectorUrl);
    heap?.take();
    const reconcileRss = rssSampler(stack);
    const installed = performance.now();
    const installation = state.install(OWNER, [name], "scale-admin");
    let restarted = false;
    if (opts.restart) {
      // A crash in the middle: about half the pages read at the given latency.
      const pages = Math.ceil(n / 100);
      await new Promise((r) => setTimeout(r, (pages * Math.max(opts.latencyMs, 20)) / 2));
      await stack.restartWorker();
      restarted = true;
    }
    const reconciled = await waitFor(
      "the first full reconcile",
      async () => {
        const g = await graph();
        return g?.watermarks.lastFullReconcileAt ? g : undefined;
      },
      1_800_000,
    );
    const reconcileS = (performance.now() - installed) / 1000;
    const reconcileResident = over(reconcileRss.stop(), idle);
    const reconcileHeap = heap?.take() ?? null;
    const complete = reconciled.stats.issues === n + 2 * CHAINS;

    const quiet = [...repo.issues.values()]
      .filter((i) => i.state === "open" && i.labels.length === 0)
      .slice(0, 10);
    let seq = 0;
    const ack = async (durationMs: number, during?: () => Promise<void>) => {
      const items: Array<{ body: string; headers: Record<string, string> }> = [];
      const count = Math.round((durationMs / 1000) * ACK_RATE);
      const startMs = Date.now();
      for (let i = 0; i < count; i++) {
        seq += 1;
        // A title edit of an open, unlabelled issue as GitHub would send it: nothing for the
        // producer to do, only the acknowledgement path and the merge.
        const target = quiet[seq % quiet.length]!;
        const at = new Date(startMs + (i * 1000) / ACK_RATE);
        const body = JSON.stringify({
          action: "edited",
          issue: {
            id: target.id,
            node_id: target.nodeId,
            number: target.number,
            title: `Edited ${seq}`,
            state: "open",
            state_reason: null,
            body: target.body,
            labels: [],
            user: { login: "scale-admin", id: 1, type: "User" },
            created_at: target.createdAt,
            updated_at: at.toISOString().replace(/\.\d{3}Z$/, "Z"),
            closed_at: null,
          },
          changes: { title: { from: target.title } },
          repository: { id: repo.id, name, full_name: `${OWNER}/${name}` },
          sender: { login: "scale-admin", id: 1, type: "User" },
          installation: { id: installation.id },
        });
        items.push({
          body,
          headers: {
            "content-type": "application/json",
            "x-github-event": "issues",
            "x-github-delivery": `scale-${name}-${seq}`,
            "x-hub-signature-256": await signBody(stack.webhookSecret, body),
          },
        });
      }
      // The sender has a thread of its own: this process also runs the simulator, whose heap
      // (the whole repository) has garbage-collection pauses that would be charged to the Worker.
      const sender = new Worker(SENDER, {
        eval: true,
        workerData: {
          url: `${stack.workerUrl}/webhooks/github`,
          items,
          intervalMs: 1000 / ACK_RATE,
        },
      });
      const done = new Promise<number[]>((resolve, reject) => {
        sender.once("message", resolve);
        sender.once("error", reject);
      });
      const sideline = during?.();
      const latencies = await done;
      await sideline;
      await sender.terminate();
      return { p50: pct(latencies, 0.5), p99: pct(latencies, 0.99) };
    };

    // Idle: the producer's first plan after the reconcile has run.
    await new Promise((r) => setTimeout(r, 10_000));
    const ackIdle = await ack(5_000);
    const closeToReadyMs: number[] = [];
    const producerRss = rssSampler(stack);
    heap?.take();
    const ackProducer = await ack(CHAINS * 4_000, async () => {
      for (let k = 0; k < CHAINS; k++) {
        const blocker = n + 1 + 2 * k;
        const blocked = repo.issues.get(blocker + 1)!;
        const t0 = performance.now();
        await fetch(`${stack.sim.url}/_sim/repos/${OWNER}/${name}/issues/${blocker}/close`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ actor: "scale-admin" }),
        });
        // Polled every 10 ms (the simulator is in this process: reading it costs nothing).
        while (!blocked.labels.includes("agent:ready")) {
          if (performance.now() - t0 > 120_000)
            throw new Error(`#${blocker + 1} never got agent:ready`);
          await new Promise((r) => setTimeout(r, 10));
        }
        closeToReadyMs.push(performance.now() - t0);
      }
    });
    const producerResident = over(producerRss.stop(), idle);
    const producerHeap = heap?.take() ?? null;
    heap?.close();
    return {
      issues: n,
      latencyMs: opts.latencyMs,
      reconcileS,
      reconcileRssMiB: reconcileResident.rss,
      producerRssMiB: producerResident.rss,
      reconcileResident,
      producerResident,
      reconcileHeapMiB: reconcileHeap && reconcileHeap.peak / MiB,
      producerHeapMiB: producerHeap && producerHeap.peak / MiB,
      reconcileHeapTotalMiB: reconcileHeap && reconcileHeap.peakTotal / MiB,
      producerHeapTotalMiB: producerHeap && producerHeap.peakTotal / MiB,
      closeToReadyMs,
      ackIdle,
      ackProducer,
      restarted,
      complete,
    };
  } finally {
    await stack.close();
  }
}

export const workerScale: Benchmark = {
  name: "worker-scale",
  async run() {
    const runs: Run[] = [];
    for (const n of SIZES)
      for (let k = 0; k < RUNS; k++) runs.push(await run(n, { latencyMs: 0, restart: false }));
    runs.push(await run(SLOW_SIZE, { latencyMs: LATENCY_MS, restart: true }));
    const size = SIZES.at(-1)!;
    const big = runs.filter((r) => r.latencyMs === 0 && r.issues === size);
    // Each figure's median over the runs of the biggest size (a missing isolate figure counts as
    // over every bound).
    const med = (figure: (r: Run) => number | null) =>
      median(big.map((r) => figure(r) ?? Number.POSITIVE_INFINITY));
    const biggest = {
      issues: size,
      reconcileRssMiB: med((r) => r.reconcileRssMiB),
      producerRssMiB: med((r) => r.producerRssMiB),
      reconcileHeapMiB: med((r) => r.reconcileHeapMiB),
      producerHeapMiB: med((r) => r.producerHeapMiB),
      closeToReadyMs: med((r) => median(r.closeToReadyMs)),
      ackIdleP99: med((r) => r.ackIdle.p99),
      ackProducerP99: med((r) => r.ackProducer.p99),
    };
    const slow = runs.at(-1)!;
    const fmt = (x: number, d = 0) => x.toFixed(d);
    return {
      report: [
        `wrangler dev with default settings, V8 flags: ${workerdV8Flags(process.env) || "none"} (MINIFLARE_WORKERD_V8_FLAGS); simulator in this process; bodies of ~600 bytes; ${RUNS} run(s) a size, targets on the median (BENCH_SCALE_RUNS); queue.replies: ${REPLIES ?? "default"} (BENCH_SCALE_REPLIES)`,
        "| issues | GitHub latency | restart mid-reconcile | first full reconcile s | per 1,000 issues s | RSS over idle, reconcile MiB | RSS over idle, producer MiB | isolate memory peak, reconcile MiB | isolate memory peak, producer MiB | close → agent:ready median ms (max) | ack p50/p99 idle ms | ack p50/p99 during producer ms | graph complete |",
        "|---:|---:|:-:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:-:|",
        ...runs.map(
          (r) =>
            `| ${r.issues.toLocaleString("en")} | ${r.latencyMs} ms | ${r.restarted ? "yes" : "no"} | ${fmt(r.reconcileS, 1)} | ${fmt((r.reconcileS * 1000) / r.issues, 2)} | ${fmt(r.reconcileRssMiB)} | ${fmt(r.producerRssMiB)} | ${r.reconcileHeapMiB === null ? "-" : fmt(r.reconcileHeapMiB)} | ${r.producerHeapMiB === null ? "-" : fmt(r.producerHeapMiB)} | ${fmt(median(r.closeToReadyMs))} (${fmt(Math.max(...r.closeToReadyMs))}) | ${fmt(r.ackIdle.p50)}/${fmt(r.ackIdle.p99)} | ${fmt(r.ackProducer.p50)}/${fmt(r.ackProducer.p99)} | ${r.complete ? "yes" : "NO"} |`,
        ),
        "",
        "Where the resident growth is (peak of each part over idle; V8 heap committed = used + garbage + pages kept):",
        "| issues | GitHub latency | anon reconcile / producer MiB | file-backed reconcile / producer MiB | V8 heap committed reconcile / producer MiB | wrangler's dev-proxy workerd (not counted) MiB |",
        "|---:|---:|---:|---:|---:|---:|",
        ...runs.map(
          (r) =>
            `| ${r.issues.toLocaleString("en")} | ${r.latencyMs} ms | ${fmt(r.reconcileResident.anon)} / ${fmt(r.producerResident.anon)} | ${fmt(r.reconcileResident.file)} / ${fmt(r.producerResident.file)} | ${r.reconcileHeapTotalMiB === null ? "-" : fmt(r.reconcileHeapTotalMiB)} / ${r.producerHeapTotalMiB === null ? "-" : fmt(r.producerHeapTotalMiB)} | ${fmt(r.reconcileResident.proxy)} / ${fmt(r.producerResident.proxy)} |`,
        ),
      ],
      targets: [
        {
          name: `RSS growth under 128 MiB at ${biggest.issues} issues (reconcile ${fmt(biggest.reconcileRssMiB)}, producer ${fmt(biggest.producerRssMiB)})`,
          ok: Math.max(biggest.reconcileRssMiB, biggest.producerRssMiB) < 128,
        },
        {
          name: `isolate memory (V8 heap, array buffers, C++ heap) under 128 MiB at ${biggest.issues} issues (reconcile ${fmt(biggest.reconcileHeapMiB)}, producer ${fmt(biggest.producerHeapMiB)})`,
          ok: Math.max(biggest.reconcileHeapMiB, biggest.producerHeapMiB) < 128,
        },
        {
          name: `close → agent:ready under 2 s at ${biggest.issues} issues (median ${fmt(biggest.closeToReadyMs)} ms)`,
          ok: biggest.closeToReadyMs < 2_000,
        },
        {
          name: `ack p99 during producer runs within 2x of idle at ${biggest.issues} issues (${fmt(biggest.ackProducerP99)} vs ${fmt(biggest.ackIdleP99)} ms)`,
          ok: biggest.ackProducerP99 <= 2 * Math.max(biggest.ackIdleP99, 1),
        },
        {
          name: "a reconcile killed in the middle completes after the restart",
          ok: slow.restarted && slow.complete,
        },
      ],
      figures: { runs },
    };
  },
};
