// shared/fleet on Node, Bun and Deno: the client's requests and errors against a scripted
// fetch, and Actions OIDC tokens from the in-process simulator's token endpoint.
import assert from "node:assert/strict";
import { createGitHubSimulator, simulatorFetch } from "../../infra/github-sim/app.ts";
import { seedSnapshot } from "../../infra/github-sim/seed.ts";
import { actionsOidcToken, jwtExpiry } from "../../shared/fleet/actions-oidc.ts";
import { FleetApiError, FleetClient, FleetRequestError } from "../../shared/fleet/client.ts";
import type { Check } from "./harness.ts";

const GRANT = {
  claimId: "c-1",
  fence: 4,
  expiresAt: "2026-11-29T12:30:00Z",
  branch: "issue/5-x",
  issue: { number: 5, title: "X", url: "https://github.com/acme/app/issues/5" },
};

function scripted(answer: (request: Request) => Response) {
  const seen: { method: string; url: string; auth: string | null; body: string }[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    seen.push({
      method: request.method,
      url: request.url,
      auth: request.headers.get("authorization"),
      body: await request.clone().text(),
    });
    return answer(request);
  }) as typeof globalThis.fetch;
  return { seen, fetch };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers });

export const checks: Check[] = [
  {
    name: "the client sends claim, claim-next and release as docs/api.md says",
    async run() {
      const { seen, fetch } = scripted((r) =>
        r.url.endsWith("/claims") && r.method === "POST"
          ? new Response(null, { status: 204 })
          : r.url.endsWith("/release")
            ? json(200, { claimId: "c-1", fence: 4, outcome: "done", releasedAt: "x" })
            : json(201, GRANT),
      );
      let n = 0;
      const client = new FleetClient({
        server: "https://fleet.example/",
        repo: "acme/app",
        token: async () => `t${++n}`,
        fetch,
      });
      assert.deepEqual(await client.claim(5, { agentId: "bot-1", ttlSeconds: 600 }), GRANT);
      assert.equal(await client.claimNext({ agentId: "bot-1" }), null);
      await client.release(5, { claimId: "c-1", fence: 4, outcome: "done" });
      assert.deepEqual(
        seen.map((s) => [s.method, s.url, s.auth, s.body]),
        [
          [
            "POST",
            "https://fleet.example/v1/repos/acme/app/issues/5/claim",
            "Bearer t1",
            '{"agentId":"bot-1","ttlSeconds":600}',
          ],
          [
            "POST",
            "https://fleet.example/v1/repos/acme/app/claims",
            "Bearer t2",
            '{"agentId":"bot-1"}',
          ],
          [
            "POST",
            "https://fleet.example/v1/repos/acme/app/issues/5/claim/release",
            "Bearer t3",
            '{"claimId":"c-1","fence":4,"outcome":"done"}',
          ],
        ],
      );
      await assert.rejects(client.claim(5, { agentId: "no spaces" }), FleetRequestError);
    },
  },
  {
    name: "the client's errors carry status, code, reason, holder and Retry-After",
    async run() {
      const { fetch } = scripted((r) =>
        r.url.endsWith("/claim")
          ? json(409, {
              error: "conflict",
              reason: "held",
              message: "held",
              holder: { agentId: "bot-2", source: "idd", expiresAt: "2026-11-30T00:00:00Z" },
            })
          : json(429, { error: "rate-limited", message: "later" }, { "retry-after": "12" }),
      );
      const client = new FleetClient({ server: "http://x", repo: "acme/app", token: "t", fetch });
      const conflict = await client.claim(5, { agentId: "a" }).catch((e: unknown) => e);
      assert.ok(conflict instanceof FleetApiError);
      assert.equal(conflict.status, 409);
      assert.equal(conflict.reason, "held");
      assert.equal(conflict.holder?.source, "idd");
      const limited = await client
        .comment(5, { claimId: "c", fence: 1, body: "b" })
        .catch((e: unknown) => e);
      assert.ok(limited instanceof FleetApiError);
      assert.equal(limited.error, "rate-limited");
      assert.equal(limited.retryAfterSeconds, 12);
    },
  },
  {
    name: "Actions OIDC tokens come from the token endpoint and are refreshed near expiry",
    async run() {
      const sim = createGitHubSimulator({ webhookSecret: "s" });
      seedSnapshot(sim.state, { repo: "acme/app", issues: [] });
      sim.oidc.registerRequestToken("req", sim.state.requireRepo("acme", "app"));
      const inner = simulatorFetch(sim);
      let requests = 0;
      const fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
        requests += 1;
        return inner(input, init);
      }) as typeof globalThis.fetch;
      let now = Date.now();
      const token = actionsOidcToken({
        requestUrl: "http://sim.test/_sim/oidc/request",
        requestToken: "req",
        audience: "https://fleet.example",
        fetch,
        now: () => now,
      });
      const first = await token();
      const exp = jwtExpiry(first)!;
      assert.equal(await token(), first);
      assert.equal(requests, 1);
      now = exp * 1000 - 30_000;
      await token();
      assert.equal(requests, 2);
    },
  },
];
