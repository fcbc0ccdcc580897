// The simulator's token kinds (by prefix, as GitHub tells them apart): classic and OAuth
// tokens with their scopes (`X-OAuth-Scopes`, and what the `repo` scope opens), GitHub App user
// tokens checked by the App (`POST /applications/{client_id}/token`), fine-grained tokens,
// unknown tokens refused with 401 "Bad credentials", and the OAuth web flow's `ghu_` tokens.
import { describe, expect, it } from "vitest";
import { createGitHubSimulator } from "../../../infra/github-sim/app.ts";
import { SIM_CLIENT_SECRET } from "../../../infra/github-sim/oauth.ts";
import { call, control } from "./sim-call.ts";

const CLIENT_ID = "Iv1.sim1";
const basic = (id: string, secret: string) => ({
  authorization: `Basic ${btoa(`${id}:${secret}`)}`,
});

async function world() {
  const sim = createGitHubSimulator({ userTokens: ["octo-token"] });
  sim.state.createRepo("acme", "app");
  const pub = sim.state.createRepo("acme", "site");
  pub.private = false;
  sim.state.createIssue(pub, { title: "Public issue" }, "acme");
  const register = async (body: Record<string, unknown>) => {
    const r = await control(sim, "POST", "/users", {
      repos: { "acme/app": "write", "acme/site": "write" },
      ...body,
    });
    expect(r.status).toBe(201);
  };
  await register({ login: "cleo", token: "ghp_classic" }); // default scopes: repo
  await register({ login: "olly", token: "gho_oauth", scopes: ["repo", "read:org"] });
  await register({ login: "nora", token: "ghp_noscope", scopes: [] });
  await register({ login: "pia", token: "ghp_public", scopes: ["public_repo"] });
  await register({ login: "ulla", token: "ghu_ours" });
  await register({ login: "otto", token: "ghu_theirs", clientId: "Iv1.another-app" });
  await register({ login: "fay", token: "github_pat_fine" });
  return sim;
}

