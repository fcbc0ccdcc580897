// The CLI's door to GitHub: a client from GITHUB_TOKEN and --api-url, and the snapshot fetch
// that `fetch-snapshot` (and `scan --repo` / `produce --repo`) print or scan.
import { GitHubClient } from "../../shared/github/client.ts";
import { GitHubApiError, GitHubConfigError } from "../../shared/github/errors.ts";
import { fetchSnapshot } from "../../shared/github/fetch-snapshot.ts";
import type { Snapshot } from "../../shared/graph/snapshot.ts";
import { type CliIo, OperationError, UsageError } from "./io.ts";

const REPO = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}$/;

export function requireRepoFlag(command: string, value: string | undefined): string {
  if (value === undefined || value === "") throw new UsageError(`${command}: --repo is required`);
  if (!REPO.test(value))
    throw new UsageError(`${command}: --repo must be OWNER/NAME, got "${value}"`);
  return value;
}

export function apiUrlFlag(command: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new UsageError(`${command}: --api-url must be an http(s) URL, got "${value}"`);
  }
  return value;
}

/** A client authenticated with GITHUB_TOKEN; missing token is bad usage (exit 2). */
export function cliClient(io: CliIo, command: string, apiUrl: string | undefined): GitHubClient {
  const token = io.env.GITHUB_TOKEN;
  if (token === undefined || token.trim() === "") {
    throw new UsageError(
      `${command}: set GITHUB_TOKEN to a token that can read the repository's issues`,
    );
  }
  try {
    return new GitHubClient({
      auth: { kind: "token", token },
      baseUrl: apiUrl ?? io.env.GITHUB_API_URL ?? "https://api.github.com",
      fetch: io.fetch,
      now: () => io.now().getTime(),
    });
  } catch (error) {
    if (error instanceof GitHubConfigError) throw new UsageError(`${command}: ${error.message}`);
    throw error;
  }
}

/** Turns a GitHub failure into the CLI's exit-1 error, keeping its typed message. */
export function operationError(command: string, error: unknown): never {
  if (error instanceof GitHubApiError) throw new OperationError(`${command}: ${error.message}`);
  throw error;
}

/**
 * Fetches `repo`'s issue graph as a snapshot (spec 3.1) for a CLI command. For the lead's
 * `scan --repo`: `const snapshot = await fetchSnapshotForCli(io, repo, apiUrl)`. With
 * `comments`, open issues also carry their body, its author and their comments (`--comments`).
 */
export async function fetchSnapshotForCli(
  io: CliIo,
  repo: string,
  apiUrl: string | undefined,
  command = "fetch-snapshot",
  options: { comments?: boolean } = {},
): Promise<Snapshot> {
  const client = cliClient(io, command, apiUrl);
  try {
    const { snapshot, report } = await fetchSnapshot(client, repo, { now: () => io.now() });
    for (const { parent, child } of report.crossRepoChildren) {
      io.stderr(
        `${command}: note: #${parent} has a sub-issue in another repository (${child}); the snapshot cannot hold it\n`,
      );
    }
    if (options.comments !== true) return snapshot;
    // What the reply rules read (the body, its author, comments): only when asked for.
    const { withComments } = await import("../../shared/github/snapshot-comments.ts");
    return await withComments(client, snapshot);
  } catch (error) {
    return operationError(command, error);
  }
}
