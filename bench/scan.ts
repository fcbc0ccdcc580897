// Scan benchmark: synthetic repositories of 1k, 10k and 100k issues, each size measured in its
// own child process so peak memory (max RSS) belongs to that size alone.
import { spawnSync } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { scan } from "../shared/graph/scan.ts";
import { parseSnapshot } from "../shared/graph/snapshot.ts";
import { plan } from "../shared/producer/plan.ts";
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
  maxRssMiB: number;
}

function measure(n: number, runs: number): SizeResult {
  const input = syntheticSnapshot(n);
  const parseTimes: number[] = [];
  const scanTimes: number[] = [];
  const planTimes: number[] = [];
  let snapshot = parseSnapshot(input);
  let edges = 0;
  for (let i = 0; i < runs + 1; i++) {
    let t = performance.now();
    snapshot = parseSnapshot(input);
    const parseMs = performance.now() - t;
    t = performance.now();
    const result = scan(snapshot);
    const scanMs = performance.now() - t;
    t = performance.now();
    plan(snapshot);
    const planMs = performance.now() - t;
    edges = result.stats.edges;
    if (i === 0) continue; // warm-up
    parseTimes.push(parseMs);
    scanTimes.push(scanMs);
    planTimes.push(planMs);
  }
  return {
    issues: n,
    edges,
    parseMs: median(parseTimes),
    scanMs: median(scanTimes),
    planMs: median(planTimes),
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
  };
}

export function runScanBench(): string {
  const sizes = [1_000, 10_000, 100_000];
  const results: SizeResult[] = [];
  for (const n of sizes) {
    const child = spawnSync(
      process.execPath,
      [fileURLToPath(import.meta.url), "--size", String(n)],
      {
        encoding: "utf8",
      },
    );
    if (child.status !== 0) throw new Error(`scan bench for ${n} failed: ${child.stderr}`);
    results.push(JSON.parse(child.stdout) as SizeResult);
  }
  const byN = new Map(results.map((r) => [r.issues, r]));
  const ratio = byN.get(100_000)!.scanMs / byN.get(10_000)!.scanMs;
  const rows = results.map(
    (r) =>
      `| ${r.issues.toLocaleString("en")} | ${r.edges.toLocaleString("en")} | ${r.scanMs.toFixed(1)} | ${r.planMs.toFixed(1)} | ${r.parseMs.toFixed(1)} | ${r.maxRssMiB.toFixed(0)} |`,
  );
  const big = byN.get(100_000)!;
  return [
    "### Scan (median of 7 runs after a warm-up; one core)",
    "",
    "| issues | edges | scan ms | plan ms | parse (zod) ms | peak RSS MiB |",
    "|---:|---:|---:|---:|---:|---:|",
    ...rows,
    "",
    `100k/10k scan time ratio: ${ratio.toFixed(2)} (target <= 12). ` +
      `100k scan: ${big.scanMs.toFixed(0)} ms (target < 1000 ms): ${big.scanMs < 1000 && ratio <= 12 ? "PASS" : "FAIL"}.`,
  ].join("\n");
}

const sizeFlag = process.argv.indexOf("--size");
if (sizeFlag !== -1) {
  process.stdout.write(JSON.stringify(measure(Number(process.argv[sizeFlag + 1]), 7)));
}
