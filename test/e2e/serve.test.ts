// `switchyard serve` (the portable host, functions/serve.ts) against the GitHub simulator over
// real HTTP, on Node, Bun and Deno: ingress refusals; install → full reconcile → producer labels
// → a claim; a crash (SIGKILL) and a restart on the same data directory keep graph, claims and
// fences and fire the alarm pending at the crash; the cron; a close reaching `agent:ready`; a
// clean SIGTERM. On Node also: a claim expiring by its stored alarm after a restart, and
// `npm start -- --host node`.
import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { demoSeeds } from "../../infra/demo/seeds.ts";
import { seedSnapshot } from "../../infra/github-sim/seed.ts";
import { type RunningSimulator, startSimulatorServer } from "../../infra/github-sim/serve.ts";
import { freePort, root, waitFor } from "../../infra/local-stack.ts";
import { FleetClient } from "../../shared/fleet/client.ts";
import { signBody } from "../../shared/webhooks/signature.ts";
import { spawnCollect } from "../support/runtimes.ts";

const bin = (name: string) => `${root}node_modules/.bin/${name}`;
// Each runtime starts the same file; Deno resolves `cloudflare:workers` through deno.json.
const COMMANDS = {
  node: [bin("node"), "functions/serve.ts"],
  bun: [bin("bun"), "functions/serve.ts"],
  deno: [bin("deno"), "run", "--quiet", "-A", "functions/serve.ts"],
} as const;

type Graph = {
  ready: number[];
  watermarks: {
    lastFullReconcileAt: string | null;
    incremental: { at: string } | null;
    producer: { seq: number; at: string | null };
  };
};

interface ServeProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

type Runtime = keyof typeof COMMANDS;

