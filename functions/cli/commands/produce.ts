import { type LabelChange, type LabelPlan, plan } from "../../../shared/producer/plan.ts";
import { parseFlags } from "../args.ts";
import type { CliCommand } from "../command.ts";
import { graphFlags, loadConfig, loadGraph, scanOptionsFromFlags } from "../graph-input.ts";
import { type CliIo, OperationError, UsageError, writeJson } from "../io.ts";

/** Applies a plan to GitHub, one write at a time, reporting each; fails (exit 1) on the first error. */
async function applyToGitHub(
  io: CliIo,
  repo: string,
  apiUrl: string | undefined,
  labelPlan: LabelPlan,
) {
  // Only a run that writes to GitHub loads the client (octokit); a dry run never does.
  const [{ GitHubApiError }, { addLabels, removeLabel }, { cliClient }] = await Promise.all([
    import("../../../shared/github/errors.ts"),
    import("../../../shared/github/writes.ts"),
    import("../github.ts"),
  ]);
  const client = cliClient(io, "produce", apiUrl);
  const applied: Array<LabelChange & { action: "add" | "remove" }> = [];
  try {
    for (const change of labelPlan.add) {
      await addLabels(client, repo, change.number, [change.label]);
      applied.push({ ...change, action: "add" });
    }
    for (const change of labelPlan.remove) {
      await removeLabel(client, repo, change.number, change.label);
      applied.push({ ...change, action: "remove" });
    }
  } catch (error) {
    writeJson(io, { plan: labelPlan, applied });
    if (error instanceof GitHubApiError) {
      throw new OperationError(
        `produce: ${error.message} (${applied.length} of the plan's writes were applied)`,
      );
    }
    throw error;
  }
  writeJson(io, { plan: labelPlan, applied });
}

export const produceCommand: CliCommand = {
  async run(argv, io) {
    const flags = parseFlags("produce", argv, {
      ...graphFlags,
      mode: { type: "string" },
      "approval-label": { type: "string" },
      "dry-run": { type: "boolean" },
    });
    const mode = flags.mode;
    if (mode !== undefined && mode !== "events" && mode !== "all") {
      throw new UsageError(`produce: --mode must be "events" or "all", got "${mode}"`);
    }
    const config = await loadConfig(io, "produce", flags.config);
    const snapshot = await loadGraph(io, "produce", flags);
    const labelPlan = plan(snapshot, {
      ...scanOptionsFromFlags(io, "produce", flags, config),
      ...(mode !== undefined ? { mode } : {}),
      ...(flags["approval-label"] !== undefined ? { approvalLabel: flags["approval-label"] } : {}),
    });
    // A snapshot file cannot be written to, so with --snapshot the plan is always a dry run.
    if (flags.repo === undefined || flags["dry-run"]) {
      writeJson(io, labelPlan);
      return;
    }
    await applyToGitHub(io, flags.repo, flags["api-url"], labelPlan);
  },
};
