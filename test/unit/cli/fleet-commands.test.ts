// `switchyard queue|claim|heartbeat|release|comment`: flags to requests, answers to stdout,
// API failures to exit 1 naming the request, bad usage to exit 2 naming the flag, and where
// the token comes from (SWITCHYARD_TOKEN, GITHUB_TOKEN, or Actions OIDC).
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createGitHubSimulator, simulatorFetch } from "../../../infra/github-sim/app.ts";
import { runCli } from "../../support/cli.ts";
import { FakeFleet } from "../fleet/fake-fleet.ts";
import { issue } from "../github/sim-harness.ts";

const SERVER = "https://fleet.example";
const CONN = ["--server", SERVER, "--repo", "acme/app"];
const ENV = { SWITCHYARD_TOKEN: "fleet-key" };

describe("switchyard queue", () => {
  it("prints the queue and sends the filters as the query", async () => {
    const fleet = new FakeFleet([3, 4]);
    const run = await runCli(
      ["queue", ...CONN, "--machine", "m1", "--capabilities", "gpu, rust", "--limit", "5"],
      { env: ENV, fetch: fleet.fetch },
    );
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(run.stdout).items.map((i: { number: number }) => i.number)).toEqual([3, 4]);
    expect(fleet.requests[0]).toMatchObject({
      method: "GET",
      path: "/v1/repos/acme/app/queue",
      search: "?machine=m1&capabilities=gpu%2Crust&limit=5",
      authorization: "Bearer fleet-key",
    });
  });
});

describe("switchyard queue and claim: kinds", () => {
  it("queue --kinds sends them as the query; claim --kinds and --kind in the body", async () => {
    const fleet = new FakeFleet([3, 4]);
    const queue = await runCli(["queue", ...CONN, "--kinds", "reply, kick"], {
      env: ENV,
      fetch: fleet.fetch,
    });
    expect(queue.code).toBe(0);
    expect(fleet.requests[0]!.search).toBe("?kinds=reply%2Ckick");
    const next = await runCli(["claim", ...CONN, "--agent-id", "a", "--kinds", "reply"], {
      env: ENV,
      fetch: fleet.fetch,
    });
    expect(next.code).toBe(0);
    expect(fleet.requests[1]!.body).toEqual({ agentId: "a", kinds: ["reply"] });
    const direct = await runCli(
      ["claim", ...CONN, "--agent-id", "a", "--issue", "4", "--kind", "reply"],
      { env: ENV, fetch: fleet.fetch },
    );
    expect(direct.code).toBe(0);
    expect(fleet.requests[2]!.body).toEqual({ agentId: "a", kind: "reply" });
  });

  it.each([
    [["queue", ...CONN, "--kinds", "replies"], "--kinds"],
    [["claim", ...CONN, "--agent-id", "a", "--kinds", "work"], "--kinds"],
    [["claim", ...CONN, "--agent-id", "a", "--issue", "4", "--kind", "kick"], "--kind"],
    [["claim", ...CONN, "--agent-id", "a", "--issue", "4", "--kinds", "reply"], "--kinds"],
    [["claim", ...CONN, "--agent-id", "a", "--kind", "reply"], "--kind goes with --issue"],
  ])("%j exits 2 naming %s", async (argv, message) => {
    const fleet = new FakeFleet([4]);
    const run = await runCli(argv, { env: ENV, fetch: fleet.fetch });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(fleet.requests).toEqual([]);
  });
});

