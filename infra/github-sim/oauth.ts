// The App's user authorization (OAuth web flow), as the status page's login uses it:
// `GET /login/oauth/authorize` signs a user in at once (no page to click through) and sends the
// browser back to `redirect_uri` with a one-time code and the `state`; `POST
// /login/oauth/access_token` trades the code for that user's token. Plus the two REST reads a
// user token makes of the App's installations: `GET /user/installations` and
// `GET /user/installations/{installation_id}/repositories`.
//
// Who signs in: the `login` query parameter (GitHub's account hint) when given, else the
// default set by `POST /_sim/oauth {"login": "..."}`, else `octocat`. The token is the user's
// registered token (`POST /_sim/users`), so what the user may see is exactly the roles it was
// registered with; a login never registered is registered on the spot with no repositories
// (a user without access), except `octocat`, which gets a fresh token and sees everything.
import type { Context } from "hono";
import { z } from "zod";
import type { ApiRequest, GitHubSimulator } from "./app.ts";
import { convertedApp } from "./manifest.ts";
import { renderInstallation, renderRepo, renderRepoPermissions } from "./render.ts";
import { SimHttpError } from "./state.ts";

/** The client secret of the simulator's App until a manifest conversion makes a new one. */
export const SIM_CLIENT_SECRET = "switchyard-sim-client-secret";
/** GitHub's OAuth codes expire after 10 minutes and work once. */
const CODE_TTL_MS = 10 * 60_000;

interface PendingCode {
  login: string;
  clientId: string;
  redirectUri: string | null;
  issuedMs: number;
}

interface OAuthState {
  defaultLogin: string;
  codes: Map<string, PendingCode>;
}

const states = new WeakMap<GitHubSimulator, OAuthState>();

function oauthState(sim: GitHubSimulator): OAuthState {
  let s = states.get(sim);
  if (!s) {
    s = { defaultLogin: "octocat", codes: new Map() };
    states.set(sim, s);
  }
  return s;
}

/** The App's OAuth client credentials (those of the last manifest conversion, if any). */
export function oauthClient(sim: GitHubSimulator): { clientId: string; clientSecret: string } {
  const converted = convertedApp(sim);
  return converted
    ? { clientId: converted.clientId, clientSecret: converted.clientSecret }
    : { clientId: `Iv1.sim${sim.appId}`, clientSecret: SIM_CLIENT_SECRET };
}