function startServe(runtime: Runtime, args: string[], env: Record<string, string>): ServeProcess {
  const [command, ...prefix] = COMMANDS[runtime];
  const child = spawn(command, [...prefix, ...args], {
    cwd: root,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  return { child, output: () => out, exited };
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/**
 * The simulator (a fresh App key and webhook secret) and `switchyard serve` on `runtime` with a
 * fresh data directory; `installDemo` seeds the demo repositories, installs the App and
 * registers an admin user whose token the graph API takes.
 */
async function serveStack(runtime: Runtime, extraEnv: Record<string, string> = {}) {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const webhookSecret = `serve-${crypto.randomUUID()}`;
  const sim: RunningSimulator = await startSimulatorServer({
    port: 0,
    appId: 1,
    appPublicKey: publicKey.export({ type: "spki", format: "pem" }).toString(),
    webhookSecret,
  });
  cleanups.push(() => sim.close());
  const data = await mkdtemp(join(tmpdir(), "switchyard-serve-"));
  cleanups.push(() => rm(data, { recursive: true, force: true }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    GITHUB_API_URL: sim.url,
    GITHUB_APP_ID: "1",
    GITHUB_APP_PRIVATE_KEY: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    GITHUB_WEBHOOK_SECRET: webhookSecret,
    PUBLIC_URL: url,
    HEALTH_DETAILS: "1",
    ...extraEnv,
  };
  const args = [
    "--port",
    String(port),
    "--data",
    data,
    "--test-scheduled",
    "--dotenv",
    join(data, "none.env"),
  ];
  let serve = startServe(runtime, args, env);
  cleanups.push(async () => {
    serve.child.kill("SIGKILL");
  });
  // Up, or the reason it is not (its output) as soon as it exits.
  const up = () => {
    const exitedEarly = serve.exited.then((code) => {
      throw new Error(`switchyard serve exited (${code}):\n${serve.output()}`);
    });
    exitedEarly.catch(() => {}); // a later, intended exit is not an error
    return Promise.race([
      waitFor(
        "switchyard serve to start",
        async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined),
        60_000,
      ),
      exitedEarly,
    ]);
  };
  await up();
  const token = `ghp_serve${crypto.randomUUID().replace(/-/g, "")}`;
  const rocket = () => sim.sim.state.requireRepo("acme", "rocket");
  return {
    sim,
    url,
    data,
    webhookSecret,
    token,
    process: () => serve,
    /** SIGKILL (a crash: nothing runs on the way out), then a start on the same data. */
    async crashAndRestart() {
      serve.child.kill("SIGKILL");
      await serve.exited;
      serve = startServe(runtime, args, env);
      await up();
    },
    async installDemo() {
      sim.sim.webhooks.pushUrl = `${url}/webhooks/github`;
      const seeds = await demoSeeds(Date.now());
      seedSnapshot(sim.sim.state, seeds.sdk);
      seedSnapshot(sim.sim.state, seeds.rocket);
      sim.sim.state.install("acme", ["sdk", "rocket"], "octocat");
      const registered = await fetch(`${sim.url}/_sim/users`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ login: "serve-admin", token, repos: { "acme/rocket": "admin" } }),
      });
      expect(registered.ok).toBe(true);
    },
    async graph() {
      const response = await fetch(`${url}/v1/repos/acme/rocket/graph`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return response.ok ? ((await response.json()) as Graph) : undefined;
    },
    /** Issues of acme/rocket labeled `agent:ready` on GitHub (the simulator). */
    labeled: () =>
      [...rocket().issues.values()]
        .filter((i) => i.labels.includes("agent:ready"))
        .map((i) => i.number)
        .sort((a, b) => a - b),
    issueLabels: (n: number) => sim.sim.state.requireIssue(rocket(), n).labels,
    /** A fleet key minted by the admin, as an agent's client. */
    async agent() {
      const admin = new FleetClient({ server: url, repo: "acme/rocket", token });
      const key = await admin.createKey({ name: "serve test" });
      return new FleetClient({ server: url, repo: "acme/rocket", token: key.key });
    },
    async firstReconcile() {
      return waitFor("the first reconcile and producer run", async () => {
        const g = await this.graph();
        return g?.watermarks.lastFullReconcileAt && g.watermarks.producer.at ? g : undefined;
      });
    },
  };
}

describe.each(Object.keys(COMMANDS) as Array<keyof typeof COMMANDS>)(
  "switchyard serve on %s",
  (runtime) => {
    it("reconciles, keeps graph, claims, fences and a pending alarm across a crash, runs the cron, and a close reaches agent:ready", async () => {
      // Long enough to crash between a claim and its fleet write (an alarm).
      const stack = await serveStack(runtime, { FLEET_WRITE_DELAY_MS: "3000" });
      const { url, sim, data, webhookSecret } = stack;

      // Ingress refuses what it must before any object is touched.
      const deliver = async (body: string, signature: string | null) => {
        const headers: Record<string, string> = {
          "content-type": "application/json",
          "x-github-event": "issues",
          "x-github-delivery": crypto.randomUUID(),
        };
        if (signature !== null) headers["x-hub-signature-256"] = signature;
        const response = await fetch(`${url}/webhooks/github`, { method: "POST", headers, body });
        return response.status;
      };
      expect(await deliver("{}", null)).toBe(401);
      expect(await deliver("{}", await signBody("wrong secret", "{}"))).toBe(401);
      const huge = "x".repeat(1024 * 1024 + 1);
      expect(await deliver(huge, await signBody(webhookSecret, huge))).toBe(413);
      expect(await deliver("{not json", await signBody(webhookSecret, "{not json"))).toBe(400);

      await stack.installDemo();
      const graph = () => stack.graph();
      const { labeled, issueLabels } = stack;

      const first = await stack.firstReconcile();
      // The same story as `npm start` on wrangler dev (test/e2e/demo.test.ts).
      expect(first.ready).toEqual([4, 5, 9, 11, 15]);
      await waitFor("the producer's labels", async () =>
        labeled().includes(9) && labeled().includes(15) ? true : undefined,
      );
      // One SQLite file per object under the data directory.
      expect(
        readdirSync(join(data, "objects", "RepoObject")).filter((f) => f.endsWith(".sqlite"))
          .length,
      ).toBe(2);

      // An agent claims the queue's first issue; its `agent:processing` label is written by the
      // object's alarm a few seconds later.
      const agent = await stack.agent();
      const grant = await agent.claimNext({ agentId: "agent-1", machine: "box" });
      expect(grant).not.toBeNull();
      const claimed = grant!.issue.number;
      expect(issueLabels(claimed)).not.toContain("agent:processing");

      // A crash before that alarm fires: nothing runs on the way out; what was acknowledged is
      // committed, the alarm included.
      await stack.crashAndRestart();
      // The alarm armed before the crash fires after the restart, before any request reaches the
      // object (so it is the stored alarm, re-armed at start): the label reaches GitHub.
      await waitFor("the pending fleet write after the restart", async () =>
        issueLabels(claimed).includes("agent:processing") ? true : undefined,
      );
      const after = await graph();
      // The graph survived (the claimed issue, now `agent:processing`, has left `ready`).
      expect(after?.ready).toEqual(first.ready.filter((n) => n !== claimed));
      expect(after?.watermarks.lastFullReconcileAt).toBe(first.watermarks.lastFullReconcileAt);

      // The claim and its fence survived: the right fence heartbeats, a stale one is refused.
      const { claimId, fence } = grant!;
      await expect(agent.heartbeat(claimed, { claimId, fence })).resolves.toBeDefined();
      await expect(agent.heartbeat(claimed, { claimId, fence: fence - 1 })).rejects.toThrow();
      await agent.release(claimed, { claimId, fence, outcome: "abandoned" });
      const again = await agent.claim(claimed, { agentId: "agent-2" });
      expect(again.fence).toBeGreaterThan(fence);

      // The cron (fired by hand, as `wrangler dev --test-scheduled`): an incremental reconcile.
      const before = (await graph())?.watermarks.incremental?.at ?? null;
      expect((await fetch(`${url}/__scheduled`)).status).toBe(200);
      await waitFor("the cron's incremental reconcile", async () => {
        const at = (await graph())?.watermarks.incremental?.at ?? null;
        return at !== null && at !== before ? true : undefined;
      });

      // The restarted process takes webhooks: the last open sub-issue of #1 closes on GitHub.
      sim.sim.state.closeIssue(
        sim.sim.state.requireIssue(sim.sim.state.requireRepo("acme", "rocket"), 4),
        "completed",
        "octocat",
      );
      await waitFor("the kick to reach agent:ready", async () =>
        labeled().includes(1) ? true : undefined,
      );

      // A graceful stop: exit 0, the databases closed (no WAL left behind after a checkpoint is
      // not promised; the files are there and open again).
      const serve = stack.process();
      serve.child.kill("SIGTERM");
      expect(await serve.exited).toBe(0);
      expect(serve.output()).toContain("switchyard serve: stopped");
      expect(existsSync(join(data, "objects", "DirectoryObject"))).toBe(true);
    }, 180_000);
  },
);

describe("switchyard serve on node: claims expire by alarm", () => {
  it("a claim left by an agent expires after a restart, by the stored alarm alone, and its processing label goes", async () => {
    const stack = await serveStack("node", { FLEET_WRITE_DELAY_MS: "500" });
    await stack.installDemo();
    await stack.firstReconcile();
    const agent = await stack.agent();
    // The shortest claim there is (60 s); the agent then vanishes without a heartbeat.
    const grant = await agent.claimNext({ agentId: "agent-gone", ttlSeconds: 60 });
    expect(grant).not.toBeNull();
    const claimed = grant!.issue.number;
    await waitFor("the processing label", async () =>
      stack.issueLabels(claimed).includes("agent:processing") ? true : undefined,
    );
    await stack.crashAndRestart();
    // No request reaches the object from here: only its stored alarm can end the claim and
    // take the label off on GitHub.
    await waitFor(
      "the claim's expiry to remove the processing label",
      async () => (stack.issueLabels(claimed).includes("agent:processing") ? undefined : true),
      90_000,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(grant!.expiresAt));
    await expect(
      agent.heartbeat(claimed, { claimId: grant!.claimId, fence: grant!.fence }),
    ).rejects.toThrow();
  }, 180_000);
});

describe("npm start -- --host node (the demo on the portable host)", () => {
  it("tells the same story as on wrangler dev", async () => {
    const run = await spawnCollect(process.execPath, ["infra/dev.ts", "--once", "--host", "node"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("switchyard serve on node");
    expect(run.stdout).toMatch(/ready: +#4 #5 #9 #11 #15/);
    expect(run.stdout).toContain("#1 Launch checklist for v1 is now agent:ready.");
    expect(run.stdout).toMatch(/queue \(agent:ready\): #1 #9 #13 #15/);
    expect(run.stdout).toMatch(/claim → #\d+ .+: fence \d+, branch issue\/\d+-/);
    expect(run.stdout).toContain("release (abandoned)");
  }, 180_000);

  it("refuses an unknown host", async () => {
    const run = await spawnCollect(process.execPath, ["infra/dev.ts", "--once", "--host", "cloud"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--host must be wrangler, node, bun or deno");
  });
});
