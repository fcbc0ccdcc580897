import { scan } from "../../../shared/graph/scan.ts";
import { parseFlags, requireFlag } from "../args.ts";
import type { CliCommand } from "../command.ts";
import { graphFlags, loadConfig, loadSnapshot, scanOptionsFromFlags } from "../graph-input.ts";
import { writeJson } from "../io.ts";

export const scanCommand: CliCommand = {
  name: "scan",
  usage:
    "scan --snapshot FILE [--now ISO] [--window-hours N] [--machine NAME] [--config switchyard.yml]",
  async run(argv, io) {
    const flags = parseFlags("scan", argv, graphFlags);
    const path = requireFlag("scan", "snapshot", flags.snapshot);
    const config = await loadConfig(io, "scan", flags.config);
    const snapshot = await loadSnapshot(io, "scan", path);
    writeJson(io, scan(snapshot, scanOptionsFromFlags(io, "scan", flags, config)));
  },
};
