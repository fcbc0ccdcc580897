// shared/github on Node, Bun and Deno: the client against the in-process simulator (no
// network), App auth with a WebCrypto-made PKCS#8 key, webhook signatures and schemas.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createGitHubSimulator, simulatorFetch } from "../../infra/github-sim/app.ts";
import { exportSnapshot, seedSnapshot } from "../../infra/github-sim/seed.ts";
import { DEFAULT_CONFIG } from "../../shared/config/schema.ts";
import { GitHubClient } from "../../shared/github/client.ts";
import { fetchFileIfChanged, fetchFileText } from "../../shared/github/contents.ts";
import { fetchSnapshot, needsLabelEvents } from "../../shared/github/fetch-snapshot.ts";
import { fetchChanges } from "../../shared/github/incremental.ts";
import { CONFIG_PATH, parseWebhook } from "../../shared/github/webhooks.ts";
import { addLabels, addSubIssue, createComment } from "../../shared/github/writes.ts";
import type { Check } from "./harness.ts";

async function fixture(): Promise<unknown> {
  return JSON.parse(
    await readFile(new URL("../fixtures/github/seed-small.json", import.meta.url), "utf8"),
  );
}

function setup() {
  // "t" (the client's token) is the simulator's unrestricted user octocat.
  const sim = createGitHubSimulator({ webhookSecret: "runtime-secret", userTokens: ["t"] });
  const sleeps: number[] = [];
  const client = new GitHubClient({
    auth: { kind: "token", token: "t" },
    baseUrl: "http://sim.test",
    fetch: simulatorFetch(sim),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
  });
  return { sim, client, sleeps };
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = btoa(String.fromCharCode(...new Uint8Array(der)));
  return `-----BEGIN ${label}-----\n${b64.replace(/.{64}/g, "$&\n").replace(/\n$/, "")}\n-----END ${label}-----\n`;
}

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export const checks: Check[] = [
  {
    name: "full graph fetch returns the simulator's graph as a snapshot",
    async run() {
      const { sim, client } = setup();
      seedSnapshot(sim.state, await fixture());
      const { snapshot } = await fetchSnapshot(client, "acme/widgets", {
        now: () => new Date("2026-11-29T12:00:00Z"),
      });
      const { now, ...rest } = snapshot;
      assert.equal(now, "2026-11-29T12:00:00Z");
      const expected = exportSnapshot(sim.state, "acme", "widgets", {
        labelEventsFor: (i) => needsLabelEvents(i.labels, DEFAULT_CONFIG.labels),
      });
      assert.deepEqual(JSON.parse(JSON.stringify(rest)), JSON.parse(JSON.stringify(expected)));
      assert.equal(sim.counter.snapshot().total, 2); // one page + one batch of label events
    },
  },
  {
    name: "incremental reconcile answers 304 for free when nothing changed",
    async run() {
      const { sim, client } = setup();
      seedSnapshot(sim.state, await fixture());
      const first = await fetchChanges(client, "acme/widgets", {
        since: "2026-11-01T00:00:00Z",
        etag: null,
        boundary: [],
      });
      assert.equal(first.changed, true);
      const settle = await fetchChanges(client, "acme/widgets", first.watermark);
      const billed = sim.counter.snapshot().rateLimited;
      const steady = await fetchChanges(client, "acme/widgets", settle.watermark);
      assert.equal(steady.notModified, true);
      assert.equal(sim.counter.snapshot().rateLimited, billed);
    },
  },
  {
    name: "writes apply once; a 500 on an idempotent write is retried, a comment is not",
    async run() {
      const { sim, client, sleeps } = setup();
      seedSnapshot(sim.state, await fixture());
      sim.faults.set({
        requests: [
          {
            method: "POST",
            path: "/repos/acme/widgets/issues/1/labels",
            status: 500,
            phase: "after",
          },
          {
            method: "POST",
            path: "/repos/acme/widgets/issues/1/comments",
            status: 500,
            phase: "after",
          },
        ],
      });
      await addLabels(client, "acme/widgets", 1, ["agent:ready"]);
      assert.deepEqual(sleeps, [375]);
      await assert.rejects(
        createComment(client, "acme/widgets", 1, "once"),
        /may or may not have been applied/,
      );
      await addSubIssue(client, "acme/widgets", 1, 4);
      const repo = sim.state.repo("acme", "widgets")!;
      assert.deepEqual(repo.issues.get(1)!.labels, ["epic", "agent:ready"]);
      assert.equal(repo.issues.get(1)!.comments.length, 1);
      assert.equal(repo.issues.get(4)!.parentId, repo.issues.get(1)!.id);
    },
  },
  {
    name: "GitHub App auth with a WebCrypto-generated PKCS#8 key",
    async run() {
      const keys = (await crypto.subtle.generateKey(
        {
          name: "RSASSA-PKCS1-v1_5",
          modulusLength: 2048,
          publicExponent: new Uint8Array([1, 0, 1]),
          hash: "SHA-256",
        },
        true,
        ["sign", "verify"],
      )) as CryptoKeyPair;
      const privateKey = pem(
        "PRIVATE KEY",
        await crypto.subtle.exportKey("pkcs8", keys.privateKey),
      );
      const publicKey = pem("PUBLIC KEY", await crypto.subtle.exportKey("spki", keys.publicKey));
      const sim = createGitHubSimulator({ appId: 9, appPublicKey: publicKey });
      seedSnapshot(sim.state, await fixture());
      const installation = sim.state.install("acme", ["widgets"], "octocat");
      const client = new GitHubClient({
        auth: { kind: "app", appId: 9, privateKey, installationId: installation.id },
        baseUrl: "http://sim.test",
        fetch: simulatorFetch(sim),
      });
      const { snapshot } = await fetchSnapshot(client, "acme/widgets");
      assert.equal(snapshot.issues.length, 5);
      await fetchSnapshot(client, "acme/widgets");
      assert.equal(sim.tokens.issued, 1);
    },
  },
  {
    name: "webhooks are signed with HMAC-SHA256 and pass switchyard's schemas",
    async run() {
      const { sim } = setup();
      seedSnapshot(sim.state, await fixture());
      const inst = sim.state.install("acme", ["widgets"], "octocat");
      const repo = sim.state.repo("acme", "widgets")!;
      sim.state.closeIssue(repo.issues.get(3)!, "completed", "alice");
      const deliveries = await sim.webhooks.drain();
      assert.deepEqual(
        deliveries.map((d) => `${d.event}.${d.action}`),
        ["installation.created", "issues.closed"],
      );
      const closed = deliveries[1]!;
      const key = await crypto.subtle.importKey(
        "raw",
        new TextEncoder().encode("runtime-secret"),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"],
      );
      const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(closed.body));
      assert.equal(closed.headers["x-hub-signature-256"], `sha256=${hex(mac)}`);
      const parsed = parseWebhook("issues", JSON.parse(closed.body));
      assert.equal(parsed.kind, "handled");
      const payload = parsed.kind === "handled" ? parsed.payload : {};
      assert.deepEqual(payload.installation, { id: inst.id });
    },
  },
  {
    name: "a config file pushed through the control API is read back, then answered 304",
    async run() {
      const { sim, client } = setup();
      const seeded = await sim.fetch(
        new Request("http://sim.test/_sim/seed", {
          method: "POST",
          body: JSON.stringify({ snapshot: await fixture() }),
        }),
      );
      assert.equal(seeded.status, 200);
      assert.equal(await fetchFileText(client, "acme/widgets", CONFIG_PATH), null);
      const text = "queue:\n  mode: all # ✓\n";
      const put = await sim.fetch(
        new Request(`http://sim.test/_sim/repos/acme/widgets/contents/${CONFIG_PATH}`, {
          method: "PUT",
          body: JSON.stringify({ text, actor: "alice" }),
        }),
      );
      assert.equal(put.status, 200);
      const push = (await sim.webhooks.drain()).find((d) => d.event === "push");
      assert.ok(push, "a push webhook was emitted");
      assert.equal(parseWebhook("push", JSON.parse(push.body)).kind, "handled");
      const found = await fetchFileIfChanged(client, "acme/widgets", CONFIG_PATH);
      assert.equal(found.status, "found");
      assert.equal(found.status === "found" && found.text, text);
      const etag = found.status === "found" ? found.etag : null;
      const again = await fetchFileIfChanged(client, "acme/widgets", CONFIG_PATH, { etag });
      assert.deepEqual(again, { status: "not-modified", etag });
    },
  },
];
