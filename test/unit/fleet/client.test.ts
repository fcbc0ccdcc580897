// The fleet client: what it sends for each route of docs/api.md, what it accepts back, and the
// FleetApiError it throws for every way a request can fail.
import { describe, expect, it } from "vitest";
import {
  FleetApiError,
  FleetClient,
  FleetRequestError,
  parseRetryAfter,
} from "../../../shared/fleet/client.ts";

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

const GRANT = {
  claimId: "c-1",
  fence: 7,
  expiresAt: "2026-11-29T12:30:00Z",
  branch: "issue/5-fix-it",
  issue: { number: 5, title: "Fix it", url: "https://github.com/acme/app/issues/5" },
};

/** A fetch that records each request and answers from `reply`. */
function recorder(reply: (sent: Sent) => Response | Promise<Response>) {
  const sent: Sent[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const text = await request.text();
    const s: Sent = {
      method: request.method,
      url: request.url,
      headers: Object.fromEntries(request.headers),
      body: text === "" ? undefined : JSON.parse(text),
    };
    sent.push(s);
    return reply(s);
  }) as typeof globalThis.fetch;
  return { sent, fetch };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });

function client(reply: (sent: Sent) => Response | Promise<Response>, token: string = "tok") {
  const r = recorder(reply);
  return {
    ...r,
    client: new FleetClient({
      server: "https://fleet.example/base/",
      repo: "acme/app",
      token,
      fetch: r.fetch,
      userAgent: "test-agent/1",
    }),
  };
}

