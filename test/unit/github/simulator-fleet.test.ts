// The simulator's pieces for the fleet API: users with a role per repository (permissions,
// /user, collaborator permission, author_association) and the GitHub Actions OIDC issuer.
import { createLocalJWKSet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { createGitHubSimulator } from "../../../infra/github-sim/app.ts";
import { BASE, call } from "./sim-call.ts";
import { issue, REPO } from "./sim-harness.ts";

async function seeded() {
  const sim = createGitHubSimulator({ webhookSecret: "s" });
  const seed = await call(sim, "POST", "/_sim/seed", {
    body: { snapshot: { repo: REPO, issues: [issue(1), issue(2)] } },
  });
  expect(seed.body).toMatchObject({ repo: REPO });
  expect(
    (await call(sim, "POST", "/_sim/repos", { body: { owner: "acme", name: "lib" } })).status,
  ).toBe(201);
  const installationId = seed.body.installationId as number;
  const installationToken = sim.tokens.mint(installationId, sim.now()).token;
  const users: [string, Record<string, string>][] = [
    ["ada", { "acme/app": "admin" }],
    ["mia", { "acme/app": "maintain" }],
    ["wes", { "acme/app": "write", "acme/lib": "read" }],
    ["tia", { "acme/app": "triage" }],
    ["rex", { "acme/app": "read" }],
    ["lou", { "acme/lib": "admin" }],
  ];
  for (const [login, repos] of users) {
    const r = await call(sim, "POST", "/_sim/users", {
      body: { login, token: `${login}-token`, repos },
    });
    expect({ status: r.status, body: r.body }).toEqual({ status: 201, body: { login } });
  }
  return { sim, installationToken };
}

function b64urlBytes(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(b64.padEnd(Math.ceil(b64.length / 4) * 4, "="));
  return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
}

function decodeJwt(jwt: string) {
  const [h, p] = jwt.split(".") as [string, string, string];
  const json = (s: string) => JSON.parse(new TextDecoder().decode(b64urlBytes(s)));
  return { header: json(h), claims: json(p) };
}

/** Verifies an RS256 JWT against a JWKS with WebCrypto alone: the kid's key and the signature. */
async function verifyWithJwks(jwt: string, jwks: { keys: JsonWebKey[] }): Promise<boolean> {
  const [h, p, sig] = jwt.split(".") as [string, string, string];
  const { header } = decodeJwt(jwt);
  if (header.alg !== "RS256") return false;
  const jwk = jwks.keys.find((k) => (k as { kid?: string }).kid === header.kid);
  if (!jwk) return false;
  const key = await crypto.subtle.importKey(
    "jwk",
    { kty: jwk.kty, n: jwk.n, e: jwk.e },
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    false,
    ["verify"],
  );
  return crypto.subtle.verify(
    "RSASSA-PKCS1-v1_5",
    key,
    b64urlBytes(sig),
    new TextEncoder().encode(`${h}.${p}`),
  );
}

describe("simulator users with a role per repository", () => {
  it("derives GitHub's permissions object from each role, with either auth scheme", async () => {
    const { sim } = await seeded();
    const expected = {
      ada: { admin: true, maintain: true, push: true, triage: true, pull: true },
      mia: { admin: false, maintain: true, push: true, triage: true, pull: true },
      wes: { admin: false, maintain: false, push: true, triage: true, pull: true },
      tia: { admin: false, maintain: false, push: false, triage: true, pull: true },
      rex: { admin: false, maintain: false, push: false, triage: false, pull: true },
    };
    for (const [login, permissions] of Object.entries(expected)) {
      for (const scheme of ["Bearer", "token"]) {
        const r = await call(sim, "GET", "/repos/acme/app", { token: `${login}-token`, scheme });
        expect(r.status).toBe(200);
        expect(r.body.full_name).toBe("acme/app");
        expect(r.body.permissions).toEqual(permissions);
      }
    }
    const lib = await call(sim, "GET", "/repos/acme/lib", { token: "wes-token" });
    expect(lib.body.permissions).toEqual(expected.rex);
  });

  it("hides a repository the user has no role on (404), including its issues and GraphQL", async () => {
    const { sim } = await seeded();
    const repo = await call(sim, "GET", "/repos/acme/app", { token: "lou-token" });
    expect(repo.status).toBe(404);
    expect(repo.body.message).toBe("Not Found");
    expect(
      (await call(sim, "GET", "/repos/acme/app/issues/1", { token: "lou-token" })).status,
    ).toBe(404);
    expect((await call(sim, "GET", "/repos/acme/lib", { token: "lou-token" })).status).toBe(200);
    const query = '{ repository(owner: "acme", name: "app") { issue(number: 1) { title } } }';
    const gql = (token: string) => call(sim, "POST", "/graphql", { token, body: { query } });
    expect((await gql("rex-token")).body.data.repository.issue.title).toBe("Issue 1");
    const hidden = await gql("lou-token");
    expect(hidden.body.data.repository).toBeNull();
    expect(JSON.stringify(hidden.body.errors)).toContain("NOT_FOUND");
  });

  it("answers an unknown token 401 Bad credentials; userTokens stand for octocat, who sees every repository", async () => {
    const { sim } = await seeded();
    for (const scheme of ["Bearer", "token"]) {
      const r = await call(sim, "GET", "/repos/acme/app", { token: "whatever", scheme });
      expect(r).toMatchObject({ status: 401, body: { message: "Bad credentials" } });
    }
    expect((await call(sim, "GET", "/user", { token: "ghp_garbage" })).status).toBe(401);
    const listed = createGitHubSimulator({ userTokens: ["listed"] });
    listed.state.createRepo("acme", "app");
    listed.state.registerUser("wes", "wes-token", { "acme/app": "write" });
    expect((await call(listed, "GET", "/repos/acme/app", { token: "other" })).status).toBe(401);
    const octocat = await call(listed, "GET", "/repos/acme/app", { token: "listed" });
    expect(octocat.status).toBe(200);
    expect(octocat.body).not.toHaveProperty("permissions");
    expect((await call(listed, "GET", "/user", { token: "listed" })).body).toMatchObject({
      login: "octocat",
      type: "User",
    });
    expect((await call(listed, "GET", "/repos/acme/app", { token: "wes-token" })).status).toBe(200);
  });

  it("answers GET /user as GitHub does for a user token", async () => {
    const { sim, installationToken } = await seeded();
    const me = await call(sim, "GET", "/user", { token: "wes-token", scheme: "token" });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      login: "wes",
      type: "User",
      site_admin: false,
      url: `${BASE}/users/wes`,
    });
    expect(me.body.id).toEqual(expect.any(Number));
    // The id is the same everywhere the user appears.
    const perm = await call(sim, "GET", "/repos/acme/app/collaborators/wes/permission", {
      token: installationToken,
    });
    expect(perm.body.user.id).toBe(me.body.id);
    expect((await call(sim, "GET", "/user", { token: installationToken })).status).toBe(403);
  });

  it("replaces a user on re-registration, refuses a token held by another login, and resets", async () => {
    const { sim } = await seeded();
    await call(sim, "POST", "/_sim/users", {
      body: { login: "wes", token: "wes-token-2", repos: { "acme/app": "admin" } },
    });
    expect(
      (await call(sim, "GET", "/repos/acme/app", { token: "wes-token-2" })).body.permissions.admin,
    ).toBe(true);
    // The old token is no longer registered: GitHub no longer knows it.
    expect((await call(sim, "GET", "/repos/acme/app", { token: "wes-token" })).status).toBe(401);
    const clash = await call(sim, "POST", "/_sim/users", {
      body: { login: "eve", token: "ada-token", repos: {} },
    });
    expect(clash.status).toBe(409);
    const bad = await call(sim, "POST", "/_sim/users", {
      body: { login: "eve", token: "t", repos: { "acme/app": "owner" } },
    });
    expect(bad.status).toBe(400);
    await call(sim, "POST", "/_sim/reset");
    sim.state.createRepo("acme", "app");
    expect((await call(sim, "GET", "/repos/acme/app", { token: "ada-token" })).status).toBe(401);
  });
});

