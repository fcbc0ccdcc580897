// Webhook ingress (spec 6.1): hostile signatures and payloads are refused without a 5xx and
// without touching storage; a valid delivery is applied once.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { directory } from "../../functions/objects/directory-object.ts";
import { signBody } from "../../shared/webhooks/signature.ts";
import { WEBHOOK_SECRET } from "./global-setup.ts";
import { postWebhook, repoStub } from "./helpers.ts";

const encoder = new TextEncoder();
let nextRepo = 70_000;

function issuesOpened(repoId: number, name = `corpus/r${repoId}`) {
  return {
    action: "opened",
    issue: {
      id: 9001,
      node_id: "I_9001",
      number: 1,
      title: "A new issue",
      state: "open",
      state_reason: null,
      body: null,
      labels: [{ id: 1, name: "bug" }],
      user: { login: "octocat", id: 1, type: "User" },
      created_at: "2026-11-29T10:00:00Z",
      updated_at: "2026-11-29T10:00:00Z",
      closed_at: null,
    },
    repository: {
      id: repoId,
      name: name.split("/")[1],
      full_name: name,
      owner: { login: "corpus", id: 5 },
    },
    sender: { login: "octocat", id: 1, type: "User" },
    installation: { id: 555 },
  };
}

function headers(event: string, signature: string | null, delivery = crypto.randomUUID()) {
  const h: Record<string, string> = {
    "x-github-event": event,
    "x-github-delivery": delivery,
    "content-type": "application/json",
  };
  if (signature !== null) h["x-hub-signature-256"] = signature;
  return h;
}

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
  const digest = async (text: string, secret = WEBHOOK_SECRET) =>
    (await signBody(secret, text)).slice("sha256=".length);

  const cases: Array<
    [string, () => Promise<{ signature: string | null; body?: string | Uint8Array<ArrayBuffer> }>]
  > = [
    ["missing header", async () => ({ signature: null })],
    ["empty header", async () => ({ signature: "" })],
    ["prefix without digest", async () => ({ signature: "sha256=" })],
    ["sha1 prefix", async () => ({ signature: `sha1=${await digest(body)}` })],
    ["bare digest without prefix", async () => ({ signature: await digest(body) })],
    ["uppercase hex", async () => ({ signature: `sha256=${(await digest(body)).toUpperCase()}` })],
    ["non-hex characters", async () => ({ signature: `sha256=${"zz".repeat(32)}` })],
    ["63 hex digits", async () => ({ signature: `sha256=${(await digest(body)).slice(1)}` })],
    ["65 hex digits", async () => ({ signature: `sha256=${await digest(body)}0` })],
    [
      "128 hex digits",
      async () => ({ signature: `sha256=${await digest(body)}${await digest(body)}` }),
    ],
    [
      "signature of another body",
      async () => ({ signature: await signBody(WEBHOOK_SECRET, `${body} `) }),
    ],
    [
      "signature with another secret",
      async () => ({ signature: await signBody("not-the-secret", body) }),
    ],
    [
      "signature of an empty body",
      async () => ({ signature: await signBody(WEBHOOK_SECRET, " ") }),
    ],
    [
      "body changed after signing",
      async () => ({
        signature: await signBody(WEBHOOK_SECRET, body),
        body: body.replace("A new issue", "A new issuE"),
      }),
    ],
    ["space after the prefix", async () => ({ signature: `sha256= ${await digest(body)}` })],
    ["prefix without =", async () => ({ signature: `sha256${await digest(body)}` })],
    [
      "two signatures joined",
      async () => ({ signature: `sha256=${await digest(body)},sha256=${await digest(body)}` }),
    ],
    [
      "a tab inside the digest",
      async () => ({
        signature: `sha256=${(await digest(body)).slice(0, 32)}\t${(await digest(body)).slice(33)}`,
      }),
    ],
    ["a 10 KB header", async () => ({ signature: `sha256=${"a".repeat(10_000)}` })],
    ["an all-zero digest", async () => ({ signature: `sha256=${"0".repeat(64)}` })],
    [
      "digest of the secret itself",
      async () => ({ signature: await signBody(WEBHOOK_SECRET, WEBHOOK_SECRET) }),
    ],
  ];

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
  let deep: unknown = 1;
  for (let i = 0; i < 5000; i++) deep = { a: deep };

  const cases: Array<[string, string, string | Uint8Array<ArrayBuffer>, number[]]> = [
    ["not JSON", "issues", "hello", [400]],
    ["empty body", "issues", "", [400]],
    ["a JSON array", "issues", "[]", [400]],
    ["JSON null", "issues", "null", [400]],
    ["a JSON string", "issues", '"opened"', [400]],
    ["an empty object", "issues", "{}", [400]],
    [
      "missing repository",
      "issues",
      mutate((p) => {
        delete (p as Record<string, unknown>).repository;
      }),
      [400],
    ],
    [
      "repository.id as a string",
      "issues",
      mutate((p) => {
        (p.repository as Record<string, unknown>).id = "42";
      }),
      [400],
    ],
    [
      "repository.full_name without owner",
      "issues",
      mutate((p) => {
        p.repository.full_name = "justname";
      }),
      [400],
    ],
    [
      "negative issue number",
      "issues",
      mutate((p) => {
        p.issue.number = -1;
      }),
      [400],
    ],
    [
      "fractional issue number",
      "issues",
      mutate((p) => {
        p.issue.number = 1.5;
      }),
      [400],
    ],
    [
      "unknown issue state",
      "issues",
      mutate((p) => {
        p.issue.state = "merged";
      }),
      [400],
    ],
    [
      "labels not an array",
      "issues",
      mutate((p) => {
        (p.issue as Record<string, unknown>).labels = "bug";
      }),
      [400],
    ],
    [
      "label without a name",
      "issues",
      mutate((p) => {
        (p.issue as Record<string, unknown>).labels = [{ id: 3 }];
      }),
      [400],
    ],
    [
      "timestamp as a number",
      "issues",
      mutate((p) => {
        (p.issue as Record<string, unknown>).created_at = 1700000000;
      }),
      [400],
    ],
    [
      "timestamp that is not ISO",
      "issues",
      mutate((p) => {
        p.issue.updated_at = "yesterday";
      }),
      [400],
    ],
    [
      "action as a number",
      "issues",
      mutate((p) => {
        (p as Record<string, unknown>).action = 5;
      }),
      [400],
    ],
    [
      "unknown action",
      "issues",
      mutate((p) => {
        p.action = "pinned";
      }),
      [202],
    ],
    ["unhandled event", "star", mutate(() => ({ action: "created" })), [202]],
    ["ping", "ping", JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1 }), [202]],
    [
      "sub_issues without sub_issue",
      "sub_issues",
      mutate((p) => ({
        ...p,
        action: "sub_issue_added",
        parent_issue: p.issue,
        parent_issue_id: 1,
        sub_issue_id: 2,
      })),
      [400],
    ],
    [
      "issue_dependencies with a null blocker",
      "issue_dependencies",
      mutate((p) => ({
        ...p,
        action: "blocked_by_added",
        blocked_issue: p.issue,
        blocked_issue_id: 1,
        blocking_issue: null,
        blocking_issue_id: 2,
      })),
      [400],
    ],
    [
      "installation without id",
      "installation",
      JSON.stringify({
        action: "created",
        installation: { account: null, repository_selection: "all" },
        sender: { login: "o", id: 1 },
      }),
      [400],
    ],
    [
      "installation_repositories with a non-array",
      "installation_repositories",
      JSON.stringify({
        action: "added",
        installation: { id: 1, account: null, repository_selection: "selected" },
        repository_selection: "selected",
        repositories_added: "all",
        repositories_removed: [],
        sender: { login: "o", id: 1 },
      }),
      [400],
    ],
    [
      "label.edited without label",
      "label",
      mutate((p) => ({
        action: "edited",
        repository: p.repository,
        sender: p.sender,
        installation: p.installation,
      })),
      [400],
    ],
    [
      "issue_comment without body",
      "issue_comment",
      mutate((p) => ({
        ...p,
        action: "created",
        comment: {
          id: 1,
          node_id: "C",
          user: null,
          created_at: "2026-11-29T10:00:00Z",
          updated_at: "2026-11-29T10:00:00Z",
        },
      })),
      [400],
    ],
    [
      "a huge array where objects belong",
      "issues",
      mutate((p) => {
        (p.issue as Record<string, unknown>).labels = Array.from({ length: 50_000 }, (_, i) => i);
      }),
      [400],
    ],
    [
      "deeply nested JSON",
      "issues",
      mutate((p) => {
        (p as Record<string, unknown>).issue = deep;
      }),
      [400],
    ],
    [
      "bytes that are not UTF-8",
      "issues",
      new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      [400],
    ],
    ["__proto__ keys", "issues", `{"__proto__":{"polluted":true},"action":"opened"}`, [400]],
    [
      "push to another branch",
      "push",
      mutate((p) => ({
        ref: "refs/heads/feature",
        after: "abc",
        repository: { ...p.repository, default_branch: "main" },
        commits: [{ id: "abc", modified: [".github/switchyard.yml"] }],
        installation: p.installation,
      })),
      [202],
    ],
    [
      "push not touching the config",
      "push",
      mutate((p) => ({
        ref: "refs/heads/main",
        after: "abc",
        repository: { ...p.repository, default_branch: "main" },
        commits: [{ id: "abc", modified: ["README.md"] }],
        installation: p.installation,
      })),
      [202],
    ],
    [
      "comment on a pull request",
      "issue_comment",
      mutate((p) => ({
        ...p,
        action: "created",
        issue: { ...p.issue, pull_request: { url: "x" } },
        comment: {
          id: 1,
          node_id: "C",
          body: "hi",
          user: null,
          created_at: "2026-11-29T10:00:00Z",
          updated_at: "2026-11-29T10:00:00Z",
        },
      })),
      [202],
    ],
    [
      "a repository event without installation",
      "issues",
      mutate((p) => {
        delete (p as Record<string, unknown>).installation;
      }),
      [202],
    ],
  ];

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
  function commentDeleted(repoId: number) {
    const opened = issuesOpened(repoId);
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
    const repoId = nextRepo++;
    expect((await send("issues", issuesOpened(repoId))).status).toBe(200);
    const replay = await send("issues", commentDeleted(repoId));
    expect(replay.status).toBe(400);
    expect(replay.answer.error).toBe(
      "invalid issues.deleted payload at comment: the key belongs to another event",
    );
    const graph = await repoStub(repoId).graph();
    expect(graph.stats.issues).toBe(1);
    // The real event is still welcome under its own name.
    expect((await send("issue_comment", commentDeleted(repoId))).status).toBe(200);
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
