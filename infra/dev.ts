#!/usr/bin/env node
// `npm start`: the whole system offline. The GitHub simulator (seeded with the demo
// repositories) and the Worker under `wrangler dev` (local Durable Object storage), the App
// "installed", the first reconcile and producer run, then one issue closed so a kick reaches
// `agent:ready`; then a fleet agent claims work, a person's answer to an agent becomes a `reply`
// item another agent claims, and an owner key claims across acme's repositories.
// `--once` stops after the story (used by the tests); otherwise Ctrl-C stops all.

import { execFile } from "node:child_process";
import process from "node:process";
import { promisify } from "node:util";
import { FleetClient } from "../shared/fleet/client.ts";
import { OrgFleetClient } from "../shared/fleet/org-client.ts";
import { scan } from "../shared/graph/scan.ts";
import { parseSnapshot } from "../shared/graph/snapshot.ts";
import { demoQuestion, demoSeeds } from "./demo/seeds.ts";
import { seedSnapshot } from "./github-sim/seed.ts";
import { type LocalHost, root, startLocalStack, waitFor } from "./local-stack.ts";

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
async function post(url: string, body: unknown, token?: string): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

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
// Before the install, an agent asked a question on a held issue (no webhook: GitHub tells the
// App nothing about repositories it is not installed on).
const rocketRepo = sim.sim.state.requireRepo("acme", "rocket");
const asked = sim.sim.state.addComment(
  sim.sim.state.requireIssue(rocketRepo, demoQuestion.issue),
  demoQuestion.question,
  demoQuestion.agent,
);
asked.createdAt = asked.updatedAt = new Date(Date.now() - 3_600_000)
  .toISOString()
  .replace(/\.\d{3}Z$/, "Z");
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

// 8. A person answers an agent (issue 22): alice, who has write access, answers the question the
// agent asked on the held #10. The comment's webhook makes it a `reply` item (people with write
// access wake agents; a stranger's comment would not), which an agent claims with
// `kinds: ["reply"]` and releases `done`: answered until alice says more.
await post(`${sim.url}/_sim/users`, {
  login: demoQuestion.person,
  token: `ghp_alice${crypto.randomUUID().replace(/-/g, "")}`,
  repos: { [REPO]: "write" },
});
say(
  `\nReplies: ${demoQuestion.agent} asked on ${show(demoQuestion.issue)} (agent:hold) an hour ago:`,
);
say(`  "${demoQuestion.question}"`);
const answered = Date.now();
await post(`${sim.url}/_sim/repos/${REPO}/issues/${demoQuestion.issue}/comments`, {
  body: demoQuestion.answer,
  actor: demoQuestion.person,
});
say(`  ${demoQuestion.person} (write access) answers on GitHub: "${demoQuestion.answer}"`);
const replies = await waitFor(
  "the answer to become a reply item",
  async () => {
    const q = await agent.queue({ kinds: ["reply"] });
    return q.items.some((i) => i.number === demoQuestion.issue) ? q : undefined;
  },
  30_000,
);
say(
  `  webhook issue_comment.created → queue?kinds=reply in ${((Date.now() - answered) / 1000).toFixed(1)} s: ${replies.items.map((i) => `#${i.number} (${i.reason})`).join("; ")}`,
);
const answering = await agent.claimNext({
  agentId: "demo-sweeper",
  machine: "demo-box",
  kinds: ["reply"],
});
if (!answering) throw new Error(`claim-next with kinds [reply] found no work`);
say(
  `  claim-next kinds [reply] → #${answering.issue.number} ${answering.issue.title}: kind ${answering.kind}, fence ${answering.fence}, answering ${answering.issue.reply?.url ?? "?"}`,
);
await agent.comment(answering.issue.number, {
  claimId: answering.claimId,
  fence: answering.fence,
  body: "demo-sweeper: Stripe only, noted in the plan; Adyen stays out of the rewrite.",
});
await agent.release(answering.issue.number, {
  claimId: answering.claimId,
  fence: answering.fence,
  outcome: "done",
});
const left = await agent.queue({ kinds: ["reply"] });
say(
  `  fenced answer posted, release (done) → queue?kinds=reply: ${left.items.length === 0 ? "empty" : left.items.map((i) => `#${i.number}`).join(" ")} (until ${demoQuestion.person} says more; #${demoQuestion.issue} stays on hold)`,
);

