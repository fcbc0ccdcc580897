// shared/auth on Node, Bun and Deno: the bearer header, fleet keys (WebCrypto SHA-256 and
// randomness), the user-token decision on the in-process simulator's answer, and OIDC tokens
// the simulator's issuer mints, verified with jose against its published key set.
import assert from "node:assert/strict";
import { createLocalJWKSet, type JSONWebKeySet } from "jose";
import { createGitHubSimulator, simulatorFetch } from "../../infra/github-sim/app.ts";
import { SIM_CLIENT_SECRET } from "../../infra/github-sim/oauth.ts";
import { seedSnapshot } from "../../infra/github-sim/seed.ts";
import { resolveBound, userAccess } from "../../shared/auth/access.ts";
import {
  appTokenVerdict,
  githubTokenKind,
  scopedTokenAccess,
} from "../../shared/auth/github-tokens.ts";
import { sha256Hex } from "../../shared/auth/hash.ts";
import { keyVerdict, mintKey, parseKey } from "../../shared/auth/keys.ts";
import { verifyActionsToken } from "../../shared/auth/oidc.ts";
import { parseAuthorization, tokenKind } from "../../shared/auth/tokens.ts";
import { GitHubClient } from "../../shared/github/client.ts";
import { GitHubApiError } from "../../shared/github/errors.ts";
import type { Check } from "./harness.ts";

const BASE = "http://sim.test";

