#!/usr/bin/env node
// `npm start`: the whole system offline. The GitHub simulator (seeded with the demo
// repositories) and the Worker under `wrangler dev` (local Durable Object storage), the App
// "installed", the first reconcile and producer run, then one issue closed so a kick reaches
// `agent:ready`. `--once` stops after the story (used by the tests); otherwise Ctrl-C stops all.
import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { createServer } from "node:net";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { demoSeeds } from "./demo/seeds.ts";
import { seedSnapshot } from "./github-sim/seed.ts";
import { startSimulatorServer } from "./github-sim/serve.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const once = process.argv.includes("--once");
const APP_ID = 1;
const REPO = "acme/rocket";
const say = (line = "") => process.stdout.write(`${line}\n`);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const children: ChildProcess[] = [];
let closing: Promise<void> | null = null;
async function shutdown(code: number) {
  closing ??= (async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
    await Promise.all(
      children.map((c) =>
        c.exitCode === null ? new Promise((r) => c.once("exit", r)) : undefined,
      ),
    );
    await sim?.close();
    process.exit(code);
  })();
  return closing;
}
process.on("SIGINT", () => {
  say("\nstopping…");
  void shutdown(0);
});
process.on("SIGTERM", () => void shutdown(0));
// However this process ends, the Worker must not outlive it.
process.on("exit", () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
});
process.stdout.on("error", () => void shutdown(0));

// 1. The App's key pair (PKCS#8, as Workers require) and the webhook secret.
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const pkcs8 = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const webhookSecret = `demo-${crypto.randomUUID()}`;

// 2. The GitHub simulator.
const [simPort, workerPort] = [await freePort(), await freePort()];
const workerUrl = `http://127.0.0.1:${workerPort}`;
const sim = await startSimulatorServer({
  port: simPort,
  appId: APP_ID,
  appPublicKey: publicKey.export({ type: "spki", format: "pem" }).toString(),
  webhookSecret,
});
say(`GitHub simulator   ${sim.url}   (control API: ${sim.url}/_sim)`);

// 3. The Worker under wrangler dev, with fresh local Durable Object storage.
const state = `${root}.tmp/demo-state`;
await rm(state, { recursive: true, force: true });
await mkdir(state, { recursive: true });
const log = createWriteStream(`${root}.tmp/wrangler.log`);
// Run wrangler on this same Node (the machine's default `node` may be too old for it).
const wrangler = spawn(
  process.execPath,
  [
    `${root}node_modules/wrangler/bin/wrangler.js`,
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(workerPort),
    "--persist-to",
    state,
    "--test-scheduled",
    "--show-interactive-dev-session=false",
    "--var",
    `GITHUB_API_URL:${sim.url}`,
    "--var",
    `GITHUB_APP_ID:${APP_ID}`,
    "--var",
    `GITHUB_APP_PRIVATE_KEY:${pkcs8.replace(/\n/g, "\\n")}`,
    "--var",
    `GITHUB_WEBHOOK_SECRET:${webhookSecret}`,
  ],
  {
    cwd: root,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  },
);
children.push(wrangler);
wrangler.stdout?.pipe(log);
wrangler.stderr?.pipe(log);
wrangler.once("exit", (code) => {
  if (!closing) {
    process.stderr.write(`wrangler dev exited (${code}); see .tmp/wrangler.log\n`);
    void shutdown(1);
  }
});
await waitFor(
  "the Worker to start",
  async () => ((await fetch(`${workerUrl}/healthz`)).ok ? true : undefined),
  120_000,
);
say(`switchyard Worker  ${workerUrl}   (log: .tmp/wrangler.log)`);

// 4. The demo repositories, and the App installed on them: GitHub sends the installation webhook.
sim.sim.webhooks.pushUrl = `${workerUrl}/webhooks/github`;
const seeds = await demoSeeds(Date.now());
seedSnapshot(sim.sim.state, seeds.sdk);
seedSnapshot(sim.sim.state, seeds.rocket);
const installation = sim.sim.state.install("acme", ["sdk", "rocket"], "octocat");
say(`\nInstalled the App on acme (installation ${installation.id}): acme/rocket, acme/sdk.`);

