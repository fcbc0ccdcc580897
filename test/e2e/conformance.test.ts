// The host conformance suite (issue 12): one set of scenarios, written once, run against every
// host the Worker runs on: `wrangler dev` (workerd, real Durable Objects with local persistence)
// and the portable host (`switchyard serve`, functions/serve.ts) under Node, Bun and Deno. Each
// host gets its own GitHub simulator and its own storage (infra/local-stack.ts) and is driven
// only through public HTTP surfaces: webhooks with real HMAC signatures, the /v1 fleet API with
// keys, the simulator's control API, and `/__scheduled` (both hosts start with
// `--test-scheduled`). The hosts run side by side (their scenarios in order within each host),
// so the file takes about as long as its slowest host.
//
// Scenarios, in order, on one stack per host:
//   the story (install → full reconcile → producer labels),
//   ingress corpora (test/support/ingress-corpus.ts, shared with test/worker/ingress.test.ts),
//   claims (grant, 409 conflict, fence growth, stale-fence writes refused; a 60 s claim on
//   acme/sdk left to expire),
//   restart in the middle (SIGKILL of the whole process tree with a fleet write pending:
//   graph, claims, fences survive and the pending alarm fires with no request),
//   expiry by alarm (the acme/sdk claim ends and its label goes with no request reaching that
//   repository's object since the restart),
//   the story's end (a close reaching `agent:ready`),
//   the cron (an incremental reconcile), the corpora's payload correctly signed (applied once:
//   the control that shows the corpora could have changed the graph), and a clean stop.
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoSeeds } from "../../infra/demo/seeds.ts";
import { seedSnapshot } from "../../infra/github-sim/seed.ts";
import {
  type LocalHost,
  type LocalStack,
  root,
  startLocalStack,
  waitFor,
} from "../../infra/local-stack.ts";
import { FleetApiError, FleetClient } from "../../shared/fleet/client.ts";
import type { ClaimGrant } from "../../shared/fleet/schemas.ts";
import { signBody } from "../../shared/webhooks/signature.ts";
import {
  issuesOpened,
  payloadCorpus,
  signatureCorpus,
  webhookHeaders,
} from "../support/ingress-corpus.ts";
import { spawnCollect } from "../support/runtimes.ts";

const HOSTS: LocalHost[] = ["wrangler", "node", "bun", "deno"];
// The machine is shared and loaded: starting wrangler dev alone can take a minute.
const HOOK_TIMEOUT = 240_000;
const STEP_TIMEOUT = 180_000;
// A fleet write (the `agent:processing` label) waits this long in the object's alarm: long
// enough to kill the host between a claim and its write.
const FLEET_WRITE_DELAY_MS = 4_000;

type Graph = {
  ready: number[];
  stats: Record<string, number>;
  watermarks: {
    lastFullReconcileAt: string | null;
    incremental: { at: string } | null;
    producer: { seq: number; at: string | null };
  };
};

/** The error a fleet call failed with (it must fail). */
async function refusal(call: Promise<unknown>): Promise<FleetApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FleetApiError);
  return error as FleetApiError;
}

