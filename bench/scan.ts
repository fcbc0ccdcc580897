// Scan benchmark: synthetic repositories of 1k, 10k and 100k issues, each size measured in its
// own child process so peak memory (max RSS) belongs to that size alone.
import { spawnSync } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { DEFAULT_CONFIG } from "../shared/config/schema.ts";
import { compactFromSnapshot } from "../shared/graph/compact.ts";
import {
  analyzeCompact,
  asGraphAnalysis,
  renderCompactScan,
} from "../shared/graph/compact-analysis.ts";
import { scan } from "../shared/graph/scan.ts";
import { parseSnapshot } from "../shared/graph/snapshot.ts";
import { plan, planFromAnalysis } from "../shared/producer/plan.ts";
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
  scanMs: number;
  planMs: number;
  /** The compact graph (typed arrays; what the RepoObject keeps): build, scan, plan. */
  compactBuildMs: number;
  compactScanMs: number;
  compactPlanMs: number;
  maxRssMiB: number;
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
    const compactResult = renderCompactScan(analyzeCompact(compact, options));
    const compactScanMs = performance.now() - t;
    gc();
    t = performance.now();
    planFromAnalysis(asGraphAnalysis(analyzeCompact(compact, options)));
    const compactPlanMs = performance.now() - t;
    if (i === 0 && JSON.stringify(compactResult) !== JSON.stringify(result))
      throw new Error(`the compact scan of ${n} issues differs from the plain scan`);
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
        "| issues | edges | scan ms | plan ms | parse (zod) ms | compact build ms | compact scan ms | compact plan ms | peak RSS MiB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ...results.map(
          (r) =>
            `| ${r.issues.toLocaleString("en")} | ${r.edges.toLocaleString("en")} | ${r.scanMs.toFixed(1)} | ${r.planMs.toFixed(1)} | ${r.parseMs.toFixed(1)} | ${r.compactBuildMs.toFixed(1)} | ${r.compactScanMs.toFixed(1)} | ${r.compactPlanMs.toFixed(1)} | ${r.maxRssMiB.toFixed(0)} |`,
        ),
        `100k/10k scan time ratio: ${ratio.toFixed(2)} (compact: ${compactRatio.toFixed(2)})`,
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