// 9. One queue for acme (issue 23): an owner of the organization mints an owner key; one
// claim-next across every installed repository of acme takes acme/sdk's ready work (the
// repositories take turns for each agent), released on that repository's own routes; then
// `switchyard work --org acme` does the same around a shell command.
await post(`${sim.url}/_sim/orgs/acme/members`, { login: "demo-admin", role: "admin" });
const ownerKey = (await post(
  `${workerUrl}/v1/orgs/acme/keys`,
  { name: "demo org fleet" },
  demoToken,
)) as { id: string; name: string; key: string };
const org = new OrgFleetClient({ server: workerUrl, owner: "acme", token: ownerKey.key });
// Each repository's object pushes the head of its queue to the owner's object.
const orgQueue = await waitFor(
  "acme/sdk's work in the org queue",
  async () => {
    const q = await org.queue();
    return q.items.some((i) => i.repo === "acme/sdk") ? q : undefined;
  },
  30_000,
);
say(
  `\nOne queue for acme (owner key ${ownerKey.id} "${ownerKey.name}", minted by an owner of acme):`,
);
say(
  `  org queue (${orgQueue.order}): ${orgQueue.items.map((i) => `${i.repo}#${i.number} (${i.reason})`).join("; ")}`,
);
// Two turns of one agent: the repositories take turns (order=fair), so one of them is acme/sdk's.
for (let turn = 1; turn <= 2; turn++) {
  const orgGrant = await org.claimNext({ agentId: "demo-org-agent", machine: "demo-box" });
  if (!orgGrant) throw new Error("the org claim-next found no work");
  say(
    `  org claim-next (turn ${turn}) → ${orgGrant.repo}#${orgGrant.issue.number} ${orgGrant.issue.title}: fence ${orgGrant.fence}, branch ${orgGrant.branch}`,
  );
  const orgReleased = await org.forRepo(orgGrant.repo).release(orgGrant.issue.number, {
    claimId: orgGrant.claimId,
    fence: orgGrant.fence,
    outcome: "abandoned",
    note: "demo: handing it back",
  });
  say(
    `    release (${orgReleased.outcome}) on ${orgGrant.repo}'s own route → back in acme's queue`,
  );
}
const command = 'echo "working on $SWITCHYARD_REPO#$SWITCHYARD_ISSUE ($SWITCHYARD_BRANCH)"';
const workFlags = ["--org", "acme", "--agent-id", "demo-org-worker", "--once"];
const worked = await promisify(execFile)(
  process.execPath,
  ["functions/cli/bin.js", "work", "--server", workerUrl, ...workFlags, "--", "sh", "-c", command],
  { cwd: root, env: { ...process.env, SWITCHYARD_TOKEN: ownerKey.key }, timeout: 60_000 },
);
say(`  switchyard work ${workFlags.join(" ")} -- sh -c '${command}'`);
// It reports what it does as JSON lines on stderr (README, "switchyard work").
const events = worked.stderr
  .split("\n")
  .filter((l) => l.startsWith("{"))
  .map((l) => JSON.parse(l) as { event: string; outcome?: string });
const workRelease = events.find((e) => e.event === "released");
say(`    → ${worked.stdout.trim()}; released ${workRelease?.outcome ?? "(not released)"}`);

say(`\nTry:
  curl ${workerUrl}/healthz
  curl -H "Authorization: Bearer ${demoToken}" ${workerUrl}/v1/repos/${REPO}/graph   # demo-admin's token on the simulator
  curl "${workerUrl}/__scheduled?cron=*/15+*+*+*+*"          # fire the reconciliation cron
  curl -X POST ${sim.url}/_sim/repos/${REPO}/issues/5/close -d '{}'   # close #5: #6 gets agent:ready
  curl -H "Authorization: Bearer ${key.key}" ${workerUrl}/v1/repos/${REPO}/queue   # the fleet key above
  SWITCHYARD_TOKEN=${key.key} npx switchyard work --server ${workerUrl} --repo ${REPO} --agent-id my-agent --once -- sh -c 'echo "working on #$SWITCHYARD_ISSUE on $SWITCHYARD_BRANCH"'
  SWITCHYARD_TOKEN=${ownerKey.key} npx switchyard work --server ${workerUrl} --org acme --agent-id my-agent --once -- sh -c 'echo "working on $SWITCHYARD_REPO#$SWITCHYARD_ISSUE"'   # the owner key: all of acme
  SWITCHYARD_TOKEN=${key.key} npx switchyard work --server ${workerUrl} --repo ${REPO} --kinds reply --agent-id sweeper --once -- sh -c 'echo "answer $SWITCHYARD_REPLY_URL"'   # people's answers to agents
  open ${workerUrl}/docs   # the API reference
  open ${statusUrl}   # the status page: the graph, the queue, the claims`);

if (once) await shutdown(0);
else say("\nRunning. Ctrl-C stops the Worker and the simulator.");
