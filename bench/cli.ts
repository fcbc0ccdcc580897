// CLI benchmark: `switchyard scan --snapshot` as a whole process (what a user or an agent pays
// per call), on a 100k-issue synthetic snapshot next to its floor (a Node process that reads and
// parses the same file, nothing else), and on the 19-issue demo snapshot. Spec 9: the 100k scan
// costs at most 3x its floor; issue 10: the demo under 250 ms.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import process from "node:process";
import { fileURLToPath } from "node:url";
import type { Benchmark } from "./benchmark.ts";
import { syntheticSnapshot } from "./synthetic.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
/**
 * The checkout whose CLI runs (BENCH_CLI_ROOT, default this one): a copy of an older commit gives
 * before-and-after figures on the same files and the same load. One without phase marks leaves
 * the phase table empty.
 */
const cliRoot = process.env.BENCH_CLI_ROOT ?? root;
/** Rounds; each runs every case once, so the cases share the machine's load. */
const ROUNDS = Number(process.env.BENCH_CLI_RUNS ?? 11);
const MAX_RATIO = 3;
const DEMO_MS = 250;

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

/** The phases of a scan, from the marks functions/cli/phases.ts sets (ms since the process began). */
const PHASES = ["start", "read", "parsed", "scanned", "written"] as const;

interface Run {
  wallMs: number;
  mainCpuMs: number;
  processCpuMs: number;
  marks: Partial<Record<(typeof PHASES)[number], number>>;
}

interface CaseResult {
  name: string;
  runs: Run[];
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** CPU time of the main thread, and of the whole process (GC helper threads included). */
  mainCpuMs: number;
  processCpuMs: number;
}

// Preloaded into each measured process: reports its CPU time and the CLI's phase marks on exit.
// On a shared machine wall time swings with the load; the main thread's CPU time is what the run
// costs on an idle one.
const REPORT = `data:text/javascript,${encodeURIComponent(`
  process.on("exit", () => {
    const t = process.threadCpuUsage();
    const r = process.resourceUsage();
    const marks = {};
    for (const m of performance.getEntriesByType("mark"))
      if (m.name.startsWith("switchyard:")) marks[m.name.slice(11)] = m.startTime;
    process.stderr.write("\\nREPORT " + JSON.stringify({
      mainCpuMs: (t.user + t.system) / 1000,
      processCpuMs: (r.userCPUTime + r.systemCPUTime) / 1000,
      marks,
    }) + "\\n");
  });
`)}`;

/** One run of `node ...args`: wall time from spawn to exit, output collected through a pipe. */
function runOnce(c: Case): Run {
  const start = performance.now();
  const child = spawnSync(process.execPath, ["--import", REPORT, ...c.args], {
    cwd: cliRoot,
    env: { ...process.env, ...c.env },
    maxBuffer: 64 * 2 ** 20,
    encoding: "utf8",
  });
  const wallMs = performance.now() - start;
  if (child.status !== 0) throw new Error(`${c.name} exited ${child.status}: ${child.stderr}`);
  const report = /\nREPORT (.*)\n/.exec(child.stderr);
  if (!report) throw new Error(`${c.name}: no report in ${child.stderr}`);
  return { wallMs, ...(JSON.parse(report[1]!) as Omit<Run, "wallMs">) };
}

/** Every case once per round, after one unmeasured round (it fills Node's compile cache). */
function measure(cases: Case[], rounds: number): CaseResult[] {
  const runs = cases.map(() => [] as Run[]);
  for (let round = 0; round <= rounds; round++) {
    cases.forEach((c, i) => {
      const run = runOnce(c);
      if (round > 0) runs[i]!.push(run);
    });
  }
  return cases.map((c, i) => {
    const rs = runs[i]!;
    const walls = rs.map((r) => r.wallMs);
    return {
      name: c.name,
      runs: rs,
      medianMs: median(walls),
      minMs: Math.min(...walls),
      maxMs: Math.max(...walls),
      mainCpuMs: median(rs.map((r) => r.mainCpuMs)),
      processCpuMs: median(rs.map((r) => r.processCpuMs)),
    };
  });
}

