import { describe, expect, it } from "vitest";
import { type Runtime, spawnCli } from "../../support/runtimes.ts";

const runtimes: Runtime[] = ["node", "bun", "deno"];

describe.each(runtimes)("the switchyard executable under %s", (runtime) => {
  it("scans the demo snapshot with the same bytes as every other runtime", async () => {
    const run = await spawnCli(runtime, [
      "scan",
      "--snapshot",
      "infra/demo/snapshot.json",
      "--machine",
      "m1",
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const reference = await spawnCli("node", [
      "scan",
      "--snapshot",
      "infra/demo/snapshot.json",
      "--machine",
      "m1",
    ]);
    expect(run.stdout).toBe(reference.stdout);
    expect(JSON.parse(run.stdout).repo).toBe("acme/rocket");
  });

  it("exits 2 with a message on an unknown flag", async () => {
    const run = await spawnCli(runtime, [
      "produce",
      "--snapshot",
      "infra/demo/snapshot.json",
      "--bogus",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--bogus");
    expect(run.stdout).toBe("");
  });
});
