// `npm run bench`: every benchmark in one run, printed as Markdown for bench/README.md.
import { cpus } from "node:os";
import process from "node:process";
import { runScanBench } from "./scan.ts";

const cpu = cpus()[0]?.model ?? "unknown CPU";
process.stdout.write(
  `## Run of ${new Date().toISOString().slice(0, 10)} — Node ${process.version}, ${cpus().length} × ${cpu}\n\n`,
);
process.stdout.write(`${runScanBench()}\n`);