describe.concurrent.each(HOSTS)("host conformance on %s", (host) => {
  // One stack per host; the scenarios below run in order on it (`concurrent: false`), while
  // the hosts run side by side.
  const step = (name: string, fn: () => Promise<void>) =>
    it(name, { concurrent: false, timeout: STEP_TIMEOUT }, fn);
  const name = `conformance-${host}`;
  let stack: LocalStack;
  let closed: Promise<number | null> | undefined;
  const close = () => {
    closed ??= stack.close();
    return closed;
  };
  const token = `ghp_conf${crypto.randomUUID().replace(/-/g, "")}`;
  const state = () => stack.sim.sim.state;
  const repo = (r: "rocket" | "sdk") => state().requireRepo("acme", r);
  const labels = (r: "rocket" | "sdk", n: number) => state().requireIssue(repo(r), n).labels;
  const labeled = () =>
    [...repo("rocket").issues.values()]
      .filter((i) => i.labels.includes("agent:ready"))
      .map((i) => i.number)
      .sort((a, b) => a - b);
  const graph = async () => {
    const response = await fetch(`${stack.workerUrl}/v1/repos/acme/rocket/graph`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return response.ok ? ((await response.json()) as Graph) : undefined;
  };
  /**
   * The corpora's well-formed payload: `issues.opened` for acme/rocket, from its installation,
   * about an issue the graph does not have (a payload wrongly taken would add #9001).
   */
  const corpusPayload = () => {
    const rocket = repo("rocket");
    const installationId = state().installationFor(rocket)?.id;
    expect(installationId).toBeDefined();
    const payload = issuesOpened(rocket.id, "acme/rocket", installationId);
    payload.issue.number = 9001;
    return payload;
  };
  /** An agent's client for `repo`, with a fleet key minted by the admin. */
  const agent = async (r: "rocket" | "sdk") => {
    const admin = new FleetClient({ server: stack.workerUrl, repo: `acme/${r}`, token });
    const key = await admin.createKey({ name: `conformance ${host}` });
    return new FleetClient({ server: stack.workerUrl, repo: `acme/${r}`, token: key.key });
  };

  beforeAll(async () => {
    stack = await startLocalStack(name, {
      host,
      vars: { FLEET_WRITE_DELAY_MS: String(FLEET_WRITE_DELAY_MS) },
    });
  }, HOOK_TIMEOUT);
  afterAll(async () => {
    if (stack) await close();
  }, HOOK_TIMEOUT);

  // Shared between steps (they run in order).
  let first: Graph;
  let rocketAgent: FleetClient;
  let held: ClaimGrant; // acme/rocket, held across the restart
  let pending: ClaimGrant; // acme/rocket, its fleet write pending at the restart
  let expiring: ClaimGrant; // acme/sdk, 60 s, left to expire
  let sdkAgent: FleetClient;

  step("the story: install, full reconcile, producer labels", async () => {
    stack.sim.sim.webhooks.pushUrl = `${stack.workerUrl}/webhooks/github`;
    const seeds = await demoSeeds(Date.now());
    seedSnapshot(state(), seeds.sdk);
    seedSnapshot(state(), seeds.rocket);
    state().install("acme", ["sdk", "rocket"], "octocat");
    const registered = await fetch(`${stack.sim.url}/_sim/users`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        login: "conformance-admin",
        token,
        repos: { "acme/rocket": "admin", "acme/sdk": "admin" },
      }),
    });
    expect(registered.ok).toBe(true);
    first = await waitFor(
      "the first reconcile and producer run",
      async () => {
        const g = await graph();
        return g?.watermarks.lastFullReconcileAt && g.watermarks.producer.at ? g : undefined;
      },
      120_000,
    );
    // The demo's story (the same as `npm start`, test/e2e/demo.test.ts).
    expect(first.ready).toEqual([4, 5, 9, 11, 15]);
    await waitFor("the producer's labels on GitHub", async () =>
      labeled().includes(9) && labeled().includes(15) ? true : undefined,
    );
    if (host !== "wrangler") {
      // One SQLite file per object under the data directory (docs/self-hosting.md).
      const files = readdirSync(`${root}.tmp/${name}-state/objects/RepoObject`);
      expect(files.filter((f) => f.endsWith(".sqlite")).length).toBe(2);
    }
  });

  step("ingress: the signature and payload corpora are refused and change nothing", async () => {
    const valid = corpusPayload;
    const body = JSON.stringify(valid());
    const post = (headers: Record<string, string>, sent: string | Uint8Array<ArrayBuffer>) =>
      fetch(`${stack.workerUrl}/webhooks/github`, { method: "POST", headers, body: sent });
    const before = await graph();

    const signatures = signatureCorpus(stack.webhookSecret, body);
    expect(signatures.length).toBeGreaterThanOrEqual(20);
    for (const [caseName, make] of signatures) {
      const { signature, body: sent } = await make();
      const response = await post(webhookHeaders("issues", signature), sent ?? body);
      expect(response.status, caseName).toBe(401);
      expect(await response.json(), caseName).toEqual({
        error: "missing or invalid X-Hub-Signature-256",
      });
    }

    const payloads = payloadCorpus(valid);
    expect(payloads.length).toBeGreaterThanOrEqual(30);
    for (const [caseName, event, sent, statuses] of payloads) {
      const bytes =
        typeof sent === "string"
          ? (new TextEncoder().encode(sent) as Uint8Array<ArrayBuffer>)
          : sent;
      const response = await post(
        webhookHeaders(event, await signBody(stack.webhookSecret, bytes)),
        bytes,
      );
      expect(statuses, caseName).toContain(response.status);
      const answer = (await response.json()) as { error?: string };
      if (response.status === 400) expect(answer.error, caseName).toContain(event);
    }

    // A body over the limit: 413, whatever its signature.
    const big = JSON.stringify({ ...valid(), padding: "x".repeat(1024 * 1024) });
    const tooBig = await post(
      webhookHeaders("issues", await signBody(stack.webhookSecret, big)),
      big,
    );
    expect(tooBig.status).toBe(413);

    // Nothing reached the graph: a wrongly taken `issues.opened` would have added #9001.
    const after = await graph();
    expect(before?.stats.issues).toBeGreaterThan(0);
    expect(after?.stats).toEqual(before?.stats);
    expect(after?.ready).toEqual(before?.ready);
  });

  step("claims: grant, 409 conflict, fence growth, stale-fence writes refused", async () => {
    rocketAgent = await agent("rocket");
    const other = await agent("rocket");
    const grant = await rocketAgent.claimNext({ agentId: "agent-1", machine: "box" });
    expect(grant).not.toBeNull();
    const n = grant!.issue.number;
    expect(first.ready).toContain(n);

    // Held: another agent is refused with 409 and told who holds it.
    const conflict = await refusal(other.claim(n, { agentId: "agent-2" }));
    expect(conflict.status).toBe(409);
    expect(conflict.reason).toBe("held");
    expect(conflict.holder?.agentId).toBe("agent-1");

    // A fenced write with the current fence is taken.
    await expect(
      rocketAgent.comment(n, { claimId: grant!.claimId, fence: grant!.fence, body: "on it" }),
    ).resolves.toBeDefined();

    // Released and claimed again: the fence grows; the old fence's writes are refused.
    await rocketAgent.release(n, {
      claimId: grant!.claimId,
      fence: grant!.fence,
      outcome: "abandoned",
    });
    held = await other.claim(n, { agentId: "agent-2" });
    expect(held.fence).toBeGreaterThan(grant!.fence);
    const stale = await refusal(
      rocketAgent.comment(n, { claimId: grant!.claimId, fence: grant!.fence, body: "late" }),
    );
    expect(stale.status).toBe(409);
    expect(stale.error).toBe("stale-fence");
    const staleLabel = await refusal(
      other.labels(n, { claimId: held.claimId, fence: held.fence - 1, add: ["late"] }),
    );
    expect(staleLabel.status).toBe(409);
    expect(labels("rocket", n)).not.toContain("late");
    rocketAgent = other;

    // The shortest claim there is (60 s) on the other repository, whose agent then vanishes:
    // only the object's alarm can end it (checked after the restart, below).
    sdkAgent = await agent("sdk");
    const open = [...repo("sdk").issues.values()].find((i) => i.state === "open");
    expect(open).toBeDefined();
    expiring = await sdkAgent.claim(open!.number, { agentId: "agent-gone", ttlSeconds: 60 });
    await waitFor("the sdk claim's processing label", async () =>
      labels("sdk", expiring.issue.number).includes("agent:processing") ? true : undefined,
    );
  });

  step("restart in the middle: graph, claims, fences and a pending alarm survive", async () => {
    // A claim whose fleet write (the `agent:processing` label) is still waiting in its alarm.
    pending = (await rocketAgent.claimNext({ agentId: "agent-3", machine: "box" }))!;
    expect(pending).not.toBeNull();
    const n = pending.issue.number;
    expect(labels("rocket", n)).not.toContain("agent:processing");
    const pidBefore = stack.workerPid();

    // A crash: SIGKILL of the whole process tree, then a start on the same port and storage.
    await stack.restartWorker();
    expect(stack.workerPid()).not.toBe(pidBefore);

    // The alarm armed before the crash fires with no request reaching the object.
    await waitFor(
      "the pending fleet write after the restart",
      async () => (labels("rocket", n).includes("agent:processing") ? true : undefined),
      90_000,
    );

    // The graph survived (both claimed issues have left `ready`), its watermarks too.
    const after = await graph();
    expect(after?.watermarks.lastFullReconcileAt).toBe(first.watermarks.lastFullReconcileAt);
    expect(after?.ready).toEqual(first.ready.filter((i) => i !== n && i !== held.issue.number));
    // The claims survived, with their fences: the right fence heartbeats, a stale one does not.
    const claims = await rocketAgent.claims();
    expect(JSON.stringify(claims)).toContain(held.claimId);
    expect(JSON.stringify(claims)).toContain(pending.claimId);
    await expect(
      rocketAgent.heartbeat(held.issue.number, { claimId: held.claimId, fence: held.fence }),
    ).resolves.toBeDefined();
    const stale = await refusal(
      rocketAgent.heartbeat(held.issue.number, { claimId: held.claimId, fence: held.fence - 1 }),
    );
    expect(stale.status).toBe(409);
    // The fence counter survived: the next claim of the issue gets a larger fence.
    await rocketAgent.release(held.issue.number, {
      claimId: held.claimId,
      fence: held.fence,
      outcome: "abandoned",
    });
    const again = await rocketAgent.claim(held.issue.number, { agentId: "agent-4" });
    expect(again.fence).toBeGreaterThan(held.fence);
    await rocketAgent.release(held.issue.number, {
      claimId: again.claimId,
      fence: again.fence,
      outcome: "abandoned",
    });
  });

  step("claims: expiry by alarm, with no request reaching the object", async () => {
    // Nothing has asked acme/sdk's object anything since the restart: only its stored alarm,
    // re-armed at start, can end the claim and take the label off on GitHub.
    const n = expiring.issue.number;
    await waitFor(
      "the claim's expiry to remove the processing label",
      async () => (labels("sdk", n).includes("agent:processing") ? undefined : true),
      120_000,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiring.expiresAt));
    const gone = await refusal(
      sdkAgent.heartbeat(n, { claimId: expiring.claimId, fence: expiring.fence }),
    );
    expect(gone.status).toBe(409);
  });

  step("the story's end: a close on GitHub reaches agent:ready", async () => {
    // The last open sub-issue of #1 closes on GitHub; its webhook reaches the restarted host.
    expect(labeled()).not.toContain(1);
    state().closeIssue(state().requireIssue(repo("rocket"), 4), "completed", "octocat");
    await waitFor("the kick to reach agent:ready", async () =>
      labeled().includes(1) ? true : undefined,
    );
  });

  step("the cron: an incremental reconcile", async () => {
    const before = (await graph())?.watermarks.incremental?.at ?? null;
    const fired = await fetch(`${stack.workerUrl}/__scheduled?cron=*/15+*+*+*+*`);
    expect(fired.status).toBe(200);
    await waitFor("the cron's incremental reconcile", async () => {
      const at = (await graph())?.watermarks.incremental?.at ?? null;
      return at !== null && at !== before ? true : undefined;
    });
  });

  step("ingress: the corpus's payload, correctly signed, is applied once", async () => {
    // The control for the corpora above: the very payload they mangled, signed right, changes
    // the graph, and its replay (same delivery id) is a duplicate.
    const body = JSON.stringify(corpusPayload());
    const headers = webhookHeaders("issues", await signBody(stack.webhookSecret, body));
    const before = await graph();
    const post = () =>
      fetch(`${stack.workerUrl}/webhooks/github`, { method: "POST", headers, body });
    const applied = await post();
    expect(applied.status).toBe(200);
    expect(await applied.json()).toEqual({ status: "applied" });
    const replayed = await post();
    expect(replayed.status).toBe(200);
    expect(await replayed.json()).toEqual({ status: "duplicate" });
    expect((await graph())?.stats.issues).toBe((before?.stats.issues ?? 0) + 1);
  });

  step("a clean stop", async () => {
    const code = await close();
    if (host === "wrangler") return; // wrangler's own exit is not the Worker's
    // The portable host finishes in-flight work, closes its databases and exits 0.
    expect(code).toBe(0);
    expect(readFileSync(`${root}.tmp/${name}-wrangler.log`, "utf8")).toContain(
      "switchyard serve: stopped",
    );
  });
});

