// Scan benchmark: synthetic repositories of 1k, 10k and 100k issues, each size measured in its
// own child process so peak memory (max RSS) belongs to that size alone.
import { spawnSync } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { DEFAULT_CONFIG } from "../shared/config/schema.ts";
import type { GraphAnalysis } from "../shared/graph/analyze.ts";
import { compactFromSnapshot } from "../shared/graph/compact.ts";
import {
  analyzeCompact,
  asGraphAnalysis,
  type CompactAnalysis,
  compactOf,
  releaseAnalysis,
  renderCompactScan,
} from "../shared/graph/compact-analysis.ts";
import { scan } from "../shared/graph/scan.ts";
import { parseSnapshot, type Snapshot } from "../shared/graph/snapshot.ts";
import { plan, planFromAnalysis } from "../shared/producer/plan.ts";
import { impactLookup } from "../shared/queue/impact.ts";
import { queueItems } from "../shared/queue/queue.ts";
import type { Benchmark } from "./benchmark.ts";
import { syntheticSnapshot } from "./synthetic.ts";

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

interface SizeResult {
  issues: number;
  edges: number;
  parseMs: number;
  /** `scan` and `plan` of a snapshot: each builds the snapshot's compact graph, then analyses it. */
  scanMs: number;
  planMs: number;
  /** The compact graph kept (what the RepoObject does): its build, then a scan and a plan of it. */
  compactBuildMs: number;
  compactScanMs: number;
  compactPlanMs: number;
  /** What one close makes the RepoObject allocate (its scan, plan and queue view), MiB. */
  closeHeapMiB: number;
  closeArrayBufferMiB: number;
  /** One issue's removal from the compact graph (its parent and blocker rows, then its row), ms. */
  removeMs: number;
  maxRssMiB: number;
}

/**
 * What the RepoObject allocates for one learned close over the compact graph: the kept scan
 * (its analysis; the lists are rendered only when the graph API reads them), the producer's plan
 * and the fleet's queue view (a second analysis, impact scores, queue items). The median over
 * `closes` closes of open issues, with a collection before each so the figures are the
 * allocations, not what a collection took back.
 * Garbage is what raises the isolate's memory (and workerd's resident memory) between
 * collections, so this is the figure to watch when changing the analyses.
 */
function closeAllocations(snapshot: ReturnType<typeof parseSnapshot>, closes: number) {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("closeAllocations needs --expose-gc");
  const compact = compactFromSnapshot(snapshot, DEFAULT_CONFIG.labels);
  const now = snapshot.now;
  const heap: number[] = [];
  const buffers: number[] = [];
  const open = snapshot.issues.filter((i) => i.state === "open").slice(0, closes + 1);
  let kept: { scanned: CompactAnalysis; view: GraphAnalysis } | null = null;
  for (const issue of open) {
    gc();
    const before = process.memoryUsage();
    compact.upsertIssue({
      number: issue.number,
      title: issue.title,
      state: "closed",
      closedAt: now ?? "2026-01-01T00:00:00Z",
      labels: issue.labels,
    });
    const scanned = analyzeCompact(compact, { now, causes: [issue.number] });
    planFromAnalysis(asGraphAnalysis(scanned));
    const view = asGraphAnalysis(analyzeCompact(compact, { now, ownLocks: new Set() }));
    const impact = impactLookup(view);
    const items = queueItems(view, { reasons: new Map(), requires: () => [], impact });
    // The RepoObject keeps the newest scan and view until the next change, and gives the ones
    // they replace back to the pool (functions/objects/graph-scans.ts, fleet.ts).
    if (kept !== null) {
      releaseAnalysis(kept.scanned);
      releaseAnalysis(compactOf(kept.view));
    }
    kept = { scanned, view };
    const after = process.memoryUsage();
    void [impact, items];
    if (issue === open[0]) continue; // warm-up: the pool fills on the first
    heap.push((after.heapUsed - before.heapUsed) / 2 ** 20);
    buffers.push((after.arrayBuffers - before.arrayBuffers) / 2 ** 20);
  }
  return { closeHeapMiB: median(heap), closeArrayBufferMiB: median(buffers) };
}

/**
 * What removing one issue costs the compact graph, as an `issue-removed` event (or a full
 * reconcile's removal of an issue it did not see) applies it: mean over 200 issues spread over
 * the graph. Each removal looks at every slot for rows naming the issue.
 */
function removalMs(snapshot: Snapshot): number {
  const compact = compactFromSnapshot(snapshot, DEFAULT_CONFIG.labels);
  const count = Math.min(200, snapshot.issues.length);
  const step = Math.floor(snapshot.issues.length / count);
  const t = performance.now();
  for (let i = 0; i < count; i++) {
    const number = snapshot.issues[i * step]!.number;
    compact.deleteParentsInvolving(number);
    compact.deleteBlockersInvolving(number);
    compact.deleteIssue(number);
  }
  return (performance.now() - t) / count;
}