describe("token kinds", () => {
  it("sends a classic or OAuth token's scopes as X-OAuth-Scopes on every answer, and none for other kinds", async () => {
    const sim = await world();
    const scopes = async (token: string) =>
      (await call(sim, "GET", "/repos/acme/app", { token })).headers.get("x-oauth-scopes");
    expect(await scopes("ghp_classic")).toBe("repo");
    expect(await scopes("gho_oauth")).toBe("repo, read:org");
    expect(await scopes("ghp_noscope")).toBe("");
    expect(await scopes("ghu_ours")).toBeNull();
    expect(await scopes("github_pat_fine")).toBeNull();
    expect(await scopes("octo-token")).toBe("repo"); // an unprefixed (pre-2021) classic token
    // Also on a refusal to an authenticated token (here: no access without the repo scope).
    const refused = await call(sim, "GET", "/repos/acme/app/issues", { token: "ghp_noscope" });
    expect(refused.status).toBe(404);
    expect(refused.headers.get("x-oauth-scopes")).toBe("");
  });

  it("opens private repositories only to the repo scope; public_repo writes to public ones", async () => {
    const sim = await world();
    const status = async (method: string, path: string, token: string, body?: unknown) =>
      (await call(sim, method, path, { token, body })).status;
    expect(await status("GET", "/repos/acme/app", "ghp_noscope")).toBe(404);
    expect(await status("GET", "/repos/acme/site", "ghp_noscope")).toBe(200);
    // GitHub's permissions are the person's, whatever the token may do.
    const site = await call(sim, "GET", "/repos/acme/site", { token: "ghp_noscope" });
    expect(site.body.permissions).toMatchObject({ push: true });
    const comment = { body: "hi" };
    expect(await status("POST", "/repos/acme/site/issues/1/comments", "ghp_noscope", comment)).toBe(
      403,
    );
    expect(await status("POST", "/repos/acme/site/issues/1/comments", "ghp_public", comment)).toBe(
      201,
    );
    expect(await status("GET", "/repos/acme/app", "ghp_public")).toBe(404);
    expect(await status("GET", "/repos/acme/app", "ghp_classic")).toBe(200);
    // Fine-grained and App user tokens have no scopes: the user's roles decide.
    expect(await status("GET", "/repos/acme/app", "github_pat_fine")).toBe(200);
    expect(await status("GET", "/repos/acme/app", "ghu_ours")).toBe(200);
  });

  it("answers an unknown, garbage or installation-shaped token 401 Bad credentials", async () => {
    const sim = await world();
    for (const token of ["ghp_unknown", "gho_x", "ghu_x", "github_pat_x", "ghs_x", "garbage"]) {
      const r = await call(sim, "GET", "/repos/acme/app", { token });
      expect(r.status, token).toBe(401);
      expect(r.body.message).toBe("Bad credentials");
    }
  });

  it("refuses registrations a token's kind cannot carry", async () => {
    const sim = await world();
    const bad = async (body: Record<string, unknown>) => {
      const r = await control(sim, "POST", "/users", { login: "x", repos: {}, ...body });
      expect(r.status).toBe(400);
      return String(r.body.message);
    };
    expect(await bad({ token: "ghs_minted" })).toContain("installation tokens");
    expect(await bad({ token: "ghu_x", scopes: ["repo"] })).toContain("scopes");
    expect(await bad({ token: "ghp_x", clientId: "Iv1.x" })).toContain("clientId");
  });

  it("gives a registered user more tokens with the same roles", async () => {
    const sim = await world();
    const added = await control(sim, "POST", "/users/cleo/tokens", { token: "ghu_cleo" });
    expect(added).toMatchObject({
      status: 201,
      body: { login: "cleo", kind: "app-user", scopes: [], clientId: null },
    });
    const r = await call(sim, "GET", "/repos/acme/app", { token: "ghu_cleo" });
    expect(r.body.permissions).toMatchObject({ push: true, admin: false });
    expect((await call(sim, "GET", "/user", { token: "ghu_cleo" })).body.login).toBe("cleo");
    expect((await control(sim, "POST", "/users/cleo/tokens", { token: "ghu_ours" })).status).toBe(
      409,
    );
    expect((await control(sim, "POST", "/users/nobody/tokens", { token: "ghu_n" })).status).toBe(
      404,
    );
  });
});

describe("POST /applications/{client_id}/token", () => {
  const check = (
    sim: Awaited<ReturnType<typeof world>>,
    token: unknown,
    secret = SIM_CLIENT_SECRET,
  ) =>
    call(sim, "POST", `/applications/${CLIENT_ID}/token`, {
      headers: basic(CLIENT_ID, secret),
      body: token === undefined ? {} : { access_token: token },
    });

  it("answers 200 with the authorization for a user token of the simulated App", async () => {
    const sim = await world();
    const ours = await check(sim, "ghu_ours");
    expect(ours.status).toBe(200);
    expect(ours.body).toMatchObject({
      token: "ghu_ours",
      token_last_eight: "ghu_ours".slice(-8),
      scopes: [],
      app: { client_id: CLIENT_ID },
      user: { login: "ulla" },
      expires_at: null,
    });
    expect(typeof ours.body.hashed_token).toBe("string");
    // The unrestricted user's App token (what the OAuth flow gives octocat) is the App's too.
    sim.userTokens.push("ghu_octocat");
    expect((await check(sim, "ghu_octocat")).body.user.login).toBe("octocat");
  });

  it("answers 404 for another App's token, other kinds and unknown tokens", async () => {
    const sim = await world();
    for (const token of ["ghu_theirs", "ghp_classic", "gho_oauth", "github_pat_fine", "ghu_nope"])
      expect((await check(sim, token)).status, token).toBe(404);
    const minted = sim.tokens.mint(sim.state.install("acme", "all", "octocat").id, sim.now());
    expect((await check(sim, minted.token)).status).toBe(404);
  });

  it("wants the App's client credentials (401), its own client id (404) and a token (422)", async () => {
    const sim = await world();
    expect((await check(sim, "ghu_ours", "wrong-secret")).status).toBe(401);
    const none = await call(sim, "POST", `/applications/${CLIENT_ID}/token`, {
      body: { access_token: "ghu_ours" },
    });
    expect(none.status).toBe(401);
    const bearer = await call(sim, "POST", `/applications/${CLIENT_ID}/token`, {
      token: "ghu_ours",
      body: { access_token: "ghu_ours" },
    });
    expect(bearer.status).toBe(401);
    const other = await call(sim, "POST", "/applications/Iv1.another-app/token", {
      headers: basic(CLIENT_ID, SIM_CLIENT_SECRET),
      body: { access_token: "ghu_theirs" },
    });
    expect(other.status).toBe(404);
    expect((await check(sim, undefined)).status).toBe(422);
  });
});

