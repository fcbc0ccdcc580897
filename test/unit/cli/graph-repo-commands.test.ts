import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../../functions/cli/io.ts";
import { main } from "../../../functions/cli/main.ts";
import { createGitHubSimulator, simulatorFetch } from "../../../infra/github-sim/app.ts";
import { seedSnapshot } from "../../../infra/github-sim/seed.ts";

async function demoSimulator() {
  // GITHUB_TOKEN "t" is the simulator's unrestricted user octocat.
  const sim = createGitHubSimulator({ userTokens: ["t"] });
  const demo = JSON.parse(await readFile("infra/demo/snapshot.json", "utf8"));
  seedSnapshot(sim.state, { repo: "acme/sdk", issues: [] });
  seedSnapshot(sim.state, demo);
  return sim;
}

async function run(
  argv: string[],
  sim: ReturnType<typeof createGitHubSimulator>,
  env = { GITHUB_TOKEN: "t" },
) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    readFile: (p) => readFile(p, "utf8"),
    env,
    now: () => new Date("2026-11-29T12:00:00Z"),
    fetch: simulatorFetch(sim),
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

describe("switchyard scan/produce --repo (against the GitHub simulator)", () => {
  it("scan --repo fetches the graph and scans it like the same snapshot file", async () => {
    const sim = await demoSimulator();
    const live = await run(["scan", "--repo", "acme/rocket", "--api-url", "http://sim.test"], sim);
    expect(live.code).toBe(0);
    const file = await run(["scan", "--snapshot", "infra/demo/snapshot.json"], sim);
    const a = JSON.parse(live.stdout);
    const b = JSON.parse(file.stdout);
    expect(a.ready).toEqual(b.ready);
    expect(a.blocked.map((x: { number: number }) => x.number)).toEqual(
      b.blocked.map((x: { number: number }) => x.number),
    );
    expect(a.kicks.map((k: { target: number }) => k.target)).toContain(15);
  });

  it("produce --repo --dry-run prints the plan and writes nothing", async () => {
    const sim = await demoSimulator();
    const run1 = await run(
      ["produce", "--repo", "acme/rocket", "--api-url", "http://sim.test", "--dry-run"],
      sim,
    );
    expect(run1.code).toBe(0);
    const planned = JSON.parse(run1.stdout);
    expect(planned.add.map((c: { number: number }) => c.number)).toContain(15);
    const after = await run(
      ["fetch-snapshot", "--repo", "acme/rocket", "--api-url", "http://sim.test"],
      sim,
    );
    const labels = JSON.parse(after.stdout).issues.find(
      (i: { number: number }) => i.number === 15,
    ).labels;
    expect(labels).not.toContain("agent:ready");
  });

  it("produce --repo applies the plan; planning again is empty", async () => {
    const sim = await demoSimulator();
    const applied = await run(
      ["produce", "--repo", "acme/rocket", "--api-url", "http://sim.test"],
      sim,
    );
    expect(applied.code).toBe(0);
    const out = JSON.parse(applied.stdout);
    expect(out.applied.length).toBe(out.plan.add.length + out.plan.remove.length);
    expect(out.applied.length).toBeGreaterThan(0);
    const again = await run(
      ["produce", "--repo", "acme/rocket", "--api-url", "http://sim.test", "--dry-run"],
      sim,
    );
    expect(JSON.parse(again.stdout)).toEqual({ add: [], remove: [] });
  });

  it("a GitHub failure while applying exits 1 naming the request", async () => {
    const sim = await demoSimulator();
    sim.faults.set({
      requests: [
        { method: "POST", path: "/repos/acme/rocket/issues/*/labels", status: 422, times: 10 },
      ],
    });
    const failed = await run(
      ["produce", "--repo", "acme/rocket", "--api-url", "http://sim.test"],
      sim,
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/produce: .*POST \/repos\/acme\/rocket\/issues\/\d+\/labels/);
  });

  it.each([
    [["scan", "--repo", "acme/rocket", "--snapshot", "x.json"], "either --snapshot or --repo"],
    [
      ["scan", "--snapshot", "infra/demo/snapshot.json", "--api-url", "http://x"],
      "--api-url needs --repo",
    ],
    [["scan", "--repo", "not-a-repo"], "--repo must be OWNER/NAME"],
  ])("bad usage %j exits 2", async (argv, message) => {
    const sim = await demoSimulator();
    const result = await run(argv, sim);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it("without GITHUB_TOKEN scan --repo exits 2", async () => {
    const sim = await demoSimulator();
    const result = await run(
      ["scan", "--repo", "acme/rocket"],
      sim,
      {} as { GITHUB_TOKEN: string },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("GITHUB_TOKEN");
  });
});