function measure(n: number, runs: number): SizeResult {
  const input = syntheticSnapshot(n);
  const parseTimes: number[] = [];
  const scanTimes: number[] = [];
  const planTimes: number[] = [];
  const compactBuildTimes: number[] = [];
  const compactScanTimes: number[] = [];
  const compactPlanTimes: number[] = [];
  let snapshot = parseSnapshot(input);
  let edges = 0;
  // Collect the previous run's garbage before each timed step, so a step is not billed for it.
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  for (let i = 0; i < runs + 1; i++) {
    gc();
    let t = performance.now();
    snapshot = parseSnapshot(input);
    const parseMs = performance.now() - t;
    gc();
    t = performance.now();
    const result = scan(snapshot);
    const scanMs = performance.now() - t;
    gc();
    t = performance.now();
    plan(snapshot);
    const planMs = performance.now() - t;
    edges = result.stats.edges;
    gc();
    t = performance.now();
    const compact = compactFromSnapshot(snapshot, DEFAULT_CONFIG.labels);
    const compactBuildMs = performance.now() - t;
    const options = snapshot.now !== undefined ? { now: snapshot.now } : {};
    gc();
    t = performance.now();
    renderCompactScan(analyzeCompact(compact, options));
    const compactScanMs = performance.now() - t;
    gc();
    t = performance.now();
    planFromAnalysis(asGraphAnalysis(analyzeCompact(compact, options)));
    const compactPlanMs = performance.now() - t;
    if (i === 0) continue; // warm-up
    parseTimes.push(parseMs);
    scanTimes.push(scanMs);
    planTimes.push(planMs);
    compactBuildTimes.push(compactBuildMs);
    compactScanTimes.push(compactScanMs);
    compactPlanTimes.push(compactPlanMs);
  }
  return {
    issues: n,
    edges,
    parseMs: median(parseTimes),
    scanMs: median(scanTimes),
    planMs: median(planTimes),
    compactBuildMs: median(compactBuildTimes),
    compactScanMs: median(compactScanTimes),
    compactPlanMs: median(compactPlanTimes),
    ...closeAllocations(snapshot, 7),
    removeMs: removalMs(snapshot),
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
  };
}

/** Scan of 1k, 10k and 100k synthetic issues (spec 9: 100k under a second, linear growth). */
export const scanBenchmark: Benchmark = {
  name: "scan",
  async run() {
    const results: SizeResult[] = [];
    for (const n of [1_000, 10_000, 100_000]) {
      const child = spawnSync(
        process.execPath,
        ["--expose-gc", fileURLToPath(import.meta.url), "--size", String(n)],
        {
          encoding: "utf8",
        },
      );
      if (child.status !== 0) throw new Error(`scan bench for ${n} failed: ${child.stderr}`);
      results.push(JSON.parse(child.stdout) as SizeResult);
    }
    const byN = new Map(results.map((r) => [r.issues, r]));
    const big = byN.get(100_000)!;
    const ratio = big.scanMs / byN.get(10_000)!.scanMs;
    const compactRatio = big.compactScanMs / byN.get(10_000)!.compactScanMs;
    return {
      report: [
        "median of 200 (1k), 60 (10k) or 15 (100k) runs after a warm-up, garbage collected before each timed step; one core; each size in its own process",
        "| issues | edges | scan ms (build included) | plan ms (build included) | parse ms | compact build ms | compact scan ms | compact plan ms | one close allocates: heap / array buffers MiB | one removal ms | peak RSS MiB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ...results.map(
          (r) =>
            `| ${r.issues.toLocaleString("en")} | ${r.edges.toLocaleString("en")} | ${r.scanMs.toFixed(1)} | ${r.planMs.toFixed(1)} | ${r.parseMs.toFixed(1)} | ${r.compactBuildMs.toFixed(1)} | ${r.compactScanMs.toFixed(1)} | ${r.compactPlanMs.toFixed(1)} | ${r.closeHeapMiB.toFixed(1)} / ${r.closeArrayBufferMiB.toFixed(1)} | ${r.removeMs.toFixed(2)} | ${r.maxRssMiB.toFixed(0)} |`,
        ),
        `100k/10k scan time ratio: ${ratio.toFixed(2)} (over a kept compact graph: ${compactRatio.toFixed(2)})`,
      ],
      targets: [
        {
          name: `100k-issue scan under 1000 ms (${big.scanMs.toFixed(0)} ms)`,
          ok: big.scanMs < 1000,
        },
        { name: `100k/10k scan time ratio at most 12 (${ratio.toFixed(2)})`, ok: ratio <= 12 },
      ],
      figures: { sizes: results, ratio, compactRatio },
    };
  },
};

const sizeFlag = process.argv.indexOf("--size");
const size = Number(process.argv[sizeFlag + 1]);
if (sizeFlag !== -1) {
  process.stdout.write(
    JSON.stringify(measure(size, size <= 1_000 ? 200 : size <= 10_000 ? 60 : 15)),
  );
}
