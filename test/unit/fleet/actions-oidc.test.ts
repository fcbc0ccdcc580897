// The Actions OIDC token provider against the GitHub simulator's token request endpoint
// (`GET /_sim/oidc/request`, what ACTIONS_ID_TOKEN_REQUEST_URL answers a workflow step).
import { describe, expect, it } from "vitest";
import { createGitHubSimulator, simulatorFetch } from "../../../infra/github-sim/app.ts";
import {
  ActionsOidcError,
  actionsOidcToken,
  jwtExpiry,
  oidcRequestUrl,
} from "../../../shared/fleet/actions-oidc.ts";
import { issue, REPO } from "../github/sim-harness.ts";

const REQUEST_TOKEN = "actions-request-token";
const AUDIENCE = "https://switchyard.example.workers.dev";

async function simulator() {
  const sim = createGitHubSimulator({ webhookSecret: "s" });
  const post = (path: string, body: unknown) =>
    sim.fetch(
      new Request(`http://sim.test${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
  expect((await post("/_sim/seed", { snapshot: { repo: REPO, issues: [issue(1)] } })).ok).toBe(
    true,
  );
  expect(
    (await post("/_sim/oidc/request-tokens", { repository: REPO, token: REQUEST_TOKEN })).status,
  ).toBe(201);
  const requests: { url: string; authorization: string | null }[] = [];
  const inner = simulatorFetch(sim);
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    requests.push({ url: request.url, authorization: request.headers.get("authorization") });
    return inner(request);
  }) as typeof globalThis.fetch;
  /** Sets the simulator's clock (it stamps `iat` and `exp`). */
  const setClock = async (ms: number) => {
    const res = await post("/_sim/clock", { now: new Date(ms).toISOString() });
    expect(res.ok).toBe(true);
  };
  return { sim, fetch, requests, setClock };
}

function payload(jwt: string): Record<string, unknown> {
  const part = jwt.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/");
  return JSON.parse(atob(part.padEnd(Math.ceil(part.length / 4) * 4, "=")));
}

describe("Actions OIDC tokens", () => {
  it("appends the audience with & or ?", () => {
    expect(oidcRequestUrl("https://t.example/idtoken?api-version=2.0", "https://a.example/x")).toBe(
      "https://t.example/idtoken?api-version=2.0&audience=https%3A%2F%2Fa.example%2Fx",
    );
    expect(oidcRequestUrl("https://t.example/idtoken", "aud")).toBe(
      "https://t.example/idtoken?audience=aud",
    );
  });

  it("asks with the request token and the audience, and gets a token for the repository", async () => {
    const { fetch, requests } = await simulator();
    const token = await actionsOidcToken({
      requestUrl: "http://sim.test/_sim/oidc/request",
      requestToken: REQUEST_TOKEN,
      audience: AUDIENCE,
      fetch,
    })();
    expect(requests).toEqual([
      {
        url: `http://sim.test/_sim/oidc/request?audience=${encodeURIComponent(AUDIENCE)}`,
        authorization: `bearer ${REQUEST_TOKEN}`,
      },
    ]);
    const claims = payload(token);
    expect(claims).toMatchObject({ aud: AUDIENCE, repository: REPO });
    expect(jwtExpiry(token)).toBe(claims.exp);
    expect((claims.exp as number) - (claims.iat as number)).toBe(300);
  });

  it("reuses the token while more than 60 seconds remain, then fetches a fresh one", async () => {
    const { fetch, requests, setClock } = await simulator();
    let now = Date.parse("2026-11-29T12:00:00Z");
    await setClock(now);
    const provider = actionsOidcToken({
      requestUrl: "http://sim.test/_sim/oidc/request",
      requestToken: REQUEST_TOKEN,
      audience: AUDIENCE,
      fetch,
      now: () => now,
    });
    const first = await provider();
    const exp = jwtExpiry(first)! * 1000;
    now = exp - 61_000;
    expect(await provider()).toBe(first);
    expect(requests).toHaveLength(1);
    now = exp - 59_000;
    await setClock(now);
    const second = await provider();
    expect(requests).toHaveLength(2);
    expect(second).not.toBe(first);
    expect(jwtExpiry(second)! * 1000).toBe(exp + 241_000);
    // The fresh token is kept in turn.
    expect(await provider()).toBe(second);
    expect(requests).toHaveLength(2);
  });

  it("shares one request among concurrent callers", async () => {
    const { fetch, requests } = await simulator();
    const provider = actionsOidcToken({
      requestUrl: "http://sim.test/_sim/oidc/request",
      requestToken: REQUEST_TOKEN,
      audience: AUDIENCE,
      fetch,
    });
    const tokens = await Promise.all([provider(), provider(), provider()]);
    expect(new Set(tokens).size).toBe(1);
    expect(requests).toHaveLength(1);
  });

  it("fails with the request named and the request token kept out of the message", async () => {
    const { fetch } = await simulator();
    const provider = actionsOidcToken({
      requestUrl: "http://sim.test/_sim/oidc/request",
      requestToken: "not-registered-secret",
      audience: AUDIENCE,
      fetch,
    });
    const error = (await provider().catch((e) => e)) as ActionsOidcError;
    expect(error).toBeInstanceOf(ActionsOidcError);
    expect(error.message).toContain("GET http://sim.test/_sim/oidc/request");
    expect(error.message).toContain("HTTP 401");
    expect(error.message).not.toContain("not-registered-secret");
  });

  it("refuses an answer without a token, and uses (never caches) a token without exp", async () => {
    let answer: unknown = { nope: true };
    let calls = 0;
    const provider = actionsOidcToken({
      requestUrl: "https://t.example/idtoken?x=1",
      requestToken: "r",
      audience: "a",
      fetch: async () => {
        calls += 1;
        return new Response(JSON.stringify(answer), { status: 200 });
      },
    });
    await expect(provider()).rejects.toThrow("without a token");
    answer = { value: "opaque-token" };
    expect(await provider()).toBe("opaque-token");
    expect(await provider()).toBe("opaque-token");
    expect(calls).toBe(3);
    expect(() => actionsOidcToken({ requestUrl: "", requestToken: "r", audience: "a" })).toThrow(
      "id-token: write",
    );
  });

  it("reads exp without verifying, and gives up on what is not a JWT", () => {
    const enc = (v: unknown) =>
      btoa(JSON.stringify(v)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    expect(jwtExpiry(`${enc({ alg: "none" })}.${enc({ exp: 1_900_000_000 })}.sig`)).toBe(
      1_900_000_000,
    );
    expect(jwtExpiry(`${enc({})}.${enc({ exp: "soon" })}.sig`)).toBeUndefined();
    expect(jwtExpiry("not-a-jwt")).toBeUndefined();
    expect(jwtExpiry("a.%%%.c")).toBeUndefined();
  });
});
