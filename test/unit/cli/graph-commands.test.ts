import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../support/cli.ts";

const demo = "infra/demo/snapshot.json";
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "switchyard-cli-"));
});

async function file(name: string, text: string) {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe("switchyard scan --snapshot", () => {
  it("prints the scan of a valid snapshot as JSON and exits 0", async () => {
    const run = await runCli(["scan", "--snapshot", demo]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    const out = JSON.parse(run.stdout);
    expect(out.repo).toBe("acme/rocket");
    expect(out.ready).toEqual([4, 5, 9, 11, 15]);
    expect(out.kicks.map((k: { target: number }) => k.target)).toEqual([1, 9, 15]);
  });

  it("applies --now, --window-hours and --machine", async () => {
    const run = await runCli([
      "scan",
      "--snapshot",
      demo,
      "--now",
      "2026-11-29T13:00:00Z",
      "--window-hours",
      "0.5",
      "--machine",
      "alpha",
    ]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.window).toEqual({ from: "2026-11-29T12:30:00Z", to: "2026-11-29T13:00:00Z" });
    expect(out.kicks).toEqual([]);
    expect([...out.ready].sort((a: number, b: number) => a - b)).toEqual([4, 5, 9, 11, 12, 15]);
    expect(out.ready).not.toEqual([4, 5, 9, 11, 12, 15]);
  });

  it("malformed JSON exits 2 naming the file", async () => {
    const path = await file("broken.json", '{"repo": "a/b", "issues": [');
    const run = await runCli(["scan", "--snapshot", path]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`${path} is not valid JSON`);
  });

  it("a schema violation exits 2 naming the bad path", async () => {
    const path = await file(
      "bad.json",
      JSON.stringify({ repo: "a/b", issues: [{ number: 1, title: "x", state: "shut" }] }),
    );
    const run = await runCli(["scan", "--snapshot", path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("issues[0].state");
  });

  it("an unknown flag exits 2 naming the flag", async () => {
    const run = await runCli(["scan", "--snapshot", demo, "--widow-hours", "2"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--widow-hours");
  });

  it.each([
    [["scan"], "--snapshot or --repo is required"],
    [["scan", "--snapshot", "/nonexistent/x.json"], "cannot read /nonexistent/x.json"],
    [["scan", "--snapshot", demo, "--now", "tomorrow"], "--now must be an ISO-8601 timestamp"],
    [
      ["scan", "--snapshot", demo, "--window-hours=-3"],
      "--window-hours must be a non-negative number",
    ],
    [["scan", "--snapshot", demo, "extra"], "Unexpected argument"],
    [["frobnicate"], 'unknown command "frobnicate"'],
    [[], "usage: switchyard"],
  ])("bad usage %j exits 2 with %j", async (argv, message) => {
    const run = await runCli(argv);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it("reads a switchyard.yml given with --config and rejects an invalid one", async () => {
    const good = await file("good.yml", "labels:\n  hold: frozen\n");
    const run = await runCli(["scan", "--snapshot", demo, "--config", good]);
    expect(JSON.parse(run.stdout).ready).toContain(10);
    const bad = await file("bad.yml", "queue:\n  mode: sometimes\n");
    const failed = await runCli(["scan", "--snapshot", demo, "--config", bad]);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toContain("queue.mode");
  });
});

describe("switchyard produce --snapshot --dry-run", () => {
  it("prints the label plan", async () => {
    const run = await runCli(["produce", "--snapshot", demo, "--dry-run"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      add: [
        { number: 9, label: "agent:ready", reason: "kick: unblocked by acme/sdk#40" },
        { number: 15, label: "agent:ready", reason: "kick: unblocked by #14" },
      ],
      remove: [],
    });
  });

  it("mode all with an approval label", async () => {
    const all = JSON.parse((await runCli(["produce", "--snapshot", demo, "--mode", "all"])).stdout);
    expect(all.add.map((c: { number: number }) => c.number)).toEqual([4, 5, 9, 11, 15]);
    const approved = await runCli([
      "produce",
      "--snapshot",
      demo,
      "--mode",
      "all",
      "--approval-label",
      "x",
    ]);
    expect(JSON.parse(approved.stdout).add.map((c: { number: number }) => c.number)).toEqual([
      9, 15,
    ]);
  });

  it("rejects an unknown mode", async () => {
    const run = await runCli(["produce", "--snapshot", demo, "--mode", "some"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--mode must be "events" or "all"');
  });
});