describe("FleetClient request building", () => {
  it("sends every route to its path, with its body, bearer token and JSON headers", async () => {
    const answers: Record<string, Response> = {
      "GET /base/v1/repos/acme/app/queue": json(200, {
        repo: "acme/app",
        order: "number",
        items: [],
        total: 0,
      }),
      "POST /base/v1/repos/acme/app/issues/5/claim": json(201, GRANT),
      "POST /base/v1/repos/acme/app/claims": json(201, GRANT),
      "POST /base/v1/repos/acme/app/issues/5/claim/heartbeat": json(200, {
        claimId: "c-1",
        fence: 7,
        expiresAt: "2026-11-29T13:00:00Z",
      }),
      "POST /base/v1/repos/acme/app/issues/5/claim/release": json(200, {
        claimId: "c-1",
        fence: 7,
        outcome: "done",
        releasedAt: "2026-11-29T12:10:00Z",
      }),
      "GET /base/v1/repos/acme/app/claims": json(200, { claims: [] }),
      "POST /base/v1/repos/acme/app/issues/5/comments": json(201, { id: 11, url: "u" }),
      "POST /base/v1/repos/acme/app/issues/5/labels": json(200, { labels: ["bug"] }),
      "POST /base/v1/repos/acme/app/issues/5/close": json(200, { number: 5, state: "closed" }),
      "POST /base/v1/repos/acme/app/issues/5/sub-issues": json(201, {
        number: 9,
        url: "u9",
        created: true,
      }),
      "GET /base/v1/repos/acme/app/graph": json(200, { repo: "acme/app", ready: [] }),
      "POST /base/v1/repos/acme/app/keys": json(201, {
        id: "k1",
        name: "ci",
        key: "sk_secret",
        createdAt: "2026-11-29T12:00:00Z",
        expiresAt: "2026-12-29T12:00:00Z",
      }),
      "GET /base/v1/repos/acme/app/keys": json(200, {
        keys: [
          {
            id: "k1",
            name: "ci",
            createdAt: "2026-11-29T12:00:00Z",
            lastUsedAt: null,
            expiresAt: null,
            revokedAt: null,
          },
        ],
      }),
      "DELETE /base/v1/repos/acme/app/keys/k1": new Response(null, { status: 204 }),
    };
    const { client: c, sent } = client((s) => {
      const key = `${s.method} ${new URL(s.url).pathname}`;
      const answer = answers[key];
      if (!answer) throw new Error(`unexpected ${key}`);
      return answer.clone();
    });
    const fenced = { claimId: "c-1", fence: 7 };
    await c.queue();
    await c.claim(5, { agentId: "bot-1", ttlSeconds: 600, machine: "m1" });
    await c.claimNext({ agentId: "bot-1", capabilities: ["gpu"] });
    await c.heartbeat(5, fenced);
    await c.release(5, { ...fenced, outcome: "done", note: "ok" });
    await c.claims();
    await c.comment(5, { ...fenced, body: "hello" });
    await c.labels(5, { ...fenced, add: ["bug"] });
    await c.close(5, { ...fenced, reason: "completed" });
    await c.subIssue(5, { ...fenced, title: "Child", idempotencyKey: "k-1" });
    await c.graph();
    await c.createKey({ name: "ci", expiresInDays: 30 });
    await c.listKeys();
    await c.revokeKey("k1");

    expect(sent.map((s) => [s.method, new URL(s.url).pathname, s.body])).toEqual([
      ["GET", "/base/v1/repos/acme/app/queue", undefined],
      [
        "POST",
        "/base/v1/repos/acme/app/issues/5/claim",
        { agentId: "bot-1", ttlSeconds: 600, machine: "m1" },
      ],
      ["POST", "/base/v1/repos/acme/app/claims", { agentId: "bot-1", capabilities: ["gpu"] }],
      ["POST", "/base/v1/repos/acme/app/issues/5/claim/heartbeat", fenced],
      [
        "POST",
        "/base/v1/repos/acme/app/issues/5/claim/release",
        { ...fenced, outcome: "done", note: "ok" },
      ],
      ["GET", "/base/v1/repos/acme/app/claims", undefined],
      ["POST", "/base/v1/repos/acme/app/issues/5/comments", { ...fenced, body: "hello" }],
      ["POST", "/base/v1/repos/acme/app/issues/5/labels", { ...fenced, add: ["bug"] }],
      ["POST", "/base/v1/repos/acme/app/issues/5/close", { ...fenced, reason: "completed" }],
      [
        "POST",
        "/base/v1/repos/acme/app/issues/5/sub-issues",
        { ...fenced, title: "Child", idempotencyKey: "k-1" },
      ],
      ["GET", "/base/v1/repos/acme/app/graph", undefined],
      ["POST", "/base/v1/repos/acme/app/keys", { name: "ci", expiresInDays: 30 }],
      ["GET", "/base/v1/repos/acme/app/keys", undefined],
      ["DELETE", "/base/v1/repos/acme/app/keys/k1", undefined],
    ]);
    for (const s of sent) {
      expect(s.headers.authorization).toBe("Bearer tok");
      expect(s.headers.accept).toBe("application/json");
      expect(s.headers["user-agent"]).toBe("test-agent/1");
      expect(s.headers["content-type"]).toBe(s.body === undefined ? undefined : "application/json");
    }
  });

  it("builds the queue's query and leaves out what was not given", async () => {
    const { client: c, sent } = client(() =>
      json(200, { repo: "acme/app", order: "impact", items: [], total: 0 }),
    );
    await c.queue({ machine: "m 1", capabilities: ["gpu", "rust"], limit: 5, order: "impact" });
    await c.queue({ capabilities: [] });
    await c.graph({ machine: "m1" });
    expect(sent.map((s) => new URL(s.url).search)).toEqual([
      "?machine=m+1&capabilities=gpu%2Crust&limit=5&order=impact",
      "",
      "?machine=m1",
    ]);
  });

  it("follows a graph list's cursors until the last page", async () => {
    const pages: Record<string, unknown> = {
      "": { list: "ready", items: [3, 4], next: "c1", total: 5 },
      c1: { list: "ready", items: [5, 1], next: "c2", total: 5 },
      c2: { list: "ready", items: [2], next: null, total: 5 },
    };
    const { client: c, sent } = client((request) =>
      json(200, pages[new URL(request.url).searchParams.get("cursor") ?? ""]),
    );
    expect(await c.graphList("ready", { limit: 2, machine: "m1" })).toEqual([3, 4, 5, 1, 2]);
    expect(sent.map((s) => new URL(s.url).search)).toEqual([
      "?list=ready&machine=m1&limit=2",
      "?list=ready&machine=m1&limit=2&cursor=c1",
      "?list=ready&machine=m1&limit=2&cursor=c2",
    ]);
  });

  it("asks a token function for each request, so refreshed tokens are used", async () => {
    const r = recorder(() => json(200, { claims: [] }));
    let n = 0;
    const c = new FleetClient({
      server: "http://127.0.0.1:8787",
      repo: "acme/app",
      token: async () => `oidc-${++n}`,
      fetch: r.fetch,
    });
    await c.claims();
    await c.claims();
    expect(r.sent.map((s) => s.headers.authorization)).toEqual(["Bearer oidc-1", "Bearer oidc-2"]);
    expect(r.sent[0]!.url).toBe("http://127.0.0.1:8787/v1/repos/acme/app/claims");
    expect(r.sent[0]!.headers["user-agent"]).not.toBe("test-agent/1");
  });

  it("answers null for claim-next's 204 (no work)", async () => {
    const { client: c } = client(() => new Response(null, { status: 204 }));
    expect(await c.claimNext({ agentId: "a" })).toBeNull();
  });

  it("validates arguments with the API's schemas before sending anything", async () => {
    const { client: c, sent } = client(() => json(201, GRANT));
    const refused = async (call: () => Promise<unknown>, field: string) => {
      const error = await call().catch((e) => e);
      expect(error).toBeInstanceOf(FleetRequestError);
      expect((error as FleetRequestError).field).toBe(field);
    };
    await refused(() => c.claim(5, { agentId: "has space" }), "agentId");
    await refused(() => c.claim(5, { agentId: "a".repeat(65) }), "agentId");
    await refused(() => c.claim(5, { agentId: "a", ttlSeconds: 59 }), "ttlSeconds");
    await refused(() => c.claim(5, { agentId: "a", ttlSeconds: 86_401 }), "ttlSeconds");
    await refused(() => c.claimNext({ agentId: "a", capabilities: ["no spaces"] }), "capabilities");
    await refused(
      () => c.release(5, { claimId: "c", fence: 1, outcome: "won" as "done" }),
      "outcome",
    );
    await refused(
      () => c.release(5, { claimId: "c", fence: 1, outcome: "done", note: "x".repeat(2001) }),
      "note",
    );
    await refused(() => c.heartbeat(5, { claimId: "c", fence: 0 }), "fence");
    await refused(() => c.comment(5, { claimId: "c", fence: 1, body: "" }), "body");
    await refused(() => c.labels(5, { claimId: "c", fence: 1 }), "add");
    await refused(() => c.labels(5, { claimId: "c", fence: 1, add: ["x".repeat(51)] }), "add");
    await refused(
      () => c.close(5, { claimId: "c", fence: 1, reason: "wontfix" as "completed" }),
      "reason",
    );
    await refused(() => c.subIssue(5, { claimId: "c", fence: 1, title: " " }), "title");
    await refused(
      () => c.subIssue(5, { claimId: "c", fence: 1, title: "t", idempotencyKey: "a b" }),
      "idempotencyKey",
    );
    await expect(c.claim(0, { agentId: "a" })).rejects.toThrow("issue number");
    expect(sent).toEqual([]);
  });

  it("rejects a malformed server or repository up front", () => {
    expect(() => new FleetClient({ server: "ftp://x", repo: "a/b", token: "t" })).toThrow(
      "http(s)",
    );
    expect(() => new FleetClient({ server: "http://x", repo: "nope", token: "t" })).toThrow(
      "OWNER/NAME",
    );
  });
});

