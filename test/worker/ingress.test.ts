// Webhook ingress (spec 6.1): hostile signatures and payloads are refused without a 5xx and
// without touching storage; a valid delivery is applied once.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { directory } from "../../functions/objects/directory/directory-object.ts";
import { signBody } from "../../shared/webhooks/signature.ts";
import {
  webhookHeaders as headers,
  issuesOpened,
  payloadCorpus,
  signatureCorpus,
} from "../support/ingress-corpus.ts";
import { WEBHOOK_SECRET } from "./global-setup.ts";
import { postWebhook, repoStub, seed, seedIssue } from "./helpers.ts";

const encoder = new TextEncoder();
let nextRepo = 70_000;

/** Nothing about this repository was stored: no directory entry, no state in its object. */
async function untouched(repoId: number) {
  expect(await directory(env).get(repoId)).toBeNull();
  const status = await repoStub(repoId).status();
  expect(status.identity).toBeNull();
  expect(status.schedules).toEqual([]);
}

describe("signature corpus", () => {
  const id = nextRepo++;
  const body = JSON.stringify(issuesOpened(id));
  const cases = signatureCorpus(WEBHOOK_SECRET, body);

  it.each(cases)("%s: 401, nothing stored", async (_name, make) => {
    const { signature, body: sent } = await make();
    const response = await postWebhook(headers("issues", signature), sent ?? body);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: "missing or invalid X-Hub-Signature-256" });
    await untouched(id);
  });

  it("a replayed valid delivery is applied once", async () => {
    const replayId = nextRepo++;
    const payload = JSON.stringify(issuesOpened(replayId));
    const h = headers("issues", await signBody(WEBHOOK_SECRET, payload));
    const first = await postWebhook(h, payload);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ status: "applied" });
    const audit = await repoStub(replayId).auditLog();
    const second = await postWebhook(h, payload);
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ status: "duplicate" });
    expect(await repoStub(replayId).auditLog()).toEqual(audit);
    expect((await repoStub(replayId).graph()).stats.issues).toBe(1);
  });
});

describe("payload corpus", () => {
  const id = nextRepo++;
  const valid = () => structuredClone(issuesOpened(id));
  const mutate = (f: (p: ReturnType<typeof valid>) => unknown) => {
    const p = valid();
    const out = f(p);
    return JSON.stringify(out === undefined ? p : out);
  };
  const cases = payloadCorpus(valid);

  it("has at least 30 hostile payloads", () => expect(cases.length).toBeGreaterThanOrEqual(30));

  it.each(cases)("%s: 400 or 202, nothing stored", async (_name, event, body, statuses) => {
    const bytes =
      typeof body === "string" ? (encoder.encode(body) as Uint8Array<ArrayBuffer>) : body;
    const response = await postWebhook(
      headers(event, await signBody(WEBHOOK_SECRET, bytes)),
      bytes,
    );
    expect(statuses).toContain(response.status);
    const answer = (await response.json()) as { error?: string; status?: string };
    if (response.status === 400) expect(answer.error).toContain(event);
    await untouched(id);
    expect(await env.INSTALLATION.get(env.INSTALLATION.idFromName("1")).status()).toMatchObject({
      status: null,
    });
  });

  it("400 names the event, the action and the first bad path", async () => {
    const body = mutate((p) => {
      p.issue.state = "merged";
    });
    const response = await postWebhook(
      headers("issues", await signBody(WEBHOOK_SECRET, body)),
      body,
    );
    expect(await response.json()).toEqual({
      error:
        'invalid issues.opened payload at issue.state: Invalid option: expected one of "open"|"closed"',
    });
  });

  it("missing event or delivery headers are 400", async () => {
    const body = JSON.stringify(valid());
    const signature = await signBody(WEBHOOK_SECRET, body);
    const noEvent = { ...headers("issues", signature) };
    delete noEvent["x-github-event"];
    expect((await postWebhook(noEvent, body)).status).toBe(400);
    const noDelivery = { ...headers("issues", signature) };
    delete noDelivery["x-github-delivery"];
    expect((await postWebhook(noDelivery, body)).status).toBe(400);
    await untouched(id);
  });

  it("a streamed body over the limit, without Content-Length, is 413 too", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 20) controller.close();
        else {
          sent += 1;
          controller.enqueue(chunk);
        }
      },
    });
    const response = await postWebhook(
      headers("issues", `sha256=${"0".repeat(64)}`),
      stream as unknown as Uint8Array<ArrayBuffer>,
    );
    expect(response.status).toBe(413);
    expect(sent).toBeLessThan(20);
    await untouched(id);
  });

  it("a body over the limit is 413 before anything is read", async () => {
    const big = JSON.stringify({ ...valid(), padding: "x".repeat(1024 * 1024) });
    const response = await postWebhook(headers("issues", await signBody(WEBHOOK_SECRET, big)), big);
    expect(response.status).toBe(413);
    await untouched(id);
  });
});