function setup() {
  const sim = createGitHubSimulator({ webhookSecret: "runtime-secret" });
  const fetch = simulatorFetch(sim);
  seedSnapshot(sim.state, { repo: "rt/app", issues: [] });
  const control = async <T>(path: string, body: unknown): Promise<T> => {
    const res = await fetch(`${BASE}/_sim${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.ok(res.ok, `${path}: ${res.status}`);
    return (await res.json()) as T;
  };
  return { sim, fetch, control, repoId: sim.state.requireRepo("rt", "app").id };
}

export const checks: Check[] = [
  {
    name: "bearer header and token kinds",
    run() {
      assert.deepEqual(parseAuthorization("bearer abc"), { ok: true, token: "abc" });
      assert.equal(parseAuthorization("Basic abc").ok, false);
      assert.equal(tokenKind("ghp_x"), "user");
      assert.equal(tokenKind("a.b.c"), "oidc");
    },
  },
  {
    name: "fleet keys: minted, parsed, hashed with WebCrypto",
    async run() {
      const { key, hash } = await mintKey(99);
      assert.deepEqual(parseKey(key), { repoId: 99 });
      assert.equal(tokenKind(key), "key");
      assert.equal(hash, await sha256Hex(key));
      assert.equal(
        await sha256Hex("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
      );
      const stored = {
        id: "k",
        name: "n",
        createdBy: null,
        createdMs: 0,
        lastUsedMs: null,
        expiresMs: 10,
        revokedMs: null,
      };
      assert.deepEqual(keyVerdict(stored, 10), { ok: false, reason: "expired" });
    },
  },
  {
    name: "user tokens: GitHub's permissions decide (simulator)",
    async run() {
      const { fetch, control, repoId } = setup();
      await control("/users", { login: "w", token: "tok-w", repos: { "rt/app": "write" } });
      await control("/users", { login: "r", token: "tok-r", repos: { "rt/app": "read" } });
      const ask = async (token: string) => {
        const client = new GitHubClient({ auth: { kind: "token", token }, baseUrl: BASE, fetch });
        try {
          const res = await client.send<unknown>({
            operation: "check",
            route: "GET /repos/{owner}/{repo}",
            params: { owner: "rt", repo: "app" },
            idempotent: true,
          });
          return userAccess("rt/app", { kind: "ok", body: res.data });
        } catch (error) {
          assert.ok(error instanceof GitHubApiError);
          return userAccess("rt/app", {
            kind: "error",
            errorKind: error.kind,
            status: error.status,
          });
        }
      };
      assert.deepEqual(await ask("tok-w"), { ok: true, access: "write", repoId });
      assert.equal((await ask("tok-r")).ok, false);
      assert.equal(((await ask("ghs_unknown")) as { status: number }).status, 401);
    },
  },
  {
    name: "GitHub token kinds: X-OAuth-Scopes and the App's check of ghu_ tokens (simulator)",
    async run() {
      const { sim, fetch, control } = setup();
      await control("/users", { login: "s", token: "ghp_scoped", repos: { "rt/app": "write" } });
      await control("/users", {
        login: "n",
        token: "ghp_noscope",
        repos: { "rt/app": "write" },
        scopes: ["read:org"],
      });
      await control("/users", { login: "u", token: "ghu_ours", repos: { "rt/app": "write" } });
      await control("/users", {
        login: "o",
        token: "ghu_theirs",
        repos: { "rt/app": "write" },
        clientId: "Iv1.other",
      });
      const scoped = async (token: string) => {
        const client = new GitHubClient({ auth: { kind: "token", token }, baseUrl: BASE, fetch });
        const kind = githubTokenKind(token);
        try {
          const res = await client.send<unknown>({
            operation: "check",
            route: "GET /repos/{owner}/{repo}",
            params: { owner: "rt", repo: "app" },
            idempotent: true,
          });
          const answer = { kind: "ok" as const, body: res.data };
          return scopedTokenAccess("rt/app", kind, answer, res.headers["x-oauth-scopes"]);
        } catch (error) {
          // Without `repo`, GitHub hides a private repository (404).
          assert.ok(error instanceof GitHubApiError);
          const answer = { kind: "error" as const, errorKind: error.kind, status: error.status };
          return scopedTokenAccess("rt/app", kind, answer, undefined);
        }
      };
      assert.equal((await scoped("ghp_scoped")).ok, true);
      assert.equal(((await scoped("ghp_noscope")) as { status: number }).status, 403);
      const clientId = `Iv1.sim${sim.appId}`;
      const app = new GitHubClient({
        auth: { kind: "client", clientId, clientSecret: SIM_CLIENT_SECRET },
        baseUrl: BASE,
        fetch,
      });
      const check = async (token: string) => {
        try {
          const res = await app.send<unknown>({
            operation: "check",
            route: "POST /applications/{client_id}/token",
            params: { client_id: clientId, access_token: token },
            idempotent: true,
          });
          return appTokenVerdict(clientId, { kind: "ok", body: res.data });
        } catch (error) {
          assert.ok(error instanceof GitHubApiError);
          return appTokenVerdict(clientId, {
            kind: "error",
            errorKind: error.kind,
            status: error.status,
          });
        }
      };
      assert.deepEqual(await check("ghu_ours"), { ok: true, login: "u" });
      assert.equal(((await check("ghu_theirs")) as { status: number }).status, 401);
    },
  },
  {
    name: "OIDC tokens of the simulator's issuer, verified with jose",
    async run() {
      const { fetch, control, repoId } = setup();
      const issuer = `${BASE}/oidc`;
      const jwks = (await (await fetch(`${issuer}/.well-known/jwks`)).json()) as JSONWebKeySet;
      const keys = createLocalJWKSet(jwks);
      const mint = async (body: Record<string, unknown>) =>
        (await control<{ token: string }>("/oidc/token", { repository: "rt/app", ...body })).token;
      const settings = { issuer, audience: "https://sy.test", keys };
      const ok = await verifyActionsToken(await mint({ aud: "https://sy.test" }), settings);
      assert.equal(ok.ok, true);
      assert.ok(ok.ok && ok.repoId === repoId);
      if (ok.ok) {
        const entry = { repoId, fullName: "rt/app", installationId: 1, status: "active" as const };
        assert.equal(resolveBound("rt/app", ok, entry, "t").ok, true);
      }
      const wrong = await verifyActionsToken(await mint({ aud: "https://other.test" }), settings);
      assert.equal(wrong.ok, false);
      const foreign = await verifyActionsToken(
        await mint({ aud: "https://sy.test", signWith: "foreign" }),
        settings,
      );
      assert.equal(foreign.ok, false);
    },
  },
];
