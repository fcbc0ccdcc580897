// Organization memberships over HTTP: the control API that sets them and the REST read
// `GET /orgs/{org}/memberships/{username}` (what switchyard asks to learn whether a caller is
// an active owner of an organization).
import { z } from "zod";
import type { GitHubSimulator } from "./app.ts";
import { input } from "./control.ts";
import { MEMBERSHIP_STATES, ORG_ROLES, type SimMembership } from "./orgs.ts";
import { NOT_ACCESSIBLE, requirePermission } from "./permissions.ts";
import { renderOrganization, renderUser } from "./render.ts";
import { SimHttpError } from "./state.ts";

const Login = z.string().regex(/^[^/\s]+$/, "expected a login");

function renderMembership(base: string, m: SimMembership) {
  return {
    url: `${base}/orgs/${m.org}/memberships/${m.login}`,
    state: m.state,
    role: m.role,
    organization_url: `${base}/orgs/${m.org}`,
    organization: renderOrganization(base, m.org),
    user: renderUser(base, m.login),
    permissions: { can_create_repository: m.role === "admin" },
  };
}

export function registerOrgRoutes(sim: GitHubSimulator): void {
  const { app, state } = sim;

  app.post("/_sim/orgs/:org/members", async (c) => {
    const body = await input(
      c,
      z.object({
        login: Login,
        role: z.enum(ORG_ROLES).default("member"),
        state: z.enum(MEMBERSHIP_STATES).default("active"),
      }),
    );
    const m = state.orgs.setMember(c.req.param("org"), body.login, body.role, body.state);
    return c.json({ org: m.org, login: m.login, role: m.role, state: m.state }, 201);
  });

  app.delete("/_sim/orgs/:org/members/:login", (c) => {
    if (!state.orgs.removeMember(c.req.param("org"), c.req.param("login")))
      throw new SimHttpError(404, `control API: ${c.req.param("login")} is not a member`);
    return c.json({ deleted: true });
  });

  app.get("/_sim/orgs/:org/members", (c) =>
    c.json({ members: state.orgs.members(c.req.param("org")) }),
  );

  /**
   * An installation token needs the organization permission `members: read`, and reaches only
   * its own organization; a user token reads memberships of organizations it is an active
   * member of (and its own membership anywhere). Not a member: 404.
   */
  sim.api("GET", "/orgs/{org}/memberships/{username}", "token", "core", (req) => {
    const org = req.params.org!;
    const identity = req.identity;
    if (identity.kind === "installation") {
      requirePermission(state, identity, "members");
      const inst = state.installations.get(identity.installationId);
      if (inst?.account.toLowerCase() !== org.toLowerCase())
        throw new SimHttpError(403, NOT_ACCESSIBLE);
    } else if (identity.kind === "user" && identity.registered) {
      const self = identity.login.toLowerCase() === req.params.username!.toLowerCase();
      if (!self && state.orgs.membership(org, identity.login)?.state !== "active")
        throw new SimHttpError(404, "Not Found");
    }
    const m = state.orgs.membership(org, req.params.username!);
    if (!m) throw new SimHttpError(404, "Not Found");
    return { status: 200, body: renderMembership(req.base, m) };
  });
}