describe("cross-event replay (GitHub does not sign X-GitHub-Event)", () => {
  /** A real-shaped `issue_comment.deleted` body about issue 1 of `repoId`. */
  function commentDeleted(repoId: number, opened = issuesOpened(repoId)) {
    return {
      action: "deleted",
      issue: { ...opened.issue, updated_at: "2026-11-29T11:00:00Z" },
      comment: {
        id: 77,
        node_id: "IC_77",
        body: "thanks",
        user: { login: "octocat", id: 1, type: "User" },
        author_association: "OWNER",
        created_at: "2026-11-29T10:30:00Z",
        updated_at: "2026-11-29T10:30:00Z",
      },
      repository: opened.repository,
      sender: opened.sender,
      installation: opened.installation,
    };
  }

  async function send(event: string, payload: unknown) {
    const body = JSON.stringify(payload);
    const response = await postWebhook(headers(event, await signBody(WEBHOOK_SECRET, body)), body);
    return { status: response.status, answer: (await response.json()) as Record<string, string> };
  }

  it("an issue_comment.deleted body sent as issues is refused and the issue stays", async () => {
    // A repository GitHub knows: an unknown one is (rightly) removed once the installation
    // asks GitHub about it, which would race the last check below.
    const { repoId, installationId } = await seed({
      repo: "corpus/replayed",
      issues: [seedIssue(1)],
    });
    const opened = issuesOpened(repoId, "corpus/replayed", installationId);
    expect((await send("issues", opened)).status).toBe(200);
    const replay = await send("issues", commentDeleted(repoId, opened));
    expect(replay.status).toBe(400);
    expect(replay.answer.error).toBe(
      "invalid issues.deleted payload at comment: the key belongs to another event",
    );
    const graph = await repoStub(repoId).graph();
    expect(graph.stats.issues).toBe(1);
    // The real event is still welcome under its own name.
    expect((await send("issue_comment", commentDeleted(repoId, opened))).status).toBe(200);
    expect((await repoStub(repoId).graph()).stats.issues).toBe(1);
  });

  it("keys of other events are refused wherever they appear", async () => {
    const repoId = nextRepo++;
    const opened = issuesOpened(repoId);
    const labelDeleted = {
      action: "deleted",
      label: { id: 1, name: "bug" },
      repository: opened.repository,
      sender: opened.sender,
      installation: opened.installation,
    };
    const cases: Array<[string, unknown, string]> = [
      ["label", { ...labelDeleted, issue: opened.issue }, "issue"],
      ["issues", { ...opened, action: "closed", sub_issue: opened.issue }, "sub_issue"],
      ["issues", { ...opened, action: "closed", pull_request: {} }, "pull_request"],
      ["issues", { ...opened, repositories_removed: [] }, "repositories_removed"],
      ["issue_comment", { ...commentDeleted(repoId), label: labelDeleted.label }, "label"],
    ];
    for (const [event, payload, key] of cases) {
      const { status, answer } = await send(event, payload);
      expect(status, `${event} with ${key}`).toBe(400);
      expect(answer.error).toContain(`payload at ${key}: the key belongs to another event`);
    }
    await untouched(repoId);
  });
});
