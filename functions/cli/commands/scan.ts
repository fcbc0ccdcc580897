import { scan, scanWith, snapshotHasComments } from "../../../shared/graph/scan.ts";
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
    const options = scanOptionsFromFlags(io, "scan", flags, config);
    let result: ReturnType<typeof scan>;
    if (snapshotHasComments(snapshot)) {
      // The reply rules read comments with the sweep's classifier: loaded only for such a snapshot.
      const { scanReplies } = await import("../../../shared/queue/scan-replies.ts");
      result = scanWith(snapshot, options, (analysis) => scanReplies(snapshot, analysis, config));
    } else {
      result = scan(snapshot, options);
    }
    phase("scanned");
    writeJson(io, result);
    phase("written");
  },
};
