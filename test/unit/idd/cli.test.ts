import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../../functions/cli/io.ts";
import { main } from "../../../functions/cli/main.ts";
import { renderClaimedBy } from "../../../shared/idd/comment-markers.ts";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const BIN = `${ROOT}functions/cli/bin.ts`;
const FIXTURES = `${ROOT}test/fixtures/idd/`;

function fakeIo(files: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    readFile: async (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`ENOENT: ${path}`);
      return text;
    },
    env: {},
    now: () => new Date("2026-11-01T06:00:00.000Z"),
    fetch: () => Promise.reject(new Error("no network in tests")),
  };
  return { io, out: () => out.join(""), err: () => err.join("") };
}

async function cli(argv: string[], files: Record<string, string> = {}) {
  const io = fakeIo(files);
  const code = await main(argv, io.io);
  return { code, stdout: io.out(), stderr: io.err() };
}

const claimComments = JSON.stringify([
  {
    createdAt: "2026-11-01T00:00:00Z",
    author: { login: "idd-bot", type: "Bot" },
    body: renderClaimedBy({
      agentId: "agent-a",
      claimId: "c1",
      supersedes: null,
      timestamp: "2026-11-01T00:00:00Z",
      branch: "issue/7-fix",
    }),
  },
]);

describe("switchyard branch-name", () => {
  it("prints the slug, the configured branch and the IDD branch", async () => {
    const r = await cli(["branch-name", "--number", "12", "--title", "Add the OAuth login flow"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      number: 12,
      title: "Add the OAuth login flow",
      slug: "add-oauth-login-flow",
      branch: "issue/12-add-oauth-login-flow",
      iddBranch: "issue/12-add-oauth-login-flow",
    });
  });

  it("accepts an empty title and a phase pattern", async () => {
    const r = await cli([
      "branch-name",
      "--number",
      "3",
      "--title",
      "",
      "--pattern",
      "claude/issue-{number}-p{phase}",
      "--phase",
      "2",
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ slug: "task", branch: "claude/issue-3-p2" });
  });

  it.each([
    [["--title", "x"], "branch-name: --number is required"],
    [["--number", "12"], "branch-name: --title is required"],
    [
      ["--number", "1e3", "--title", "x"],
      'branch-name: --number must be a positive integer, got "1e3"',
    ],
    [
      ["--number", "0", "--title", "x"],
      'branch-name: --number must be a positive integer, got "0"',
    ],
    [
      ["--number", "5", "--title", "x", "--pattern", "work/{slug}"],
      "the pattern must contain {number}",
    ],
    [["--number", "5", "--title", "x", "--bogus"], "branch-name: Unknown option '--bogus'"],
  ])("exits 2 on %j", async (args, message) => {
    const r = await cli(["branch-name", ...args]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
  });
});

describe("switchyard claim-state", () => {
  const files = { "comments.json": claimComments, "bad.json": "[{", "wrong.json": '[{"body":1}]' };

  it("resolves the claim at --now with the default 24 h stale age", async () => {
    const r = await cli(
      ["claim-state", "--comments", "comments.json", "--now", "2026-11-01T23:59:59Z"],
      files,
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ state: "active", freshClaim: "already-claimed", staleHours: 24 });
    expect(out.active).toMatchObject({ agentId: "agent-a", claimId: "c1" });
  });

  it("uses the clock when --now is absent, and honours --stale-hours and --claim-id", async () => {
    const r = await cli(
      ["claim-state", "--comments", "comments.json", "--stale-hours", "6", "--claim-id", "c1"],
      files,
    );
    expect(JSON.parse(r.stdout)).toMatchObject({
      now: "2026-11-01T06:00:00.000Z",
      state: "stale",
      freshClaim: "stale-reclaimable",
      ownership: "owned",
    });
  });

  it("trusts nobody with an empty --trusted list, and only the listed authors otherwise", async () => {
    const nobody = await cli(
      ["claim-state", "--comments", "comments.json", "--trusted", ""],
      files,
    );
    expect(JSON.parse(nobody.stdout).state).toBe("unclaimed");
    const listed = await cli(
      ["claim-state", "--comments", "comments.json", "--trusted", "x, IDD-BOT"],
      files,
    );
    expect(JSON.parse(listed.stdout).state).toBe("active");
  });

  it("prints contested for an owner whose claim a later trusted claim competes with", async () => {
    const race = JSON.stringify([
      ...JSON.parse(claimComments),
      {
        createdAt: "2026-11-01T00:05:00Z",
        author: { login: "idd-bot", type: "Bot" },
        body: renderClaimedBy({
          agentId: "agent-b",
          claimId: "c2",
          supersedes: null,
          timestamp: "2026-11-01T00:05:00Z",
          branch: "issue/7-fix",
        }),
      },
    ]);
    const r = await cli(
      [
        "claim-state",
        "--comments",
        "race.json",
        "--now",
        "2026-11-01T01:00:00Z",
        "--claim-id",
        "c1",
      ],
      { "race.json": race },
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      state: "active",
      ownership: "contested",
      active: { claimId: "c1", competingClaim: { agentId: "agent-b", claimId: "c2", index: 1 } },
    });
  });

  it("applies a forced handoff written with IDD's consent prose", async () => {
    const handoff = JSON.stringify([
      ...JSON.parse(claimComments),
      {
        createdAt: "2026-11-01T02:00:00Z",
        author: { login: "maint", type: "User" },
        body: `<!-- forced-handoff: ${JSON.stringify({
          "old-agent-id": "agent-a",
          "old-claim-id": "c1",
          "new-agent-id": "agent-b",
          "new-claim-id": "c2",
          branch: "issue/7-fix",
          "forced-by": "maint",
          reason: "agent-a crashed",
          timestamp: "2026-11-01T02:00:00Z",
          "context-scope": "issue-only",
        })} -->\n\nForced handoff approved by maint. I verified that the current\nowning session or agent is unavailable.`,
      },
    ]);
    const r = await cli(
      [
        "claim-state",
        "--comments",
        "handoff.json",
        "--now",
        "2026-11-01T03:00:00Z",
        "--claim-id",
        "c2",
        "--handoff-mode",
        "human-gated",
        "--handoff-authorized",
        "maint",
      ],
      { "handoff.json": handoff },
    );
    expect(JSON.parse(r.stdout)).toMatchObject({
      ownership: "owned",
      active: { agentId: "agent-b", claimId: "c2", via: "forced-handoff" },
      diagnostics: [],
    });
  });

  it.each([
    [["--now", "2026-11-01T00:00:00Z"], "claim-state: --comments is required"],
    [["--comments", "missing.json"], "claim-state: cannot read missing.json"],
    [["--comments", "bad.json"], "claim-state: bad.json is not valid JSON"],
    [
      ["--comments", "wrong.json"],
      "claim-state: wrong.json: invalid comment list at [0].createdAt",
    ],
    [["--comments", "comments.json", "--now", "soon"], "--now must be an ISO-8601 timestamp"],
    [["--comments", "comments.json", "--stale-hours", "0"], "--stale-hours must be greater than 0"],
    [
      ["--comments", "comments.json", "--stale-hours=-1"],
      "--stale-hours must be a non-negative number",
    ],
    [
      ["--comments", "comments.json", "--handoff-mode", "always"],
      "--handoff-mode must be disabled or human-gated",
    ],
    [["--comments", "comments.json", "--open-pr", "#4"], "--open-pr must be a pull request number"],
  ])("exits 2 on %j", async (args, message) => {
    const r = await cli(["claim-state", ...args], files);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
  });
});