describe("collaborator permission", () => {
  it("maps each role, the owner and bots, and refuses an unknown login", async () => {
    const { sim, installationToken } = await seeded();
    const level = (login: string) =>
      call(sim, "GET", `/repos/acme/app/collaborators/${login}/permission`, {
        token: installationToken,
      });
    const cases: [string, string, string][] = [
      ["ada", "admin", "admin"],
      ["mia", "write", "maintain"],
      ["wes", "write", "write"],
      ["tia", "read", "triage"],
      ["rex", "read", "read"],
      ["acme", "admin", "admin"],
      ["lou", "none", "none"],
      ["switchyard-sim[bot]", "none", "none"],
    ];
    for (const [login, permission, role] of cases) {
      const r = await level(login);
      expect(r.status, login).toBe(200);
      expect(r.body).toMatchObject({
        permission,
        role_name: role,
        user: { login, role_name: role },
      });
    }
    expect((await level("ada")).body.user.permissions).toEqual({
      admin: true,
      maintain: true,
      push: true,
      triage: true,
      pull: true,
    });
    const unknown = await level("stranger");
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe("stranger is not a user");
    // The installation reaches only its own repositories.
    expect(
      (
        await call(sim, "GET", "/repos/acme/lib/collaborators/lou/permission", {
          token: installationToken,
        })
      ).status,
    ).toBe(404);
  });
});

