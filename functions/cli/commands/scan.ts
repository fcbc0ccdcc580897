import { scan } from "../../../shared/graph/scan.ts";
import { parseFlags } from "../args.ts";
import type { CliCommand } from "../command.ts";
import { graphFlags, loadConfig, loadGraph, scanOptionsFromFlags } from "../graph-input.ts";
import { writeJson } from "../io.ts";
import { phase } from "../phases.ts";

export const scanCommand: CliCommand = {
  async run(argv, io) {
    phase("start");
    const flags = parseFlags("scan", argv, graphFlags);
    const config = await loadConfig(io, "scan", flags.config);
    const snapshot = await loadGraph(io, "scan", flags);
    const result = scan(snapshot, scanOptionsFromFlags(io, "scan", flags, config));
    phase("scanned");
    writeJson(io, result);
    phase("written");
  },
};
