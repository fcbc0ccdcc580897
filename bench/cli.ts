// CLI benchmark: `switchyard scan --snapshot` as a whole process (what a user or an agent pays
// per call), on the 19-issue demo snapshot and a 100k-issue synthetic one, next to the floor of
// starting Node at all.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import process from "node:process";
import { fileURLToPath } from "node:url";
import type { Benchmark } from "./benchmark.ts";
import { syntheticSnapshot } from "./synthetic.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 15);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

interface Case {
  name: string;
  args: string[];
  env?: Record<string, string>;
}

interface CaseResult {
  name: string;
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** CPU time of the main thread, and of the whole process (GC helper threads included). */
  mainCpuMs: number;
  processCpuMs: number;
  runs: number;
}

// Preloaded into each measured process: reports its CPU time on exit. On a shared machine wall
// time swings with the load; the main thread's CPU time is what the run costs on an idle one.
const CPU_REPORT = `data:text/javascript,${encodeURIComponent(`
  process.on("exit", () => {
    const t = process.threadCpuUsage();
    const r = process.resourceUsage();
    process.stderr.write("\\nCPU " + (t.user + t.system) / 1000 + " " + (r.userCPUTime + r.systemCPUTime) / 1000 + "\\n");
  });
`)}`;

/** Wall time of `node ...args` from spawn to exit, output collected through a pipe. */
function time(c: Case, runs: number): CaseResult {
  const times: number[] = [];
  const mainCpu: number[] = [];
  const processCpu: number[] = [];
  // One unmeasured run first: it fills the compile cache (as any earlier use of the CLI would).
  for (let i = 0; i <= runs; i++) {
    const start = performance.now();
    const child = spawnSync(process.execPath, ["--import", CPU_REPORT, ...c.args], {
      cwd: root,
      env: { ...process.env, ...c.env },
      maxBuffer: 64 * 2 ** 20,
      encoding: "utf8",
    });
    const ms = performance.now() - start;
    if (child.status !== 0) throw new Error(`${c.name} exited ${child.status}: ${child.stderr}`);
    const cpu = /\nCPU (\S+) (\S+)\n/.exec(child.stderr);
    if (!cpu) throw new Error(`${c.name}: no CPU report in ${child.stderr}`);
    if (i === 0) continue;
    times.push(ms);
    mainCpu.push(Number(cpu[1]));
    processCpu.push(Number(cpu[2]));
  }
  return {
    name: c.name,
    medianMs: median(times),
    minMs: Math.min(...times),
    maxMs: Math.max(...times),
    mainCpuMs: median(mainCpu),
    processCpuMs: median(processCpu),
    runs,
  };
}

export const cliBenchmark: Benchmark = {
  name: "cli",
  async run() {
    const dir = `${root}.tmp/bench-cli`;
    mkdirSync(dir, { recursive: true });
    const big = `${dir}/snapshot-100000.json`;
    writeFileSync(big, JSON.stringify(syntheticSnapshot(100_000)));
    const bin = "functions/cli/bin.js";
    const load = () => os.loadavg()[0]!.toFixed(1);
    const loadBefore = load();
    const floor = time({ name: "node -e 0 (the floor)", args: ["-e", "0"] }, RUNS);
    const demo = time(
      {
        name: "scan, demo (19 issues)",
        args: [bin, "scan", "--snapshot", "infra/demo/snapshot.json"],
      },
      RUNS,
    );
    const demoCold = time(
      {
        name: "scan, demo, compile cache off (a first run)",
        args: [bin, "scan", "--snapshot", "infra/demo/snapshot.json"],
        env: { NODE_DISABLE_COMPILE_CACHE: "1" },
      },
      RUNS,
    );
    const demoTs = time(
      {
        name: "scan, demo, via bin.ts (type stripping on every run)",
        args: ["functions/cli/bin.ts", "scan", "--snapshot", "infra/demo/snapshot.json"],
      },
      RUNS,
    );
    const large = time(
      { name: "scan, 100k issues (22 MB)", args: [bin, "scan", "--snapshot", big] },
      Math.max(5, Math.round(RUNS * 0.7)),
    );
    const results = [floor, demo, demoCold, demoTs, large];
    return {
      report: [
        `whole process, node ${bin}; median of ${RUNS} runs (${large.runs} at 100k) after one unmeasured run; load average ${loadBefore} before, ${load()} after`,
        "| command | wall median ms | wall min ms | wall max ms | main-thread CPU ms | process CPU ms |",
        "|---|---:|---:|---:|---:|---:|",
        ...results.map(
          (r) =>
            `| ${r.name} | ${r.medianMs.toFixed(0)} | ${r.minMs.toFixed(0)} | ${r.maxMs.toFixed(0)} | ${r.mainCpuMs.toFixed(0)} | ${r.processCpuMs.toFixed(0)} |`,
        ),
      ],
      targets: [
        {
          name: `100k-issue scan under 1000 ms as a whole process (${large.medianMs.toFixed(0)} ms)`,
          ok: large.medianMs < 1000,
        },
        {
          name: `demo scan under 250 ms as a whole process (${demo.medianMs.toFixed(0)} ms)`,
          ok: demo.medianMs < 250,
        },
      ],
      figures: { results },
    };
  },
};
