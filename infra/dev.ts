#!/usr/bin/env node
// `npm start`: the whole system offline. The GitHub simulator (seeded with the demo
// repositories) and the Worker under `wrangler dev` (local Durable Object storage), the App
// "installed", the first reconcile and producer run, then one issue closed so a kick reaches
// `agent:ready`. `--once` stops after the story (used by the tests); otherwise Ctrl-C stops all.
import process from "node:process";
import { FleetClient } from "../shared/fleet/client.ts";
import { scan } from "../shared/graph/scan.ts";
import { parseSnapshot } from "../shared/graph/snapshot.ts";
import { demoSeeds } from "./demo/seeds.ts";
import { seedSnapshot } from "./github-sim/seed.ts";
import { type LocalHost, startLocalStack, waitFor } from "./local-stack.ts";

const once = process.argv.includes("--once");
// `--host node|bun|deno`: the Worker on the portable host (`switchyard serve`, SQLite files)
// instead of `wrangler dev` (docs/self-hosting.md).
const hostAt = process.argv.indexOf("--host");
const host = (hostAt >= 0 ? process.argv[hostAt + 1] : "wrangler") as LocalHost;
if (!["wrangler", "node", "bun", "deno"].includes(host)) {
  process.stderr.write(`npm start: --host must be wrangler, node, bun or deno (got ${host})\n`);
  process.exit(2);
}
const REPO = "acme/rocket";
const say = (line = "") => process.stdout.write(`${line}\n`);

let closing: Promise<void> | null = null;
async function shutdown(code: number) {
  closing ??= (async () => {
    await stack.close();
    process.exit(code);
  })();
  return closing;
}

// The simulator and the Worker: a fresh App key pair, webhook secret and local storage.
const stack = await startLocalStack("demo", {
  host,
  onWorkerExit: (code) => {
    process.stderr.write(
      `${host === "wrangler" ? "wrangler dev" : "switchyard serve"} exited (${code}); see .tmp/demo-wrangler.log\n`,
    );
    void shutdown(1);
  },
});
process.on("SIGINT", () => {
  say("\nstopping…");
  void shutdown(0);
});
process.on("SIGTERM", () => void shutdown(0));
process.stdout.on("error", () => void shutdown(0));
const { sim, workerUrl } = stack;
say(`GitHub simulator   ${sim.url}   (control API: ${sim.url}/_sim)`);
say(
  `switchyard Worker  ${workerUrl}   (${host === "wrangler" ? "wrangler dev" : `switchyard serve on ${host}`}; log: .tmp/demo-wrangler.log)`,
);

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
  rollupCandidates: Array<{ number: number; children: number[] }>;
  diagnostics: unknown[];
  watermarks: { lastFullReconcileAt: string | null; producer: { seq: number; at: string | null } };
};
// Every /v1 route needs a token: a simulator user with admin on the demo repositories.
const demoToken = `ghp_demo${crypto.randomUUID().replace(/-/g, "")}`;
const registered = await fetch(`${sim.url}/_sim/users`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    login: "demo-admin",
    token: demoToken,
    repos: { "acme/rocket": "admin", "acme/sdk": "admin" },
  }),
});
if (!registered.ok) throw new Error(`registering the demo user: ${registered.status}`);
// The status page's "Sign in with GitHub" signs in as the demo user on the simulator.
await fetch(`${sim.url}/_sim/oauth`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ login: "demo-admin" }),
});
const statusUrl = `${workerUrl}/repos/${REPO}`;
say(`\nStatus page: ${statusUrl}   (sign in with GitHub = the simulator's demo-admin)`);
const auth = { authorization: `Bearer ${demoToken}` };
const graph = async () => {
  const response = await fetch(`${workerUrl}/v1/repos/${REPO}/graph`, { headers: auth });
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
// The kicks that first reconcile found. The producer spends them moments later (the graph API
// then lists none pending, and no audit entry keeps them), so the story names them
// from the same rule (shared/graph/scan.ts) over the graph it seeded; the labels below are
// what the Worker's producer made of them on GitHub.
const firstKicks = scan(parseSnapshot(seeds.graph)).kicks;
say(
  `  kicks: ${firstKicks.map((k) => `#${k.target} ${k.kind} by ${k.causes.map((c) => (typeof c === "number" ? `#${c}` : c)).join(", ")}`).join("; ")}`,
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

// 7. The fleet side: a repository admin mints a fleet key; an agent claims the queue's first
// issue, comments through the fenced API, and releases it.
const admin = new FleetClient({ server: workerUrl, repo: REPO, token: demoToken });
const key = await admin.createKey({ name: "demo fleet" });
const agent = new FleetClient({ server: workerUrl, repo: REPO, token: key.key });
const queue = await agent.queue({ machine: "demo-box" });
say(`\nFleet API (key ${key.id} "${key.name}", minted by a repository admin):`);
say(`  queue: ${queue.items.map((i) => `#${i.number} (${i.reason})`).join("; ")}`);
const grant = await agent.claimNext({ agentId: "demo-agent", machine: "demo-box" });
if (grant) {
  const n = grant.issue.number;
  say(
    `  claim → #${n} ${grant.issue.title}: fence ${grant.fence}, branch ${grant.branch}, expires ${grant.expiresAt}`,
  );
  await agent.comment(n, {
    claimId: grant.claimId,
    fence: grant.fence,
    body: "demo-agent: started on this (posted through switchyard's fenced API).",
  });
  say(`  fenced comment → posted on #${n} with the App's token`);
  const released = await agent.release(n, {
    claimId: grant.claimId,
    fence: grant.fence,
    outcome: "abandoned",
    note: "demo: handing it back",
  });
  say(`  release (${released.outcome}) → #${n} is back in the queue for the next agent`);
}

say(`\nTry:
  curl ${workerUrl}/healthz
  curl -H "Authorization: Bearer ${demoToken}" ${workerUrl}/v1/repos/${REPO}/graph   # demo-admin's token on the simulator
  curl "${workerUrl}/__scheduled?cron=*/15+*+*+*+*"          # fire the reconciliation cron
  curl -X POST ${sim.url}/_sim/repos/${REPO}/issues/5/close -d '{}'   # close #5: #6 gets agent:ready
  curl -H "Authorization: Bearer ${key.key}" ${workerUrl}/v1/repos/${REPO}/queue   # the fleet key above
  SWITCHYARD_TOKEN=${key.key} npx switchyard work --server ${workerUrl} --repo ${REPO} --agent-id my-agent --once -- sh -c 'echo "working on #$SWITCHYARD_ISSUE on $SWITCHYARD_BRANCH"'
  open ${workerUrl}/docs   # the API reference
  open ${statusUrl}   # the status page: the graph, the queue, the claims`);

if (once) await shutdown(0);
else say("\nRunning. Ctrl-C stops the Worker and the simulator.");
