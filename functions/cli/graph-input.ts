// GitHub access (octokit) and YAML parsing are imported only by the runs that use them: a scan
// of a snapshot file with the default configuration needs neither, and loading them would cost
// more than the scan of a small snapshot.
import { DEFAULT_CONFIG } from "../../shared/config/defaults.ts";
import type { Config } from "../../shared/config/schema.ts";
import type { Snapshot } from "../../shared/graph/snapshot.ts";
import { fastCheckSnapshot } from "../../shared/graph/snapshot-fast-check.ts";
import { ValidationError } from "../../shared/validation.ts";
import { instantFlag, numberFlag, type OptionSpec, requireFlag } from "./args.ts";
import { type CliIo, UsageError } from "./io.ts";
import { phase } from "./phases.ts";
import { parseJsonText, readTextFile } from "./read-json.ts";

/** Flags shared by the commands that evaluate a graph (`scan`, `produce`). */
export const graphFlags = {
  snapshot: { type: "string" },
  repo: { type: "string" },
  "api-url": { type: "string" },
  config: { type: "string" },
  now: { type: "string" },
  "window-hours": { type: "string" },
  machine: { type: "string" },
} satisfies OptionSpec;

/** The graph to evaluate: a snapshot file, or a repository fetched with GITHUB_TOKEN. */
export async function loadGraph(
  io: CliIo,
  command: string,
  flags: { snapshot?: string; repo?: string; "api-url"?: string },
): Promise<Snapshot> {
  if (flags.snapshot !== undefined && flags.repo !== undefined) {
    throw new UsageError(`${command}: give either --snapshot or --repo, not both`);
  }
  if (flags.repo !== undefined) {
    const { apiUrlFlag, fetchSnapshotForCli, requireRepoFlag } = await import("./github.ts");
    const repo = requireRepoFlag(command, flags.repo);
    return fetchSnapshotForCli(io, repo, apiUrlFlag(command, flags["api-url"]), command);
  }
  if (flags["api-url"] !== undefined) throw new UsageError(`${command}: --api-url needs --repo`);
  return loadSnapshot(io, command, requireFlag(command, "snapshot or --repo", flags.snapshot));
}

export async function loadSnapshot(io: CliIo, command: string, path: string): Promise<Snapshot> {
  const text = await readTextFile(io, command, path);
  phase("read");
  const raw = parseJsonText(command, path, text);
  try {
    // Read once, so not copied (a 100k-issue file's issues would be built twice). zod, which
    // decides and words what the fast check cannot vouch for, loads only for such a snapshot.
    const snapshot =
      fastCheckSnapshot(raw) ?? (await import("../../shared/graph/snapshot.ts")).parseSnapshot(raw);
    phase("parsed");
    return snapshot;
  } catch (error) {
    if (error instanceof ValidationError)
      throw new UsageError(`${command}: ${path}: ${error.message}`);
    throw error;
  }
}

export async function loadConfig(
  io: CliIo,
  command: string,
  path: string | undefined,
): Promise<Config> {
  if (path === undefined) return DEFAULT_CONFIG;
  const { parseConfigYaml } = await import("../../shared/config/parse.ts");
  const result = parseConfigYaml(await readTextFile(io, command, path));
  if (!result.ok) throw new UsageError(`${command}: ${path}: ${result.error}`);
  return result.config;
}

/** Scan options from flags; `now` falls back to the snapshot's, then to the clock. */
export function scanOptionsFromFlags(
  io: CliIo,
  command: string,
  flags: { now?: string; "window-hours"?: string; machine?: string },
  config: Config,
) {
  const windowHours = numberFlag(command, "window-hours", flags["window-hours"]);
  return {
    config,
    clock: io.now().toISOString(),
    ...(flags.now !== undefined ? { now: instantFlag(command, "now", flags.now) } : {}),
    ...(windowHours !== undefined ? { windowHours } : {}),
    ...(flags.machine !== undefined ? { machine: flags.machine } : {}),
  };
}
