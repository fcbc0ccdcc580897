// `switchyard work` for real: the CLI as a process (functions/cli/bin.ts), real child commands,
// against the Worker under `wrangler dev` and the GitHub simulator (infra/local-stack.ts). Each
// scenario has a repository of its own, a fleet key minted through the API by a simulator user
// with admin, and checks the outcome through the Worker's API and the simulator's state.
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedFiles } from "../../infra/github-sim/contents.ts";
import { seedSnapshot } from "../../infra/github-sim/seed.ts";
import { type LocalStack, root, startLocalStack, waitFor } from "../../infra/local-stack.ts";

const OWNER = "acme";
const ADMIN_TOKEN = `ghp_e2e${crypto.randomUUID().replace(/-/g, "")}`;
/** Each scenario's repository and how many `agent:ready` issues it starts with. */
const REPOS = { loop: 2, failing: 1, lost: 1, interrupt: 1, paused: 1 } as const;
type RepoName = keyof typeof REPOS;

let stack: LocalStack;
const keys = new Map<RepoName, string>();

async function api<T = Record<string, unknown>>(
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${stack.workerUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text) };
}

const repoPath = (name: RepoName) => `/v1/repos/${OWNER}/${name}`;
const liveClaims = async (name: RepoName) =>
  (
    await api<{
      claims: Array<{
        claimId: string;
        number: number;
        agentId: string;
        fence: number;
        branch: string;
      }>;
    }>("GET", `${repoPath(name)}/claims`, keys.get(name)!)
  ).body.claims;
const queue = async (name: RepoName) =>
  (
    await api<{ items: Array<{ number: number; attempts: number }>; total: number }>(
      "GET",
      `${repoPath(name)}/queue`,
      keys.get(name)!,
    )
  ).body;

/** One of `switchyard work`'s JSON lines on stderr. */
type WorkEvent = { event: string; message?: string; note?: string } & Record<string, unknown>;
const labelsOf = (name: RepoName, n: number) =>
  stack.sim.sim.state.requireIssue(stack.sim.sim.state.requireRepo(OWNER, name), n).labels;

interface WorkRun {
  process: ChildProcess;
  stdout(): string;
  events(): WorkEvent[];
  stderr(): string;
  exited: Promise<number | null>;
  /** Resolves with the first stdout line matching `pattern`. */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/** `switchyard work` as its own process, the way a fleet machine runs it. */
function work(name: RepoName, flags: string[], command: string[]): WorkRun {
  const child = spawn(
    process.execPath,
    [
      "functions/cli/bin.ts",
      "work",
      "--server",
      stack.workerUrl,
      "--repo",
      `${OWNER}/${name}`,
      "--agent-id",
      `e2e-${name}`,
      ...flags,
      "--",
      ...command,
    ],
    {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1", SWITCHYARD_TOKEN: keys.get(name)!, GITHUB_TOKEN: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => {
    stdout += d;
  });
  child.stderr!.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  return {
    process: child,
    stdout: () => stdout,
    stderr: () => stderr,
    events: () =>
      stderr
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as WorkEvent),
    exited,
    line: (pattern, timeoutMs = 30_000) =>
      waitFor(
        `a line matching ${pattern} on stdout`,
        async () => stdout.split("\n").find((l) => pattern.test(l)),
        timeoutMs,
      ),
  };
}

/** A child that prints its claim, then runs until stopped (and says so on SIGTERM). */
const LONG_RUNNING = [
  process.execPath,
  "-e",
  `const e = process.env;
   process.on("SIGTERM", () => { console.log("child got SIGTERM"); process.exit(143); });
   console.log(JSON.stringify({ claim: { issue: Number(e.SWITCHYARD_ISSUE), fence: Number(e.SWITCHYARD_FENCE), claimId: e.SWITCHYARD_CLAIM_ID, branch: e.SWITCHYARD_BRANCH } }));
   setInterval(() => {}, 1000);`,
];

