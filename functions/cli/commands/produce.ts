import { plan } from "../../../shared/producer/plan.ts";
import { parseFlags, requireFlag } from "../args.ts";
import type { CliCommand } from "../command.ts";
import { graphFlags, loadConfig, loadSnapshot, scanOptionsFromFlags } from "../graph-input.ts";
import { UsageError, writeJson } from "../io.ts";

export const produceCommand: CliCommand = {
  name: "produce",
  usage:
    "produce --snapshot FILE [--mode events|all] [--approval-label L] [--dry-run] [--now ISO] [--window-hours N]",
  async run(argv, io) {
    const flags = parseFlags("produce", argv, {
      ...graphFlags,
      mode: { type: "string" },
      "approval-label": { type: "string" },
      "dry-run": { type: "boolean" },
    });
    const path = requireFlag("produce", "snapshot", flags.snapshot);
    const mode = flags.mode;
    if (mode !== undefined && mode !== "events" && mode !== "all") {
      throw new UsageError(`produce: --mode must be "events" or "all", got "${mode}"`);
    }
    const config = await loadConfig(io, "produce", flags.config);
    const snapshot = await loadSnapshot(io, "produce", path);
    // A snapshot file cannot be written to, so with --snapshot the plan is always a dry run.
    writeJson(
      io,
      plan(snapshot, {
        ...scanOptionsFromFlags(io, "produce", flags, config),
        ...(mode !== undefined ? { mode } : {}),
        ...(flags["approval-label"] !== undefined
          ? { approvalLabel: flags["approval-label"] }
          : {}),
      }),
    );
  },
};
