// The org client (shared/fleet/org-client.ts): what it sends for each org route of docs/api.md,
// and the errors it shares with FleetClient through one transport (shared/fleet/transport.ts):
// status, code, reason, Retry-After, unreadable answers, no answer, never the token.
import { describe, expect, it } from "vitest";
import { FleetApiError, FleetClient, FleetRequestError } from "../../../shared/fleet/client.ts";
import { OrgFleetClient } from "../../../shared/fleet/org-client.ts";

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
  repo: "acme/app",
};

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });

function client(reply: (sent: Sent) => Response | Promise<Response>, token = "tok") {
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
  return {
    sent,
    client: new OrgFleetClient({
      server: "https://fleet.example/base/",
      owner: "acme",
      token,
      fetch,
      userAgent: "test-agent/1",
    }),
  };
}

describe("OrgFleetClient requests", () => {
  it("sends each org route to its path with its body, bearer token and JSON headers", async () => {
    const answers: Record<string, Response> = {
      "GET /base/v1/orgs/acme/queue?kinds=kick%2Cready&limit=2&order=impact&repos=app": json(200, {
        owner: "acme",
        order: "impact",
        total: 0,
        items: [],
        more: [],
      }),
      "POST /base/v1/orgs/acme/claims": json(201, GRANT),
      "GET /base/v1/orgs/acme/claims": json(200, { claims: [] }),
    };
    const { client: c, sent } = client((s) => {
      const url = new URL(s.url);
      return answers[`${s.method} ${url.pathname}${url.search}`] ?? json(404, { error: "x" });
    });
    expect(c.server).toBe("https://fleet.example/base");
    await c.queue({ kinds: ["kick", "ready"], limit: 2, order: "impact", repos: ["app"] });
    expect(await c.claimNext({ agentId: "bot-1", order: "fair" })).toEqual(GRANT);
    expect(await c.claims()).toEqual({ claims: [] });
    expect(sent.map((s) => s.headers.authorization)).toEqual([
      "Bearer tok",
      "Bearer tok",
      "Bearer tok",
    ]);
    expect(sent[1]).toMatchObject({
      body: { agentId: "bot-1", order: "fair" },
      headers: { "content-type": "application/json", "user-agent": "test-agent/1" },
    });
  });

  it("answers null for claim-next's 204, and hands heartbeats to the grant's repository", async () => {
    const { client: c } = client(() => new Response(null, { status: 204 }));
    expect(await c.claimNext({ agentId: "a" })).toBeNull();
    const repo = c.forRepo("acme/app");
    expect(repo).toBeInstanceOf(FleetClient);
    expect(repo.server).toBe("https://fleet.example/base");
  });

  it("refuses a bad request, owner or server before sending anything", async () => {
    const { client: c, sent } = client(() => json(201, GRANT));
    expect(await c.claimNext({ agentId: "" }).catch((e) => e)).toBeInstanceOf(FleetRequestError);
    expect(sent).toHaveLength(0);
    expect(() => new OrgFleetClient({ server: "https://x", owner: "a/b", token: "t" })).toThrow(
      "owner",
    );
    expect(() => new OrgFleetClient({ server: "ftp://x", owner: "acme", token: "t" })).toThrow(
      "http(s)",
    );
  });
});

describe("OrgFleetClient errors (the transport FleetClient uses)", () => {
  it("reads Retry-After, the code and the message, and names the request", async () => {
    const { client: c } = client(() =>
      json(503, { error: "unavailable", message: "try again" }, { "retry-after": "5" }),
    );
    const error = (await c.claimNext({ agentId: "a" }).catch((e) => e)) as FleetApiError;
    expect(error).toBeInstanceOf(FleetApiError);
    expect(error).toMatchObject({
      status: 503,
      error: "unavailable",
      apiMessage: "try again",
      retryAfterSeconds: 5,
      request: "POST /v1/orgs/acme/claims",
    });
    expect(error.message).toBe(
      "POST /v1/orgs/acme/claims: 503 unavailable: try again; retry after 5 s",
    );
  });

  it("keeps a refusal's reason, and a non-JSON error readable", async () => {
    const { client: c } = client(() =>
      json(403, { error: "forbidden", message: "repository-scoped", reason: "scope" }),
    );
    expect(await c.claims().catch((e) => e)).toMatchObject({ status: 403, reason: "scope" });
    const { client: c2 } = client(
      () => new Response("<html>Bad gateway</html>", { status: 502, statusText: "Bad Gateway" }),
    );
    const error = (await c2.queue().catch((e) => e)) as FleetApiError;
    expect(error.message).toContain("GET /v1/orgs/acme/queue: 502 http-502: Bad Gateway");
  });

  it("turns an answer that is not JSON, or not the documented shape, into bad-response", async () => {
    const { client: c } = client(() => new Response("not json", { status: 200 }));
    expect(await c.claims().catch((e) => e)).toMatchObject({
      error: "bad-response",
      message: expect.stringContaining("not JSON"),
    });
    const { client: c2 } = client(() => json(201, { ...GRANT, repo: 5 }));
    const error = (await c2.claimNext({ agentId: "a" }).catch((e) => e)) as FleetApiError;
    expect(error).toMatchObject({ status: 201, error: "bad-response" });
    expect(error.message).toContain("repo");
  });

  it("reports no answer with no status, and never puts the token in an error", async () => {
    const down = new OrgFleetClient({
      server: "http://x",
      owner: "acme",
      token: "secret-token-123",
      fetch: async () => {
        throw new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED") });
      },
    });
    const error = (await down.claims().catch((e) => e)) as FleetApiError;
    expect(error).toMatchObject({
      status: null,
      error: "network",
      message: "GET /v1/orgs/acme/claims: network: connect ECONNREFUSED",
    });
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain("secret-token");
    const slow = new OrgFleetClient({
      server: "http://x",
      owner: "acme",
      token: "t",
      timeoutMs: 20,
      fetch: (_input, init) =>
        new Promise((_resolve, reject) => {
          init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
        }),
    });
    expect(await slow.queue().catch((e) => e)).toMatchObject({
      status: null,
      error: "timeout",
      message: "GET /v1/orgs/acme/queue: timeout: no answer within 20 ms",
    });
  });
});
