// `npm run bench`: runs every benchmark in one process and prints its figures. Exit 1 when a
// target is missed. Add a benchmark by listing it in `benchmarks` (one file per benchmark).
import os from "node:os";
import process from "node:process";
import type { Benchmark } from "./benchmark.ts";
import { claimsBenchmark } from "./claims.ts";
import { cliBenchmark } from "./cli.ts";
import { githubEconomy } from "./github-economy.ts";
import { installBenchmark } from "./install.ts";
import { orgBenchmark } from "./org.ts";
import { queueOrderBenchmark } from "./queue-order.ts";
import { scanBenchmark } from "./scan.ts";
import { webhookAck } from "./webhook-ack.ts";
import { workerScale } from "./worker-scale.ts";

const benchmarks: Benchmark[] = [
  scanBenchmark,
  queueOrderBenchmark,
  cliBenchmark,
  githubEconomy,
  webhookAck,
  claimsBenchmark,
  workerScale,
  installBenchmark,
  orgBenchmark,
];

const only = process.argv.slice(2);
const cpu = os.cpus()[0]?.model ?? "unknown cpu";
process.stdout.write(
  `machine: ${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}\n\n`,
);
let failed = 0;
for (const bench of benchmarks) {
  if (only.length > 0 && !only.includes(bench.name)) continue;
  process.stdout.write(`== ${bench.name}\n`);
  const result = await bench.run();
  for (const line of result.report) process.stdout.write(`${line}\n`);
  for (const t of result.targets) {
    process.stdout.write(`  ${t.ok ? "PASS" : "FAIL"}  ${t.name}\n`);
    if (!t.ok) failed += 1;
  }
  if (process.env.BENCH_JSON) process.stdout.write(`${JSON.stringify(result.figures)}\n`);
  process.stdout.write("\n");
}
process.exitCode = failed === 0 ? 0 : 1;