/** A child that prints what the claim put in its environment, then exits with `code`. */
const exitWith = (code: number) => [
  process.execPath,
  "-e",
  `const e = process.env;
   console.log(JSON.stringify({ env: { issue: e.SWITCHYARD_ISSUE, branch: e.SWITCHYARD_BRANCH, fence: e.SWITCHYARD_FENCE, claimId: e.SWITCHYARD_CLAIM_ID, server: e.SWITCHYARD_SERVER, repo: e.SWITCHYARD_REPO } }));
   process.exit(${code});`,
];

describe("switchyard work against the local Worker", () => {
  beforeAll(async () => {
    stack = await startLocalStack("work-e2e");
    const { sim } = stack.sim;
    sim.webhooks.pushUrl = `${stack.workerUrl}/webhooks/github`;
    const t0 = new Date(Date.now() - 3_600_000).toISOString();
    for (const [name, count] of Object.entries(REPOS)) {
      seedSnapshot(sim.state, {
        repo: `${OWNER}/${name}`,
        issues: Array.from({ length: count }, (_, i) => ({
          number: i + 1,
          title: `Task ${i + 1} of ${name}`,
          state: "open" as const,
          stateReason: null,
          createdAt: t0,
          updatedAt: t0,
          closedAt: null,
          labels: ["agent:ready"],
        })),
      });
    }
    // The breaker's repository: its default branch's CI pauses ordinary work when red.
    await seedFiles(sim.state, sim.state.requireRepo(OWNER, "paused"), {
      ".github/switchyard.yml": "breaker: {}\n",
    });
    const registered = await fetch(`${stack.sim.url}/_sim/users`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        login: "fleet-admin",
        token: ADMIN_TOKEN,
        repos: Object.fromEntries(Object.keys(REPOS).map((r) => [`${OWNER}/${r}`, "admin"])),
      }),
    });
    expect(registered.status).toBe(201);
    // Installing the App sends the installation webhook; the Worker reads each repository.
    sim.state.install(OWNER, Object.keys(REPOS), "octocat");
    for (const [name, count] of Object.entries(REPOS) as [RepoName, number][]) {
      const minted = await waitFor(`a fleet key for ${name}`, async () => {
        const r = await api<{ key: string }>("POST", `${repoPath(name)}/keys`, ADMIN_TOKEN, {
          name: "e2e",
        });
        return r.status === 201 ? r.body.key : undefined;
      });
      keys.set(name, minted);
      await waitFor(`${name}'s queue`, async () =>
        (await queue(name)).total === count ? true : undefined,
      );
    }
  }, 240_000);

  afterAll(async () => {
    await stack?.close();
  });

  it("loops until the queue is empty; exit 0 releases done (agent:ready comes off)", async () => {
    const run = work("loop", [], exitWith(0));
    expect(await run.exited).toBe(0);
    // The command owns stdout: only its two lines are there, with the claim in its environment.
    const printed = run
      .stdout()
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { env: Record<string, string> }).env);
    expect(printed.map((e) => e.issue)).toEqual(["1", "2"]);
    for (const env of printed) {
      expect(env).toMatchObject({ server: stack.workerUrl, repo: `${OWNER}/loop` });
      expect(env.branch).toMatch(new RegExp(`^issue/${env.issue}-`));
      expect(Number(env.fence)).toBeGreaterThan(0);
      expect(env.claimId).not.toBe("");
    }
    expect(Number(printed[1]!.fence)).toBeGreaterThan(Number(printed[0]!.fence));
    const events = run.events();
    expect(events.filter((e) => e.event === "released")).toEqual([
      expect.objectContaining({ issue: 1, outcome: "done", note: "exit code 0" }),
      expect.objectContaining({ issue: 2, outcome: "done", note: "exit code 0" }),
    ]);
    expect(events.at(-1)).toMatchObject({ event: "stopped", reason: "queue-empty", done: 2 });
    expect(await liveClaims("loop")).toEqual([]);
    expect((await queue("loop")).total).toBe(0);
    await waitFor("agent:ready to come off both issues", async () =>
      !labelsOf("loop", 1).includes("agent:ready") && !labelsOf("loop", 2).includes("agent:ready")
        ? true
        : undefined,
    );
  }, 60_000);

  it("exit 1 releases failed, and the issue returns to the queue with one attempt", async () => {
    const run = work("failing", ["--once"], exitWith(1));
    expect(await run.exited).toBe(0);
    expect(run.events().find((e) => e.event === "released")).toMatchObject({
      issue: 1,
      outcome: "failed",
      note: "exit code 1",
    });
    expect(run.events().at(-1)).toMatchObject({ event: "stopped", reason: "once", failed: 1 });
    expect(await liveClaims("failing")).toEqual([]);
    const q = await queue("failing");
    expect(q.items).toEqual([expect.objectContaining({ number: 1, attempts: 1 })]);
  }, 60_000);

  it("stops the command when the claim is lost, and releases nothing", async () => {
    const run = work("lost", ["--once", "--heartbeat-seconds", "0.5"], LONG_RUNNING);
    const { claim } = JSON.parse(await run.line(/"claim"/));
    expect(await liveClaims("lost")).toEqual([
      expect.objectContaining({
        number: claim.issue,
        claimId: claim.claimId,
        fence: claim.fence,
        branch: claim.branch,
        agentId: "e2e-lost",
      }),
    ]);
    // Someone else releases the claim with its fence: from now on the fence is stale.
    const released = await api(
      "POST",
      `${repoPath("lost")}/issues/${claim.issue}/claim/release`,
      keys.get("lost")!,
      { claimId: claim.claimId, fence: claim.fence, outcome: "abandoned", note: "taken away" },
    );
    expect(released.status).toBe(200);
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toContain("child got SIGTERM");
    const events = run.events();
    const lost = events.find((e) => e.event === "lost");
    expect(lost).toMatchObject({ issue: claim.issue, fence: claim.fence });
    expect(lost!.message).toContain("409 stale-fence");
    expect(events.map((e) => e.event)).toEqual(
      expect.arrayContaining(["claimed", "started", "lost", "stopping", "exited", "stopped"]),
    );
    expect(events.some((e) => e.event === "released" || e.event === "release-failed")).toBe(false);
    expect(events.at(-1)).toMatchObject({ event: "stopped", lost: 1, done: 0, failed: 0 });
    expect(await liveClaims("lost")).toEqual([]);
  }, 60_000);

  it("Ctrl-C stops the command, releases abandoned and exits 130", async () => {
    const run = work("interrupt", [], LONG_RUNNING);
    const { claim } = JSON.parse(await run.line(/"claim"/));
    expect((await liveClaims("interrupt")).map((c) => c.fence)).toEqual([claim.fence]);
    run.process.kill("SIGINT");
    expect(await run.exited).toBe(130);
    expect(run.stdout()).toContain("child got SIGTERM");
    const events = run.events();
    expect(events.find((e) => e.event === "released")).toMatchObject({
      issue: claim.issue,
      outcome: "abandoned",
    });
    expect(events.find((e) => e.event === "released")!.note).toMatch(/^interrupted by SIGINT/);
    expect(events.at(-1)).toMatchObject({ event: "stopped", reason: "interrupted", abandoned: 1 });
    expect(await liveClaims("interrupt")).toEqual([]);
    // Abandoned work goes back to the queue (one attempt used).
    expect((await queue("interrupt")).items).toEqual([
      expect.objectContaining({ number: claim.issue, attempts: 1 }),
    ]);
  }, 60_000);

  it("stops saying why when the circuit breaker pauses work (the default branch is red)", async () => {
    const failed = await fetch(`${stack.sim.url}/_sim/repos/${OWNER}/paused/check-runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "build", conclusion: "failure" }),
    });
    expect(failed.status).toBe(201);
    const paused = await waitFor("the breaker to turn red", async () => {
      const q = await api<{ paused?: { since: string } }>(
        "GET",
        `${repoPath("paused")}/queue`,
        keys.get("paused")!,
      );
      return q.body.paused;
    });
    const run = work("paused", [], exitWith(0));
    expect(await run.exited).toBe(0);
    expect(run.stdout()).toBe("");
    expect(run.events()).toEqual([
      { event: "paused", since: paused.since, retryAfterSeconds: 60 },
      expect.objectContaining({ event: "stopped", reason: "paused", runs: 0 }),
    ]);
  }, 60_000);
});