describe("author_association on comments", () => {
  it("is OWNER, COLLABORATOR or NONE in REST responses and issue_comment webhooks", async () => {
    const { sim, installationToken } = await seeded();
    await sim.webhooks.drain();
    const comment = (token: string, body: string) =>
      call(sim, "POST", "/repos/acme/app/issues/1/comments", { token, body: { body } });
    expect((await comment("wes-token", "writer")).body.author_association).toBe("COLLABORATOR");
    expect((await comment("mia-token", "maintainer")).body.author_association).toBe("COLLABORATOR");
    expect((await comment("ada-token", "admin")).body.author_association).toBe("COLLABORATOR");
    expect((await comment("tia-token", "triager")).body.author_association).toBe("NONE");
    expect((await comment("rex-token", "reader")).body.author_association).toBe("NONE");
    expect((await comment(installationToken, "bot")).body.author_association).toBe("NONE");
    await call(sim, "POST", "/_sim/repos/acme/app/issues/1/comments", {
      body: { body: "owner", actor: "acme" },
    });
    await call(sim, "POST", "/_sim/repos/acme/app/issues/1/comments", {
      body: { body: "stranger", actor: "zed" },
    });
    const expected = [
      ["wes", "COLLABORATOR"],
      ["mia", "COLLABORATOR"],
      ["ada", "COLLABORATOR"],
      ["tia", "NONE"],
      ["rex", "NONE"],
      ["switchyard-sim[bot]", "NONE"],
      ["acme", "OWNER"],
      ["zed", "NONE"],
    ];
    const listed = await call(sim, "GET", "/repos/acme/app/issues/1/comments", {
      token: "wes-token",
    });
    expect(
      listed.body.map((c: { user: { login: string }; author_association: string }) => [
        c.user.login,
        c.author_association,
      ]),
    ).toEqual(expected);
    const hooks = (await sim.webhooks.drain())
      .filter((d) => d.event === "issue_comment")
      .map((d) => JSON.parse(d.body));
    expect(hooks.map((p) => [p.comment.user.login, p.comment.author_association])).toEqual(
      expected,
    );
    // Edits render the association of the comment's author, not the editor's.
    const id = listed.body.at(-2).id as number;
    await call(sim, "PATCH", `/_sim/comments/${id}`, { body: { body: "edited", actor: "zed" } });
    const [edited] = (await sim.webhooks.drain()).map((d) => JSON.parse(d.body));
    expect(edited.comment.author_association).toBe("OWNER");
  });
});