describe("FleetClient errors", () => {
  it("parses a claim conflict: code, reason, holder, and names the request", async () => {
    const body = {
      error: "conflict",
      reason: "held",
      message: "issue #5 is claimed",
      holder: { agentId: "bot-2", source: "switchyard", expiresAt: "2026-11-29T12:30:00Z" },
    };
    const { client: c } = client(() => json(409, body));
    const error = (await c.claim(5, { agentId: "bot-1" }).catch((e) => e)) as FleetApiError;
    expect(error).toBeInstanceOf(FleetApiError);
    expect(error).toMatchObject({
      status: 409,
      error: "conflict",
      reason: "held",
      apiMessage: "issue #5 is claimed",
      holder: body.holder,
      body,
      request: "POST /v1/repos/acme/app/issues/5/claim",
      retryAfterSeconds: undefined,
    });
    expect(error.message).toBe(
      "POST /v1/repos/acme/app/issues/5/claim: 409 conflict (held): issue #5 is claimed; held by bot-2 (switchyard)",
    );
  });

  it("parses a stale fence", async () => {
    const { client: c } = client(() =>
      json(409, { error: "stale-fence", message: "fence 7 is not the live claim of #5" }),
    );
    const error = (await c
      .heartbeat(5, { claimId: "c", fence: 7 })
      .catch((e) => e)) as FleetApiError;
    expect(error).toMatchObject({ status: 409, error: "stale-fence", reason: undefined });
  });

  it("reads Retry-After as seconds or as an HTTP date", async () => {
    const { client: c } = client(() =>
      json(429, { error: "rate-limited", message: "write budget spent" }, { "retry-after": "17" }),
    );
    const error = (await c
      .comment(5, { claimId: "c", fence: 1, body: "x" })
      .catch((e) => e)) as FleetApiError;
    expect(error).toMatchObject({ status: 429, error: "rate-limited", retryAfterSeconds: 17 });
    expect(error.message).toContain("retry after 17 s");

    const now = Date.parse("2026-11-29T12:00:00Z");
    expect(parseRetryAfter("Sun, 29 Nov 2026 12:00:30 GMT", now)).toBe(30);
    expect(parseRetryAfter("Sun, 29 Nov 2026 11:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it("keeps a non-JSON error readable", async () => {
    const { client: c } = client(
      () => new Response("<html>Bad gateway</html>", { status: 502, statusText: "Bad Gateway" }),
    );
    const error = (await c.claims().catch((e) => e)) as FleetApiError;
    expect(error).toMatchObject({ status: 502, error: "http-502", body: undefined });
    expect(error.message).toContain("GET /v1/repos/acme/app/claims: 502 http-502: Bad Gateway");
  });

  it("keeps the code of an error body whose holder has an unexpected shape", async () => {
    const { client: c } = client(() =>
      json(409, { error: "conflict", reason: "held", message: "m", holder: "bot-2" }),
    );
    const error = (await c.claim(5, { agentId: "a" }).catch((e) => e)) as FleetApiError;
    expect(error).toMatchObject({ error: "conflict", reason: "held", holder: undefined });
  });

  it("turns an unexpected answer into bad-response, naming the field", async () => {
    const { client: c } = client(() => json(201, { ...GRANT, fence: "seven" }));
    const error = (await c.claim(5, { agentId: "a" }).catch((e) => e)) as FleetApiError;
    expect(error).toMatchObject({ status: 201, error: "bad-response" });
    expect(error.message).toContain("fence");
    const { client: c2 } = client(() => new Response("not json", { status: 200 }));
    expect(await c2.claims().catch((e) => e)).toMatchObject({ error: "bad-response" });
  });

  it("reports a network failure and a timeout with no status", async () => {
    const down = new FleetClient({
      server: "http://x",
      repo: "a/b",
      token: "t",
      fetch: async () => {
        throw new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED") });
      },
    });
    expect(await down.claims().catch((e) => e)).toMatchObject({
      status: null,
      error: "network",
      message: "GET /v1/repos/a/b/claims: network: connect ECONNREFUSED",
    });
    const slow = new FleetClient({
      server: "http://x",
      repo: "a/b",
      token: "t",
      timeoutMs: 20,
      fetch: (_input, init) =>
        new Promise((_resolve, reject) => {
          init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
        }),
    });
    expect(await slow.claims().catch((e) => e)).toMatchObject({ status: null, error: "timeout" });
  });

  it("never puts the token in an error", async () => {
    const { client: c } = client(
      () => json(401, { error: "unauthorized", message: "bad token" }),
      "secret-token-123",
    );
    const error = (await c.claims().catch((e) => e)) as FleetApiError;
    expect(error.status).toBe(401);
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain("secret-token-123");
  });
});
