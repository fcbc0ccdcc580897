// Organization memberships in the simulator: set through the control API, read by the App
// with `GET /orgs/{org}/memberships/{username}` (organization permission `members: read`), and
// what an active owner may do (admin on every repository of the organization).
import { describe, expect, it } from "vitest";
import { createGitHubSimulator } from "../../../infra/github-sim/app.ts";
import { call, control } from "./sim-call.ts";

async function world() {
  const sim = createGitHubSimulator();
  sim.state.createRepo("acme", "app");
  sim.state.createRepo("acme", "lib");
  const inst = sim.state.install("acme", "all", "octocat");
  const other = sim.state.install("beta", ["web"], "octocat");
  for (const [login, role, state] of [
    ["ada", "admin", "active"],
    ["mo", "member", "active"],
    ["pat", "admin", "pending"],
  ] as const) {
    const r = await control(sim, "POST", "/orgs/acme/members", { login, role, state });
    expect(r).toMatchObject({ status: 201, body: { org: "acme", login, role, state } });
  }
  for (const login of ["ada", "mo", "pat", "eve"])
    await control(sim, "POST", "/users", { login, token: `ghu_${login}`, repos: {} });
  const token = sim.tokens.mint(inst.id, sim.now()).token;
  const betaToken = sim.tokens.mint(other.id, sim.now()).token;
  return { sim, inst, token, betaToken };
}

describe("GET /orgs/{org}/memberships/{username}", () => {
  it("answers the App's installation token with the role and state", async () => {
    const { sim, token } = await world();
    const ada = await call(sim, "GET", "/orgs/acme/memberships/ada", { token });
    expect(ada).toMatchObject({
      status: 200,
      body: {
        role: "admin",
        state: "active",
        user: { login: "ada" },
        organization: { login: "acme" },
      },
    });
    expect((await call(sim, "GET", "/orgs/acme/memberships/pat", { token })).body).toMatchObject({
      role: "admin",
      state: "pending",
    });
    expect((await call(sim, "GET", "/orgs/acme/memberships/mo", { token })).body.role).toBe(
      "member",
    );
    expect((await call(sim, "GET", "/orgs/acme/memberships/eve", { token })).status).toBe(404);
  });

  it("refuses an installation without members: read, and another organization's installation (403)", async () => {
    const { sim, inst, token, betaToken } = await world();
    const other = await call(sim, "GET", "/orgs/acme/memberships/ada", { token: betaToken });
    expect(other).toMatchObject({
      status: 403,
      body: { message: "Resource not accessible by integration" },
    });
    const revoked = await control(sim, "PUT", `/installations/${inst.id}/permissions`, {
      permissions: { members: null },
    });
    expect(revoked.body.permissions).not.toHaveProperty("members");
    const refused = await call(sim, "GET", "/orgs/acme/memberships/ada", { token });
    expect(refused).toMatchObject({
      status: 403,
      body: { message: "Resource not accessible by integration" },
    });
    // The installation says so too (GET /app/installations/{id} would show it).
    await control(sim, "PUT", `/installations/${inst.id}/permissions`, {
      permissions: { members: "read" },
    });
    expect((await call(sim, "GET", "/orgs/acme/memberships/ada", { token })).status).toBe(200);
  });

  it("answers a user token of an active member, and anyone about themselves", async () => {
    const { sim } = await world();
    expect((await call(sim, "GET", "/orgs/acme/memberships/ada", { token: "ghu_mo" })).status).toBe(
      200,
    );
    expect(
      (await call(sim, "GET", "/orgs/acme/memberships/ada", { token: "ghu_eve" })).status,
    ).toBe(404);
    expect(
      (await call(sim, "GET", "/orgs/acme/memberships/ada", { token: "ghu_pat" })).status,
    ).toBe(404);
    expect(
      (await call(sim, "GET", "/orgs/acme/memberships/pat", { token: "ghu_pat" })).status,
    ).toBe(200);
  });

  it("forgets a removed member and everything on reset", async () => {
    const { sim, token } = await world();
    expect((await control(sim, "DELETE", "/orgs/acme/members/mo")).status).toBe(200);
    expect((await control(sim, "DELETE", "/orgs/acme/members/mo")).status).toBe(404);
    expect((await call(sim, "GET", "/orgs/acme/memberships/mo", { token })).status).toBe(404);
    await control(sim, "POST", "/reset");
    expect((await control(sim, "GET", "/orgs/acme/members")).body).toEqual({ members: [] });
  });

  it("refuses a role or state GitHub does not have", async () => {
    const { sim } = await world();
    expect(
      (await control(sim, "POST", "/orgs/acme/members", { login: "x", role: "owner" })).status,
    ).toBe(400);
    expect(
      (await control(sim, "POST", "/orgs/acme/members", { login: "x", state: "invited" })).status,
    ).toBe(400);
  });
});

describe("an active organization owner", () => {
  it("has admin on every repository of the organization; a pending owner and a member have none", async () => {
    const { sim, inst } = await world();
    const repos = (token: string) =>
      call(sim, "GET", `/user/installations/${inst.id}/repositories`, { token });
    const ada = await repos("ghu_ada");
    expect(ada.body.repositories.map((r: { full_name: string }) => r.full_name)).toEqual([
      "acme/app",
      "acme/lib",
    ]);
    expect(
      ada.body.repositories.every((r: { permissions: { admin: boolean } }) => r.permissions.admin),
    ).toBe(true);
    expect((await repos("ghu_pat")).status).toBe(404);
    expect((await repos("ghu_mo")).status).toBe(404);
    const perm = await call(sim, "GET", "/repos/acme/app/collaborators/ada/permission", {
      token: sim.tokens.mint(inst.id, sim.now()).token,
    });
    expect(perm.body).toMatchObject({ permission: "admin", role_name: "admin" });
  });
});