describe("the OAuth web flow", () => {
  async function signIn(sim: Awaited<ReturnType<typeof world>>, login: string) {
    const authorize = await sim.fetch(
      new Request(
        `http://sim.test/login/oauth/authorize?client_id=${CLIENT_ID}&redirect_uri=http://app.test/cb&state=s&login=${login}`,
      ),
    );
    const code = new URL(authorize.headers.get("location")!).searchParams.get("code");
    const token = await call(sim, "POST", "/login/oauth/access_token", {
      body: { client_id: CLIENT_ID, client_secret: SIM_CLIENT_SECRET, code },
    });
    return String(token.body.access_token);
  }

  it("hands out the user's ghu_ token of the App: its roles, accepted by the App's check, the same each time", async () => {
    const sim = await world();
    const token = await signIn(sim, "cleo");
    expect(token).toMatch(/^ghu_/);
    expect(await signIn(sim, "cleo")).toBe(token);
    expect((await call(sim, "GET", "/user", { token })).body.login).toBe("cleo");
    const repo = await call(sim, "GET", "/repos/acme/app", { token });
    expect(repo.body.permissions).toMatchObject({ push: true });
    // Her classic token still works beside it.
    expect((await call(sim, "GET", "/user", { token: "ghp_classic" })).body.login).toBe("cleo");
    const checked = await call(sim, "POST", `/applications/${CLIENT_ID}/token`, {
      headers: basic(CLIENT_ID, SIM_CLIENT_SECRET),
      body: { access_token: token },
    });
    expect(checked.body.user.login).toBe("cleo");
    // octocat (never registered) gets an App token that sees everything; a stranger one that sees nothing.
    const octo = await signIn(sim, "octocat");
    expect((await call(sim, "GET", "/repos/acme/app", { token: octo })).status).toBe(200);
    const stranger = await signIn(sim, "stranger");
    expect((await call(sim, "GET", "/repos/acme/app", { token: stranger })).status).toBe(404);
  });

  it("lists the App's installations only to a user token of the App", async () => {
    const sim = await world();
    const inst = sim.state.install("acme", "all", "octocat");
    const list = async (token: string) => call(sim, "GET", "/user/installations", { token });
    const ours = await list("ghu_ours");
    expect(ours.body.installations.map((i: { id: number }) => i.id)).toEqual([inst.id]);
    expect((await list("ghu_theirs")).body).toEqual({ total_count: 0, installations: [] });
    const classic = await list("ghp_classic");
    expect(classic.status).toBe(403);
    expect(classic.body.message).toContain("GitHub App");
    const repos = await call(sim, "GET", `/user/installations/${inst.id}/repositories`, {
      token: "ghu_ours",
    });
    expect(repos.body.repositories.map((r: { full_name: string }) => r.full_name)).toEqual([
      "acme/app",
      "acme/site",
    ]);
    expect(
      (
        await call(sim, "GET", `/user/installations/${inst.id}/repositories`, {
          token: "ghu_theirs",
        })
      ).status,
    ).toBe(404);
  });
});
