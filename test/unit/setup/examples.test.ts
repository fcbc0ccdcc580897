import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const examples = new URL("../../../infra/examples/", import.meta.url);

interface Step {
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
}

describe("infra/examples", () => {
  it("the Actions workflow parses and runs one fleet worker on a schedule with the OIDC token", async () => {
    const text = await readFile(new URL("github-actions-worker.yml", examples), "utf8");
    const workflow = parse(text) as {
      on: { schedule: Array<{ cron: string }> };
      permissions: Record<string, string>;
      jobs: Record<string, { steps: Step[] }>;
    };
    expect(workflow.on.schedule[0]?.cron).toMatch(/^\S+ \S+ \S+ \S+ \S+$/);
    expect(workflow.permissions["id-token"]).toBe("write");
    const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    const work = steps.find((s) => s.run?.includes("functions/cli/bin.ts work"));
    expect(work?.run).toMatch(/--server "\$SWITCHYARD_URL"/);
    expect(work?.run).toMatch(/--repo "\$GITHUB_REPOSITORY"/);
    expect(work?.run).toMatch(/--once/);
    // The OIDC token is the credential: nothing that would replace it, no stored secret.
    expect(Object.keys(work?.env ?? {})).not.toContain("GITHUB_TOKEN");
    expect(Object.keys(work?.env ?? {})).not.toContain("SWITCHYARD_TOKEN");
    expect(text).not.toMatch(/secrets\./);
  });

  it("the fleet loop is valid bash and refuses to run without its settings", () => {
    const script = new URL("fleet-loop.sh", examples).pathname;
    execFileSync("bash", ["-n", script]);
    let status = 0;
    let stderr = "";
    try {
      execFileSync("bash", [script, "acme/rocket", "agent-1", "--", "true"], {
        env: { PATH: process.env.PATH ?? "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      status = (error as { status: number }).status;
      stderr = String((error as { stderr: Buffer }).stderr);
    }
    expect(status).not.toBe(0);
    expect(stderr).toContain("SWITCHYARD_URL");
  });
});