describe("switchyard claim", () => {
  it("claims an issue by number", async () => {
    const fleet = new FakeFleet([5]);
    const run = await runCli(
      ["claim", ...CONN, "--issue", "5", "--agent-id", "bot-1", "--ttl-seconds", "600"],
      { env: ENV, fetch: fleet.fetch },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      claimId: "claim-1",
      fence: 1,
      issue: { number: 5 },
    });
    expect(fleet.requests[0]).toMatchObject({
      method: "POST",
      path: "/v1/repos/acme/app/issues/5/claim",
      body: { agentId: "bot-1", ttlSeconds: 600 },
    });
  });

  it("claims the queue's next issue without --issue, and prints null when there is none", async () => {
    const fleet = new FakeFleet([8]);
    const first = await runCli(["claim", ...CONN, "--agent-id", "bot-1", "--capabilities", "gpu"], {
      env: ENV,
      fetch: fleet.fetch,
    });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ issue: { number: 8 } });
    expect(fleet.requests[0]).toMatchObject({
      path: "/v1/repos/acme/app/claims",
      body: { agentId: "bot-1", capabilities: ["gpu"] },
    });
    const empty = await runCli(["claim", ...CONN, "--agent-id", "bot-1"], {
      env: ENV,
      fetch: fleet.fetch,
    });
    expect(empty).toMatchObject({ code: 0, stdout: "null\n" });
    expect(empty.stderr).toContain("the queue is empty");
  });

  it("exits 1 on a conflict, naming the request and the holder", async () => {
    const fleet = new FakeFleet([5]);
    fleet.live.set(5, {
      claimId: "x",
      number: 5,
      agentId: "bot-2",
      fence: 1,
      branch: "b",
      expiresAt: "2026-11-29T13:00:00Z",
    });
    const run = await runCli(["claim", ...CONN, "--issue", "5", "--agent-id", "bot-1"], {
      env: ENV,
      fetch: fleet.fetch,
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      "switchyard claim: POST /v1/repos/acme/app/issues/5/claim: 409 conflict (held): #5 is claimed; held by bot-2 (switchyard)\n",
    );
  });
});