/** Median duration of each phase of a scan case, from consecutive marks. */
function phases(r: CaseResult) {
  const between = (from: (typeof PHASES)[number] | null, to: (typeof PHASES)[number]) =>
    median(r.runs.map((run) => (run.marks[to] ?? Number.NaN) - (from ? run.marks[from]! : 0)));
  return {
    startMs: between(null, "start"),
    readMs: between("start", "read"),
    parseMs: between("read", "parsed"),
    scanMs: between("parsed", "scanned"),
    outputMs: between("scanned", "written"),
    exitMs: median(r.runs.map((run) => run.wallMs - (run.marks.written ?? Number.NaN))),
  };
}

const ms = (x: number) => (Number.isNaN(x) ? "-" : x.toFixed(0));

const row = (r: CaseResult) =>
  `| ${r.name} | ${r.medianMs.toFixed(0)} | ${r.minMs.toFixed(0)} | ${r.maxMs.toFixed(0)} | ${r.mainCpuMs.toFixed(0)} | ${r.processCpuMs.toFixed(0)} |`;

export const cliBenchmark: Benchmark = {
  name: "cli",
  async run() {
    const dir = `${root}.tmp/bench-cli`;
    mkdirSync(dir, { recursive: true });
    const big = `${dir}/snapshot-100000.json`;
    const text = JSON.stringify(syntheticSnapshot(100_000));
    writeFileSync(big, text);
    const mb = (Buffer.byteLength(text) / 1e6).toFixed(0);
    const bin = "functions/cli/bin.js";
    const demoFile = `${root}infra/demo/snapshot.json`;
    const load = () => os.loadavg()[0]!.toFixed(1);
    const loadBefore = load();
    const cases: Case[] = [
      { name: "node -e 0 (Node starting and exiting)", args: ["-e", "0"] },
      {
        name: `read and JSON.parse the 100k snapshot (the floor)`,
        args: ["-e", `JSON.parse(require("node:fs").readFileSync(${JSON.stringify(big)}, "utf8"))`],
      },
      { name: `scan, 100k issues (${mb} MB)`, args: [bin, "scan", "--snapshot", big] },
      { name: "scan, demo (19 issues)", args: [bin, "scan", "--snapshot", demoFile] },
      {
        name: "scan, demo, compile cache off (a first run)",
        args: [bin, "scan", "--snapshot", demoFile],
        env: { NODE_DISABLE_COMPILE_CACHE: "1" },
      },
      {
        name: "scan, demo, via bin.ts (type stripping on every run)",
        args: ["functions/cli/bin.ts", "scan", "--snapshot", demoFile],
      },
    ];
    const results = measure(cases, ROUNDS);
    const [, floor, large, demo] = results as [CaseResult, CaseResult, CaseResult, CaseResult];
    const ratio = large.medianMs / floor.medianMs;
    const cpuRatio = large.processCpuMs / floor.processCpuMs;
    const p = phases(large);
    return {
      report: [
        `whole processes, node ${bin} in ${cliRoot}; median of ${ROUNDS} rounds (each runs every case once) after one unmeasured round; load average ${loadBefore} before, ${load()} after`,
        "| command | wall median ms | wall min ms | wall max ms | main-thread CPU ms | process CPU ms |",
        "|---|---:|---:|---:|---:|---:|",
        ...results.map(row),
        "",
        "the 100k scan's phases (median ms, from the CLI's marks):",
        "| start and imports | read | parse and validate | scan | output | exit |",
        "|---:|---:|---:|---:|---:|---:|",
        `| ${[p.startMs, p.readMs, p.parseMs, p.scanMs, p.outputMs, p.exitMs].map(ms).join(" | ")} |`,
        "",
        `100k scan / its floor: ${ratio.toFixed(2)}x wall (${large.medianMs.toFixed(0)} / ${floor.medianMs.toFixed(0)} ms), ${cpuRatio.toFixed(2)}x process CPU`,
      ],
      targets: [
        {
          name: `100k-issue scan under ${MAX_RATIO}x reading and parsing its snapshot alone (${ratio.toFixed(2)}x)`,
          ok: ratio < MAX_RATIO,
        },
        {
          name: `demo scan under ${DEMO_MS} ms as a whole process (${demo.medianMs.toFixed(0)} ms)`,
          ok: demo.medianMs < DEMO_MS,
        },
      ],
      figures: {
        results: results.map(({ runs: _, ...r }) => r),
        phases: p,
        ratio,
        cpuRatio,
      },
    };
  },
};