describe("the GitHub Actions OIDC issuer", () => {
  async function oidcSim() {
    const { sim } = await seeded();
    await call(sim, "POST", "/_sim/clock", { body: { now: "2026-11-20T10:00:00Z" } });
    const jwks = (await call(sim, "GET", "/oidc/.well-known/jwks")).body;
    const mint = (body: Record<string, unknown>) => call(sim, "POST", "/_sim/oidc/token", { body });
    return { sim, jwks, mint };
  }

  it("serves discovery and a JWKS under {origin}/oidc", async () => {
    const { sim, jwks } = await oidcSim();
    const config = await call(sim, "GET", "/oidc/.well-known/openid-configuration");
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({
      issuer: `${BASE}/oidc`,
      jwks_uri: `${BASE}/oidc/.well-known/jwks`,
      response_types_supported: ["id_token"],
      id_token_signing_alg_values_supported: ["RS256"],
      scopes_supported: ["openid"],
    });
    expect(config.body.subject_types_supported).toContain("public");
    expect(config.body.claims_supported).toEqual(
      expect.arrayContaining(["sub", "aud", "repository", "repository_id", "repository_owner_id"]),
    );
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig" });
    expect(jwks.keys[0].kid).toEqual(expect.any(String));
    expect(jwks.keys[0]).not.toHaveProperty("d");
    // The same keys on every call, and after a reset.
    await call(sim, "POST", "/_sim/reset");
    expect((await call(sim, "GET", "/oidc/.well-known/jwks")).body).toEqual(jwks);
  });

  it("mints tokens with Actions' claims that verify against the JWKS", async () => {
    const { sim, jwks, mint } = await oidcSim();
    const minted = await mint({ repository: "acme/app", aud: "https://fleet.example" });
    expect(minted.status).toBe(201);
    const { token, expiresAt } = minted.body;
    expect(expiresAt).toBe("2026-11-20T10:05:00Z");
    expect(await verifyWithJwks(token, jwks)).toBe(true);
    const { header, claims } = decodeJwt(token);
    expect(header).toEqual({ alg: "RS256", typ: "JWT", kid: jwks.keys[0].kid });
    const repo = sim.state.repo("acme", "app")!;
    const iat = Date.parse("2026-11-20T10:00:00Z") / 1000;
    expect(claims).toMatchObject({
      iss: `${BASE}/oidc`,
      aud: "https://fleet.example",
      sub: "repo:acme/app:ref:refs/heads/main",
      repository: "acme/app",
      repository_id: String(repo.id),
      repository_owner: "acme",
      repository_owner_id: String(repo.ownerId),
      ref: "refs/heads/main",
      workflow: expect.any(String),
      actor: expect.any(String),
      run_id: expect.stringMatching(/^\d+$/),
      jti: expect.any(String),
      iat,
      nbf: iat,
      exp: iat + 300,
    });
    expect(claims.sha).toMatch(/^[0-9a-f]{40}$/);
    // jose agrees (signature, kid, issuer, audience, times in simulator time).
    const verified = await jwtVerify(token, createLocalJWKSet(jwks), {
      issuer: `${BASE}/oidc`,
      audience: "https://fleet.example",
      currentDate: new Date("2026-11-20T10:01:00Z"),
    });
    expect(verified.payload.repository).toBe("acme/app");
    // Extra and overriding claims.
    const custom = await mint({
      repository: "acme/app",
      aud: "a",
      expiresInSeconds: 60,
      claims: { actor: "wes", environment: "prod" },
    });
    expect(decodeJwt(custom.body.token).claims).toMatchObject({
      actor: "wes",
      environment: "prod",
      exp: iat + 60,
    });
  });

  it("signs with a foreign key on request, which the JWKS does not verify", async () => {
    const { jwks, mint } = await oidcSim();
    const own = decodeJwt((await mint({ repository: "acme/app", aud: "a" })).body.token).header;
    const foreign = (await mint({ repository: "acme/app", aud: "a", signWith: "foreign" })).body
      .token;
    const { header } = decodeJwt(foreign);
    expect(header.alg).toBe("RS256");
    expect(header.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(header.kid).not.toBe(own.kid);
    expect(own.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await verifyWithJwks(foreign, jwks)).toBe(false);
    // Even presented under the issuer's kid, its signature does not match the issuer's key.
    const [, p, s] = foreign.split(".");
    const relabelled = `${btoa(JSON.stringify({ ...header, kid: own.kid }))
      .replace(/=+$/, "")
      .replace(/\+/g, "-")
      .replace(/\//g, "_")}.${p}.${s}`;
    expect(await verifyWithJwks(relabelled, jwks)).toBe(false);
    await expect(
      jwtVerify(foreign, createLocalJWKSet(jwks), {
        currentDate: new Date("2026-11-20T10:00:00Z"),
      }),
    ).rejects.toThrow();
  });

  it("mints an already-expired token for a negative lifetime and follows the simulator clock", async () => {
    const { sim, jwks, mint } = await oidcSim();
    const expired = await mint({ repository: "acme/app", aud: "a", expiresInSeconds: -60 });
    expect(expired.body.expiresAt).toBe("2026-11-20T09:59:00Z");
    const { claims } = decodeJwt(expired.body.token);
    expect(claims.exp).toBeLessThan(Math.floor(sim.now().getTime() / 1000));
    expect(claims.exp).toBe(claims.iat - 60);
    expect(await verifyWithJwks(expired.body.token, jwks)).toBe(true); // well signed, just expired
    await expect(
      jwtVerify(expired.body.token, createLocalJWKSet(jwks), { currentDate: sim.now() }),
    ).rejects.toMatchObject({ code: "ERR_JWT_EXPIRED" });
    await call(sim, "POST", "/_sim/clock", { body: { advanceSeconds: 3600 } });
    const later = decodeJwt((await mint({ repository: "acme/app", aud: "a" })).body.token).claims;
    expect(later.iat).toBe(Date.parse("2026-11-20T11:00:00Z") / 1000);
  });

  it("refuses a repository that does not exist and bad input", async () => {
    const { mint } = await oidcSim();
    const missing = await mint({ repository: "acme/nope", aud: "a" });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe("Not Found");
    expect((await mint({ repository: "acme", aud: "a" })).status).toBe(400);
    expect((await mint({ repository: "acme/app" })).status).toBe(400);
    expect((await mint({ repository: "acme/app", aud: "a", signWith: "other" })).status).toBe(400);
  });

  it("answers Actions' token request endpoint for registered request tokens", async () => {
    const { sim, jwks } = await oidcSim();
    const reg = await call(sim, "POST", "/_sim/oidc/request-tokens", {
      body: { repository: "acme/app", token: "req-123" },
    });
    expect(reg.status).toBe(201);
    expect(
      (
        await call(sim, "POST", "/_sim/oidc/request-tokens", {
          body: { repository: "acme/x", token: "t" },
        })
      ).status,
    ).toBe(404);
    // actions/core appends `&audience=` to a URL that already has a query.
    const url = "/_sim/oidc/request?api-version=2.0&audience=https%3A%2F%2Ffleet.example";
    const first = await call(sim, "GET", url, { token: "req-123", scheme: "bearer" });
    expect(first.status).toBe(200);
    expect(Object.keys(first.body)).toEqual(["value"]);
    const second = await call(sim, "GET", url, { token: "req-123", scheme: "bearer" });
    expect(second.body.value).not.toBe(first.body.value);
    const { claims } = decodeJwt(first.body.value);
    expect(claims).toMatchObject({
      iss: `${BASE}/oidc`,
      aud: "https://fleet.example",
      repository: "acme/app",
      exp: claims.iat + 300,
    });
    expect(await verifyWithJwks(first.body.value, jwks)).toBe(true);
    const unknown = await call(sim, "GET", url, { token: "nope", scheme: "bearer" });
    expect(unknown.status).toBe(401);
    expect((await call(sim, "GET", url)).status).toBe(401);
    await call(sim, "POST", "/_sim/reset");
    expect((await call(sim, "GET", url, { token: "req-123", scheme: "bearer" })).status).toBe(401);
  });
});
