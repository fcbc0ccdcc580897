// shared/status on Node, Bun and Deno: the graph picture and the repository page are the same
// bytes on every runtime (the Worker and the portable host render one page), and session
// cookies made on one open on another's rules (WebCrypto HKDF, HMAC-SHA-256, AES-GCM).
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { sha256Hex } from "../../shared/auth/hash.ts";
import { DEFAULT_CONFIG } from "../../shared/config/schema.ts";
import { scan } from "../../shared/graph/scan.ts";
import { parseSnapshot } from "../../shared/graph/snapshot.ts";
import { repoPage } from "../../shared/status/page.ts";
import { pictureOf } from "../../shared/status/picture-compact.ts";
import { signSession, verifySession } from "../../shared/status/session.ts";
import { renderGraphSvg } from "../../shared/status/svg.ts";
import { type GraphRead, repoPageModel } from "../../shared/status/view.ts";
import type { Check } from "./harness.ts";

const demo = parseSnapshot(
  JSON.parse(await readFile(new URL("../../infra/demo/snapshot.json", import.meta.url), "utf8")),
);
const issueUrl = (n: number) => `https://github.com/acme/rocket/issues/${n}`;
const NOW = Date.parse(demo.now!);

/**
 * The digests Node gives; every runtime must give the same bytes. A deliberate change of the
 * picture or the page changes them: run this file under Node and take the new digests.
 */
const SVG_SHA256 = "4d782910b84eedab0e02d7524d020e58d2ff5b647b1865b84c58197856f6d0bb";
const PAGE_SHA256 = "4b427db07adf4258136a4d7e6100b0190b4672b22e5b1d1569257ce54fc1a66e";

function page(): Promise<string> {
  const graph = {
    ...scan(demo, {}),
    watermarks: { lastFullReconcileAt: demo.now, producer: { seq: 1, at: demo.now } },
    config: { status: { error: null, at: demo.now! }, effective: DEFAULT_CONFIG },
    repository: { archived: false, private: true, writes: "on" },
    parkedWritesCount: 0,
    reconcile: null,
    // The queue policy: a red breaker (its pause) and priority labels.
    breaker: {
      state: "red",
      reason: null,
      head: { sha: "a".repeat(40), since: demo.now! },
      paused: {
        since: demo.now!,
        sha: "a".repeat(40),
        failing: [{ name: "build", url: "https://github.com/o/r/runs/1" }],
      },
      pending: [],
    },
    priority: { labels: { P1: 1, P0: 0 }, project: null },
    // A person's answer waits for an agent, and one agent is answering it.
    replies: [
      {
        number: 5,
        reason: "unanswered-human-comment",
        url: "https://github.com/acme/rocket/issues/5#issuecomment-501",
        author: "octocat",
        at: demo.now!,
        claim: { agentId: "sweep-1", kind: "reply", until: demo.now! },
      },
    ],
    pages: { replies: { total: 2 } },
    // Large installations: the first reconcile waits in the installation's line.
    firstReconcile: { state: "waiting", position: 3 },
    installation: {
      reconciled: 1200,
      waiting: 40,
      inFlight: 10,
      usedThisHour: 4321,
      budgetPerHour: 11_250,
      etaMs: 2 * 3_600_000,
    },
  } as GraphRead;
  const model = repoPageModel({
    graph,
    status: {
      picture: pictureOf(demo, DEFAULT_CONFIG, {
        queued: new Set([5]),
        claimed: new Set([9]),
        stuck: new Set(),
      }),
      queue: {
        total: 1,
        items: [
          { number: 5, title: "Set up", reason: "kick: x", attempts: 0, priority: 1, paused: true },
        ],
      },
      claims: [],
      deadLetters: [],
      // A fenced write record still open keeps its issue from a grant.
      writes: [
        {
          number: 9,
          agentId: "agent-1",
          fence: 7,
          kind: "comment",
          deadline: demo.now!,
          closesAt: demo.now!,
          outcome: null,
        },
      ],
      ended: [{ grantedMs: NOW - 600_000, endedMs: NOW - 60_000, outcome: "done" }],
      audit: [{ seq: 1, at: demo.now!, kind: "claim", detail: { number: 9 } }],
    },
    htmlBase: "https://github.com",
    viewer: "octocat",
    nowMs: NOW,
  });
  return Promise.resolve(repoPage(model)).then(String);
}

export const checks: Check[] = [
  {
    name: "the demo graph's picture is the same bytes on every runtime",
    async run() {
      const svg = renderGraphSvg(pictureOf(demo, DEFAULT_CONFIG), { issueUrl });
      assert.equal((svg.match(/<a class="node"/g) ?? []).length, demo.issues.length);
      assert.equal(await sha256Hex(svg), SVG_SHA256);
    },
  },
  {
    name: "the repository page is the same bytes on every runtime",
    async run() {
      const text = await page();
      // The sections the digest covers, rendered at all (writes in flight, the install's pacing,
      // who waits for an agent's answer).
      assert.match(text, /Writes in flight \(1\)/);
      assert.match(text, /3rd in line/);
      assert.match(text, /1,200 of 1,250 repositories reconciled/);
      assert.match(text, /Waiting for an agent&#39;s answer \(2\)/);
      assert.equal(await sha256Hex(text), PAGE_SHA256);
    },
  },
  {
    name: "session cookies open, and refuse tampering and expiry",
    async run() {
      const secret = "runtime-session-secret-0123456789abcdef";
      const user = { login: "octocat", userId: 1, token: "ghu_runtime" };
      const { value, expiresMs } = await signSession(user, secret, NOW, 60_000);
      assert.deepEqual(await verifySession(value, secret, NOW), {
        ok: true,
        session: { ...user, expiresMs },
      });
      const [payload, mac] = value.split(".") as [string, string];
      assert.deepEqual(await verifySession(`${payload}A.${mac}`, secret, NOW), {
        ok: false,
        reason: "bad-signature",
      });
      assert.deepEqual(await verifySession(value, secret, expiresMs), {
        ok: false,
        reason: "expired",
      });
    },
  },
];