const issueJson = JSON.stringify({
  body: "Please add dark mode.",
  comments: [
    {
      createdAt: "2026-11-01T00:00:00Z",
      author: { login: "dev" },
      body: '> 🤖 AI Agent\n\nqueued for the next round <!-- sweep-trace: {"ver":1} -->',
    },
  ],
});

describe("switchyard classify", () => {
  it("prints per-comment verdicts and the sweep-candidate answer", async () => {
    const r = await cli(["classify", "--comments", "issue.json"], { "issue.json": issueJson });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      candidate: true,
      reason: "deferred-response",
      comments: [{ index: 0, role: "agent", verdict: "deferral", deferralSignals: ["queued"] }],
    });
  });

  it("accepts a bare comment list", async () => {
    const r = await cli(["classify", "--comments", "list.json"], { "list.json": claimComments });
    expect(JSON.parse(r.stdout)).toMatchObject({ candidate: false, reason: "no-human-input" });
  });

  it("exits 2 naming the bad field", async () => {
    const r = await cli(["classify", "--comments", "x.json"], { "x.json": '{"labels":"bug"}' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("classify: x.json: invalid issue at labels");
  });
});

describe("switchyard help", () => {
  it("lists the IDD commands", async () => {
    const r = await cli(["help"]);
    expect(r.stdout).toContain("branch-name --number N --title TITLE");
    expect(r.stdout).toContain("claim-state --comments FILE");
    expect(r.stdout).toContain("classify --comments FILE");
  });
});

describe("the real executable", () => {
  const bin = (name: string) => `${ROOT}node_modules/.bin/${name}`;
  const spawn = (cmd: string, args: string[]) => run(cmd, args, { cwd: ROOT, timeout: 60_000 });

  it("runs branch-name under Node", async () => {
    const { stdout } = await spawn(bin("node"), [
      BIN,
      "branch-name",
      "--number",
      "7",
      "--title",
      "Fix it",
    ]);
    expect(JSON.parse(stdout).branch).toBe("issue/7-fix-it");
  });

  it("runs claim-state on a golden fixture under Bun", async () => {
    const { stdout } = await spawn(bin("bun"), [
      BIN,
      "claim-state",
      "--comments",
      `${FIXTURES}claims/same-second-race.json`,
      "--now",
      "2026-11-01T01:00:00Z",
    ]);
    expect(JSON.parse(stdout).active).toMatchObject({ claimId: "c-aaa" });
  });

  it("runs classify under Deno", async () => {
    const dir = await mkdtemp(join(tmpdir(), "switchyard-classify-"));
    try {
      const file = join(dir, "issue.json");
      await writeFile(file, issueJson);
      const { stdout } = await spawn(bin("deno"), [
        "run",
        "-A",
        BIN,
        "classify",
        "--comments",
        file,
      ]);
      expect(JSON.parse(stdout)).toMatchObject({ candidate: true, reason: "deferred-response" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("exits 2 with the message on stderr under Deno", async () => {
    const failure = await spawn(bin("deno"), [
      "run",
      "-A",
      BIN,
      "branch-name",
      "--number",
      "x",
      "--title",
      "t",
    ]).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toContain("--number must be a positive integer");
  });
}, 120_000);