function randomHex(bytes: number): string {
  return [...crypto.getRandomValues(new Uint8Array(bytes))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/** GitHub answers OAuth errors with 200 and an `error` field (JSON when asked for JSON). */
function oauthError(c: Context, error: string, description: string) {
  return c.json({
    error,
    error_description: description,
    error_uri: `https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#${error.replace(/_/g, "-")}`,
  });
}

/** The user's token: the registered one, or a new one for `octocat` / a login never seen. */
function tokenFor(sim: GitHubSimulator, login: string): string {
  const user = sim.state.user(login);
  if (user) return user.token;
  const token = `ghu_${randomHex(18)}`;
  // Any token the simulator does not know stands for octocat; anyone else is registered with
  // no repositories, so it is a real user without access.
  if (login.toLowerCase() !== "octocat") sim.state.registerUser(login, token, {});
  return token;
}

export function registerOAuthRoutes(sim: GitHubSimulator): void {
  const { state } = sim;

  sim.app.post("/_sim/oauth", async (c) => {
    const parsed = z
      .object({ login: z.string().regex(/^[^/\s]+$/, "expected a login") })
      .safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) return c.json({ message: "expected {login}" }, 400);
    oauthState(sim).defaultLogin = parsed.data.login;
    return c.json({ login: parsed.data.login });
  });

  sim.app.get("/login/oauth/authorize", (c) => {
    const clientId = c.req.query("client_id");
    if (!clientId || clientId !== oauthClient(sim).clientId) {
      return c.text(`unknown client_id ${clientId ?? "(none)"}`, 404);
    }
    const redirectUri = c.req.query("redirect_uri") ?? null;
    if (redirectUri === null || !/^https?:\/\//.test(redirectUri)) {
      return c.text("redirect_uri must be the App's callback URL", 400);
    }
    const login = c.req.query("login") || oauthState(sim).defaultLogin;
    const code = randomHex(10);
    oauthState(sim).codes.set(code, {
      login,
      clientId,
      redirectUri,
      issuedMs: sim.now().getTime(),
    });
    const back = new URL(redirectUri);
    back.searchParams.set("code", code);
    const st = c.req.query("state");
    if (st !== undefined) back.searchParams.set("state", st);
    return c.redirect(back.toString(), 302);
  });

  sim.app.post("/login/oauth/access_token", async (c) => {
    const type = c.req.header("content-type") ?? "";
    const body: Record<string, unknown> = type.includes("application/json")
      ? ((await c.req.json().catch(() => ({}))) ?? {})
      : await c.req.parseBody().catch(() => ({}));
    const client = oauthClient(sim);
    if (body.client_id !== client.clientId || body.client_secret !== client.clientSecret) {
      return oauthError(
        c,
        "incorrect_client_credentials",
        "The client_id and/or client_secret passed are incorrect.",
      );
    }
    const code = typeof body.code === "string" ? body.code : "";
    const pending = oauthState(sim).codes.get(code);
    oauthState(sim).codes.delete(code);
    const expired = pending && sim.now().getTime() - pending.issuedMs > CODE_TTL_MS;
    const wrongRedirect =
      pending &&
      typeof body.redirect_uri === "string" &&
      body.redirect_uri !== "" &&
      body.redirect_uri !== pending.redirectUri;
    if (!pending || pending.clientId !== client.clientId || expired) {
      return oauthError(c, "bad_verification_code", "The code passed is incorrect or expired.");
    }
    if (wrongRedirect) {
      return oauthError(
        c,
        "redirect_uri_mismatch",
        "The redirect_uri MUST match the registered callback URL for this application.",
      );
    }
    c.header("date", sim.now().toUTCString());
    return c.json({ access_token: tokenFor(sim, pending.login), token_type: "bearer", scope: "" });
  });

  /** Installations the user can see: those covering a repository it has a role on. */
  const visibleRepos = (req: ApiRequest, inst: Parameters<typeof state.installationRepos>[0]) =>
    state.installationRepos(inst).filter((r) => sim.canRead(req.identity, r));

  sim.api("GET", "/user/installations", "token", "core", (req) => {
    if (req.identity.kind !== "user")
      throw new SimHttpError(403, "Resource not accessible by integration");
    const installations = [...state.installations.values()]
      .filter((i) => visibleRepos(req, i).length > 0)
      .sort((a, b) => a.id - b.id);
    return {
      status: 200,
      body: {
        total_count: installations.length,
        installations: installations.map((i) => renderInstallation(req.ctx, i)),
      },
    };
  });

  sim.api("GET", "/user/installations/{installation_id}/repositories", "token", "core", (req) => {
    if (req.identity.kind !== "user")
      throw new SimHttpError(403, "Resource not accessible by integration");
    const id = Number(req.params.installation_id);
    const inst = Number.isSafeInteger(id) ? state.installations.get(id) : undefined;
    const repos = inst ? visibleRepos(req, inst) : [];
    if (!inst || repos.length === 0) throw new SimHttpError(404, "Not Found");
    const login = req.identity.login;
    const perPage = Math.min(100, Math.max(1, Number(req.query.get("per_page") ?? 30) || 30));
    const page = Math.max(1, Number(req.query.get("page") ?? 1) || 1);
    return {
      status: 200,
      body: {
        total_count: repos.length,
        repository_selection: inst.repositoryIds === null ? "all" : "selected",
        repositories: repos.slice((page - 1) * perPage, page * perPage).map((r) => {
          const role =
            req.identity.kind === "user" && req.identity.registered
              ? state.roleOf(login, r)
              : "admin";
          return {
            ...renderRepo(req.base, r),
            ...(role ? { permissions: renderRepoPermissions(role) } : {}),
          };
        }),
      },
    };
  });
}
