// The client and the simulator over real HTTP (node:http), as the demo and workerd tests use it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedSnapshot } from "../../../infra/github-sim/seed.ts";
import { type RunningSimulator, startSimulatorServer } from "../../../infra/github-sim/serve.ts";
import { GitHubClient } from "../../../shared/github/client.ts";
import { fetchSnapshot } from "../../../shared/github/fetch-snapshot.ts";
import { fetchChanges } from "../../../shared/github/incremental.ts";
import { addBlockedBy, createComment } from "../../../shared/github/writes.ts";
import { issue, REPO, T0 } from "./sim-harness.ts";

let server: RunningSimulator;

beforeAll(async () => {
  // "t" stands for the unrestricted user octocat (any other token is refused, as on GitHub).
  server = await startSimulatorServer({ userTokens: ["t"] });
  seedSnapshot(server.sim.state, {
    repo: REPO,
    issues: [issue(1), issue(2, { parent: 1 }), issue(3)],
  });
});
afterAll(() => server.close());

const client = () =>
  new GitHubClient({
    auth: { kind: "token", token: "t" },
    baseUrl: server.url,
    sleep: async () => {},
    timeoutMs: 2_000,
  });

describe("over HTTP", () => {
  it("fetches the graph, writes, and reconciles with a 304", async () => {
    const c = client();
    const { snapshot } = await fetchSnapshot(c, REPO);
    expect(snapshot.issues.map((i) => [i.number, i.parent ?? null])).toEqual([
      [1, null],
      [2, 1],
      [3, null],
    ]);
    await addBlockedBy(c, REPO, 3, 1);
    await createComment(c, REPO, 3, "over the wire");
    const first = await fetchChanges(c, REPO, { since: T0, etag: null, boundary: [] });
    const settle = await fetchChanges(c, REPO, first.watermark);
    const steady = await fetchChanges(c, REPO, settle.watermark);
    expect(steady.notModified).toBe(true);
    expect(server.sim.state.repo("acme", "app")!.issues.get(3)!.comments).toHaveLength(1);
  });

  it("retries a read after the server drops the connection", async () => {
    server.sim.faults.set({
      requests: [{ method: "GET", path: "/repos/acme/app/issues", network: true }],
    });
    const c = client();
    const result = await fetchChanges(c, REPO, { since: T0, etag: null, boundary: [] });
    expect(result.changed).toBe(true);
    expect(c.stats.retries).toBe(1);
  });

  it("serves the control API on the same port", async () => {
    const res = await fetch(`${server.url}/_sim/counters`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { total: number }).total).toBeGreaterThan(0);
  });
});
