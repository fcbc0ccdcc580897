// Shared set-up for the client tests: a simulator, an in-process fetch into it, and a client
// whose sleeps are recorded instead of slept.
import {
  createGitHubSimulator,
  type GitHubSimulator,
  type SimulatorOptions,
  simulatorFetch,
} from "../../../infra/github-sim/app.ts";
import { seedSnapshot } from "../../../infra/github-sim/seed.ts";
import { GitHubClient, type GitHubClientOptions } from "../../../shared/github/client.ts";
import type { SnapshotInput } from "../../../shared/graph/snapshot.ts";

export const REPO = "acme/app";
/** The client's token: the simulator's unrestricted user (`userTokens`), which reads everything. */
export const TOKEN = "test-token";
export const T0 = "2026-11-01T00:00:00Z";

export interface Harness {
  sim: GitHubSimulator;
  client: GitHubClient;
  sleeps: number[];
  newClient(opts?: Partial<GitHubClientOptions>): GitHubClient;
}

export function harness(
  simOpts: SimulatorOptions = {},
  clientOpts: Partial<GitHubClientOptions> = {},
): Harness {
  const sim = createGitHubSimulator({ userTokens: [TOKEN], ...simOpts });
  const sleeps: number[] = [];
  const newClient = (opts: Partial<GitHubClientOptions> = {}) =>
    new GitHubClient({
      auth: { kind: "token", token: TOKEN },
      baseUrl: "http://sim.test",
      fetch: simulatorFetch(sim),
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0.5,
      timeoutMs: 1_000,
      ...clientOpts,
      ...opts,
    });
  return { sim, client: newClient(), sleeps, newClient };
}

type IssueSeed = SnapshotInput["issues"][number];

export function issue(number: number, extra: Partial<IssueSeed> = {}): IssueSeed {
  return {
    number,
    title: `Issue ${number}`,
    state: "open",
    stateReason: null,
    createdAt: T0,
    updatedAt: T0,
    closedAt: null,
    labels: [],
    ...extra,
  };
}

export function seed(
  sim: GitHubSimulator,
  issues: IssueSeed[],
  extra: Partial<SnapshotInput> = {},
) {
  return seedSnapshot(sim.state, { repo: REPO, issues, ...extra });
}

/** Rate-limited / free request counts of the simulator for one endpoint key prefix. */
export function count(sim: GitHubSimulator, prefix: string): number {
  return Object.entries(sim.counter.snapshot().byEndpoint)
    .filter(([k]) => k.startsWith(prefix))
    .reduce((n, [, v]) => n + v.total, 0);
}