type Graph = {
  ready: number[];
  blocked: Array<{ number: number; blockers: Array<number | string> }>;
  kicks: Array<{ target: number; kind: string; causes: Array<number | string> }>;
  rollupCandidates: Array<{ number: number; children: number[] }>;
  diagnostics: unknown[];
  watermarks: { lastFullReconcileAt: string | null; producer: { seq: number; at: string | null } };
};
const graph = async () => {
  const response = await fetch(`${workerUrl}/v1/repos/${REPO}/graph`);
  return response.ok ? ((await response.json()) as Graph) : undefined;
};
const titles = new Map(seeds.rocket.issues.map((i) => [i.number, i.title]));
const seededReady = new Set(
  seeds.rocket.issues.filter((i) => i.labels.includes("agent:ready")).map((i) => i.number),
);
const labeled = () =>
  [...sim.sim.state.requireRepo("acme", "rocket").issues.values()]
    .filter((i) => i.labels.includes("agent:ready"))
    .map((i) => i.number)
    .sort((a, b) => a - b);
const show = (n: number) => `#${n} ${titles.get(n) ?? ""}`.trim();

// 5. The first full reconcile and producer run.
const first = await waitFor("the first reconcile and producer run", async () => {
  const g = await graph();
  return g?.watermarks.lastFullReconcileAt && g.watermarks.producer.at ? g : undefined;
});
const added = () => labeled().filter((n) => !seededReady.has(n));
await waitFor(
  "the producer's label writes",
  async () => (added().length >= 2 ? true : undefined),
  30_000,
);
say(`\nFirst reconcile of ${REPO} (full, GraphQL): ${seeds.rocket.issues.length} issues.`);
say(`  ready:   ${first.ready.map((n) => `#${n}`).join(" ")}`);
say(
  `  blocked: ${first.blocked.map((b) => `#${b.number} by ${b.blockers.map((r) => (typeof r === "number" ? `#${r}` : r)).join(", ")}`).join("; ")}`,
);
say(`  diagnostics: ${JSON.stringify(first.diagnostics)}`);
say(
  `  kicks: ${first.kicks.map((k) => `#${k.target} ${k.kind} by ${k.causes.map((c) => (typeof c === "number" ? `#${c}` : c)).join(", ")}`).join("; ")}`,
);
say(`  producer added agent:ready on GitHub: ${added().map(show).join("; ")}`);
say(`  (#1 was kicked too, but its sub-issue #4 is still open, so it waits.)`);

// 6. A close on GitHub: the last open child of the epic. Its webhook reaches the Worker, the
// producer materializes the kick, and the parent joins the queue.
say(`\nClosing ${show(4)} on GitHub (the last open sub-issue of #1)…`);
sim.sim.state.closeIssue(
  sim.sim.state.requireIssue(sim.sim.state.requireRepo("acme", "rocket"), 4),
  "completed",
  "octocat",
);
await waitFor(
  "the kick to reach agent:ready",
  async () => (labeled().includes(1) ? true : undefined),
  30_000,
);
const after = (await graph())!;
say(`  webhook issues.closed → RepoObject → producer → ${show(1)} is now agent:ready.`);
say(
  `  rollup candidates: ${after.rollupCandidates.map((r) => `#${r.number} (children ${r.children.map((c) => `#${c}`).join(", ")})`).join("; ")}`,
);
say(
  `  queue (agent:ready): ${labeled()
    .map((n) => `#${n}`)
    .join(" ")}`,
);

say(`\nTry:
  curl ${workerUrl}/healthz
  curl ${workerUrl}/v1/repos/${REPO}/graph
  curl "${workerUrl}/__scheduled?cron=*/15+*+*+*+*"          # fire the reconciliation cron
  curl -X POST ${sim.url}/_sim/repos/${REPO}/issues/5/close -d '{}'   # close #5: #6 gets agent:ready`);

if (once) await shutdown(0);
else say("\nRunning. Ctrl-C stops the Worker and the simulator.");