describe.concurrent("npm start -- --host (the demo on the portable host)", () => {
  it("tells the same story on node as on wrangler dev", { timeout: STEP_TIMEOUT }, async () => {
    const run = await spawnCollect(process.execPath, ["infra/dev.ts", "--once", "--host", "node"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("switchyard serve on node");
    expect(run.stdout).toMatch(/ready: +#4 #5 #9 #11 #15/);
    expect(run.stdout).toContain("#1 Launch checklist for v1 is now agent:ready.");
    expect(run.stdout).toMatch(/queue \(agent:ready\): #1 #9 #13 #15/);
    expect(run.stdout).toMatch(/claim → #\d+ .+: fence \d+, branch issue\/\d+-/);
    expect(run.stdout).toContain("release (abandoned)");
    expect(run.stdout).toMatch(/claim-next kinds \[reply\] → #10 Rewrite billing: kind reply/);
    expect(run.stdout).toMatch(/org claim-next \(turn \d\) → acme\/sdk#42 Ship SDK v3/);
    expect(run.stdout).toMatch(/→ working on acme\/\w+#\d+ \(issue\/\d+-\S+\); released done/);
  });

  it("refuses an unknown host", { timeout: STEP_TIMEOUT }, async () => {
    const run = await spawnCollect(process.execPath, ["infra/dev.ts", "--once", "--host", "cloud"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--host must be wrangler, node, bun or deno");
  });
});