describe("switchyard heartbeat, release, comment", () => {
  async function claimed() {
    const fleet = new FakeFleet([5]);
    const run = await runCli(["claim", ...CONN, "--issue", "5", "--agent-id", "bot-1"], {
      env: ENV,
      fetch: fleet.fetch,
    });
    const grant = JSON.parse(run.stdout) as { claimId: string; fence: number };
    const fenced = ["--issue", "5", "--claim-id", grant.claimId, "--fence", String(grant.fence)];
    return { fleet, fenced };
  }

  it("heartbeats, comments (from --body and --body-file) and releases with the fence", async () => {
    const { fleet, fenced } = await claimed();
    const opts = { env: ENV, fetch: fleet.fetch };
    const beat = await runCli(["heartbeat", ...CONN, ...fenced], opts);
    expect(beat.code).toBe(0);
    expect(JSON.parse(beat.stdout)).toMatchObject({ claimId: "claim-1", fence: 1 });

    expect((await runCli(["comment", ...CONN, ...fenced, "--body", "hello"], opts)).code).toBe(0);
    const dir = await mkdtemp(join(tmpdir(), "switchyard-comment-"));
    await writeFile(join(dir, "body.md"), "from a file\n");
    const fromFile = await runCli(
      ["comment", ...CONN, ...fenced, "--body-file", join(dir, "body.md")],
      opts,
    );
    expect(JSON.parse(fromFile.stdout)).toEqual({ id: 2, url: "https://github.com/c/2" });
    expect(fleet.comments).toEqual([
      { number: 5, body: "hello" },
      { number: 5, body: "from a file\n" },
    ]);

    const release = await runCli(
      ["release", ...CONN, ...fenced, "--outcome", "done", "--note", "merged"],
      opts,
    );
    expect(release.code).toBe(0);
    expect(JSON.parse(release.stdout)).toMatchObject({ outcome: "done" });
    expect(fleet.released).toEqual([{ number: 5, fence: 1, outcome: "done", note: "merged" }]);

    // The claim is gone: the same fence is now stale.
    const stale = await runCli(["heartbeat", ...CONN, ...fenced], opts);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(
      "heartbeat: POST /v1/repos/acme/app/issues/5/claim/heartbeat: 409 stale-fence",
    );
  });

  it("exits 1 naming the request when the server cannot be reached", async () => {
    const { fleet, fenced } = await claimed();
    fleet.fault = () => "network";
    const run = await runCli(["release", ...CONN, ...fenced, "--outcome", "failed"], {
      env: ENV,
      fetch: fleet.fetch,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "release: POST /v1/repos/acme/app/issues/5/claim/release: network: ECONNRESET",
    );
  });
});

describe("where the token comes from", () => {
  it("prefers SWITCHYARD_TOKEN, then GITHUB_TOKEN", async () => {
    const fleet = new FakeFleet([]);
    await runCli(["queue", ...CONN], {
      env: { SWITCHYARD_TOKEN: "key", GITHUB_TOKEN: "gh" },
      fetch: fleet.fetch,
    });
    await runCli(["queue", ...CONN], { env: { GITHUB_TOKEN: "gh" }, fetch: fleet.fetch });
    expect(fleet.requests.map((r) => r.authorization)).toEqual(["Bearer key", "Bearer gh"]);
  });

  it("inside GitHub Actions with no token, asks for an OIDC token with the server as audience", async () => {
    const sim = createGitHubSimulator({ webhookSecret: "s" });
    const simFetch = simulatorFetch(sim);
    const post = (path: string, body: unknown) =>
      simFetch(`http://sim.test${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    await post("/_sim/seed", { snapshot: { repo: "acme/app", issues: [issue(1)] } });
    await post("/_sim/oidc/request-tokens", { repository: "acme/app", token: "req-token" });
    const fleet = new FakeFleet([]);
    const fetch = ((input: RequestInfo | URL, init?: RequestInit) =>
      new Request(input, init).url.startsWith("http://sim.test")
        ? simFetch(input, init)
        : fleet.fetch(input, init)) as typeof globalThis.fetch;
    const run = await runCli(["queue", "--server", `${SERVER}/`, "--repo", "acme/app"], {
      env: {
        ACTIONS_ID_TOKEN_REQUEST_URL: "http://sim.test/_sim/oidc/request",
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: "req-token",
      },
      fetch,
    });
    expect(run.code).toBe(0);
    const jwt = fleet.requests[0]!.authorization!.replace(/^Bearer /, "");
    const part = jwt.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/");
    const claims = JSON.parse(atob(part.padEnd(Math.ceil(part.length / 4) * 4, "=")));
    expect(claims).toMatchObject({ aud: SERVER, repository: "acme/app" });
  });

  it("inside GitHub Actions, the job's OIDC token is preferred over an installation GITHUB_TOKEN (ghs_)", async () => {
    const sim = createGitHubSimulator({ webhookSecret: "s" });
    const simFetch = simulatorFetch(sim);
    const post = (path: string, body: unknown) =>
      simFetch(`http://sim.test${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    await post("/_sim/seed", { snapshot: { repo: "acme/app", issues: [issue(1)] } });
    await post("/_sim/oidc/request-tokens", { repository: "acme/app", token: "req-token" });
    const fleet = new FakeFleet([]);
    const fetch = ((input: RequestInfo | URL, init?: RequestInit) =>
      new Request(input, init).url.startsWith("http://sim.test")
        ? simFetch(input, init)
        : fleet.fetch(input, init)) as typeof globalThis.fetch;
    const actions = {
      ACTIONS_ID_TOKEN_REQUEST_URL: "http://sim.test/_sim/oidc/request",
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: "req-token",
    };
    const inActions = await runCli(["queue", ...CONN], {
      env: { ...actions, GITHUB_TOKEN: "ghs_jobtoken" },
      fetch,
    });
    expect(inActions.code).toBe(0);
    expect(fleet.requests[0]!.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    // A person's token is still taken as given inside Actions; a ghs_ outside Actions too (the
    // Worker's refusal then says what to use).
    await runCli(["queue", ...CONN], { env: { ...actions, GITHUB_TOKEN: "ghp_mine" }, fetch });
    await runCli(["queue", ...CONN], { env: { GITHUB_TOKEN: "ghs_jobtoken" }, fetch });
    expect(fleet.requests.slice(1).map((r) => r.authorization)).toEqual([
      "Bearer ghp_mine",
      "Bearer ghs_jobtoken",
    ]);
  });

  it("exits 2 naming the variables when there is no token at all", async () => {
    const run = await runCli(["queue", ...CONN], { env: {} });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("SWITCHYARD_TOKEN");
    expect(run.stderr).toContain("GITHUB_TOKEN");
    const half = await runCli(["queue", ...CONN], {
      env: { ACTIONS_ID_TOKEN_REQUEST_URL: "https://t.example/x" },
    });
    expect(half.code).toBe(2);
    expect(half.stderr).toContain("ACTIONS_ID_TOKEN_REQUEST_TOKEN");
  });
});

describe("fleet commands: bad usage exits 2 naming the flag", () => {
  const fenced = ["--issue", "5", "--claim-id", "c-1", "--fence", "3"];
  it.each([
    [["queue", "--repo", "acme/app"], "--server is required"],
    [["queue", "--server", "ftp://x", "--repo", "acme/app"], "--server must be an http(s) URL"],
    [["queue", "--server", SERVER], "--repo is required"],
    [["queue", "--server", SERVER, "--repo", "acme"], "--repo must be OWNER/NAME"],
    [["queue", ...CONN, "--limit", "0"], "--limit must be at least 1"],
    [["queue", ...CONN, "--limit", "101"], "--limit must be at most 100"],
    [["queue", ...CONN, "--limit", "ten"], "--limit must be an integer"],
    [["queue", ...CONN, "--order", "age"], "--order must be number, impact or priority"],
    [["queue", ...CONN, "--capabilities", "gpu,-x"], "--capabilities"],
    [["queue", ...CONN, "--bogus"], "--bogus"],
    [["claim", ...CONN], "--agent-id is required"],
    [["claim", ...CONN, "--agent-id", "has space"], "--agent-id must be 1 to 64"],
    [
      ["claim", ...CONN, "--agent-id", "a", "--ttl-seconds", "59"],
      "--ttl-seconds must be at least 60",
    ],
    [
      ["claim", ...CONN, "--agent-id", "a", "--ttl-seconds", "86401"],
      "--ttl-seconds must be at most 86400",
    ],
    [["claim", ...CONN, "--agent-id", "a", "--issue", "x"], "--issue must be an issue number"],
    [
      ["claim", ...CONN, "--agent-id", "a", "--issue", "5", "--capabilities", "gpu"],
      "--capabilities",
    ],
    [["heartbeat", ...CONN, "--claim-id", "c", "--fence", "1"], "--issue is required"],
    [["heartbeat", ...CONN, "--issue", "5", "--fence", "1"], "--claim-id is required"],
    [["heartbeat", ...CONN, "--issue", "5", "--claim-id", "c"], "--fence is required"],
    [
      ["heartbeat", ...CONN, "--issue", "5", "--claim-id", "c", "--fence", "0"],
      "--fence must be positive",
    ],
    [
      ["heartbeat", ...CONN, "--issue", "5", "--claim-id", "c", "--fence", "1.5"],
      "--fence must be an integer",
    ],
    [["release", ...CONN, ...fenced], "--outcome is required"],
    [
      ["release", ...CONN, ...fenced, "--outcome", "ok"],
      "--outcome must be done, abandoned or failed",
    ],
    [
      ["release", ...CONN, ...fenced, "--outcome", "done", "--note", "x".repeat(2001)],
      "--note must be at most 2000",
    ],
    [["comment", ...CONN, ...fenced], "give exactly one of --body TEXT or --body-file FILE"],
    [["comment", ...CONN, ...fenced, "--body", "a", "--body-file", "f"], "give exactly one of"],
    [["comment", ...CONN, ...fenced, "--body", ""], "--body must not be empty"],
    [
      ["comment", ...CONN, ...fenced, "--body-file", "/nonexistent/body.md"],
      "cannot read /nonexistent/body.md",
    ],
  ])("%j", async (argv, message) => {
    const run = await runCli(argv, { env: ENV });
    expect(run.stderr).toContain(message);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
  });
});
