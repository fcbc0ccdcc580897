// The App's user authorization (OAuth web flow), as the status page's login uses it:
// `GET /login/oauth/authorize` signs a user in at once (no page to click through) and sends the
// browser back to `redirect_uri` with a one-time code and the `state`; `POST
// /login/oauth/access_token` trades the code for that user's token. Plus the two REST reads a
// user token makes of the App's installations: `GET /user/installations` and
// `GET /user/installations/{installation_id}/repositories`; and the App's check of a token
// (`POST /applications/{client_id}/token`), which tells whether a `ghu_` token is its own.
//
// Who signs in: the `login` query parameter (GitHub's account hint) when given, else the
// default set by `POST /_sim/oauth {"login": "..."}`, else `octocat`. The token is a `ghu_`
// token of the registered user (`POST /_sim/users`), so what the user may see is exactly the
// roles it was registered with; a login never registered is registered on the spot with no
// repositories (a user without access), except `octocat`, which gets a fresh token and sees
// everything.
import type { Context } from "hono";
import { z } from "zod";
import type { ApiRequest, GitHubSimulator } from "./app.ts";
import { convertedApp } from "./manifest.ts";
import { accountId, tokenKindOf } from "./model.ts";
import { renderInstallation, renderRepo, renderRepoPermissions, renderUser } from "./render.ts";
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

async function sha256Base64(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return btoa(String.fromCharCode(...new Uint8Array(digest)));
}

/** GitHub answers OAuth errors with 200 and an `error` field (JSON when asked for JSON). */
function oauthError(c: Context, error: string, description: string) {
  return c.json({
    error,
    error_description: description,
    error_uri: `https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#${error.replace(/_/g, "-")}`,
  });
}

/**
 * The user's token for the App, as GitHub's web flow hands out: a `ghu_` token issued to the
 * simulated App, the user's own if it has one, else a new one added to the user (same roles).
 * A login never registered is registered with no repositories (a real user without access),
 * except `octocat`, whose new token stands for the unrestricted user (`userTokens`).
 */
function tokenFor(sim: GitHubSimulator, login: string): string {
  const user = sim.state.user(login);
  const own = user
    ? [...user.tokens.values()].find((t) => t.kind === "app-user" && t.clientId === null)
    : undefined;
  if (own) return own.token;
  const token = `ghu_${randomHex(18)}`;
  if (user) sim.state.addUserToken(user, token);
  else if (login.toLowerCase() === "octocat") sim.userTokens.push(token);
  else sim.state.registerUser(login, token, {});
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

  /**
   * GitHub lists an App's installations only to a user token of that App (`ghu_`); any other
   * token is refused, and another App's token sees none of this App's installations.
   */
  const appUserToken = (req: ApiRequest): boolean => {
    if (req.identity.kind !== "user")
      throw new SimHttpError(403, "Resource not accessible by integration");
    if (req.identity.tokenKind !== "app-user")
      throw new SimHttpError(
        403,
        "You must authenticate with an access token authorized to a GitHub App in order to list installations",
      );
    return isOwnApp(req.identity.clientId);
  };
  const isOwnApp = (clientId: string | null) =>
    clientId === null || clientId === oauthClient(sim).clientId;

  sim.api("GET", "/user/installations", "token", "core", (req) => {
    if (!appUserToken(req)) return { status: 200, body: { total_count: 0, installations: [] } };
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
    if (!appUserToken(req)) throw new SimHttpError(404, "Not Found");
    const id = Number(req.params.installation_id);
    const inst = Number.isSafeInteger(id) ? state.installations.get(id) : undefined;
    const repos = inst ? visibleRepos(req, inst) : [];
    if (!inst || repos.length === 0) throw new SimHttpError(404, "Not Found");
    const identity = req.identity;
    const perPage = Math.min(100, Math.max(1, Number(req.query.get("per_page") ?? 30) || 30));
    const page = Math.max(1, Number(req.query.get("page") ?? 1) || 1);
    return {
      status: 200,
      body: {
        total_count: repos.length,
        repository_selection: inst.repositoryIds === null ? "all" : "selected",
        repositories: repos.slice((page - 1) * perPage, page * perPage).map((r) => {
          // The user's role on each (an unrestricted octocat token: admin everywhere).
          const role =
            identity.kind === "user" && identity.registered
              ? state.roleOf(identity.login, r)
              : "admin";
          return {
            ...renderRepo(req.base, r),
            ...(role ? { permissions: renderRepoPermissions(role) } : {}),
          };
        }),
      },
    };
  });

  // The App checks a token (switchyard: is this `ghu_` token ours?). Basic auth with the App's
  // client id and secret (else 401); 404 for a token that is not a user token of this App.
  sim.api("POST", "/applications/{client_id}/token", "client", "core", async (req) => {
    const client = oauthClient(sim);
    if (req.params.client_id !== client.clientId) throw new SimHttpError(404, "Not Found");
    const body = (req.json() ?? {}) as { access_token?: unknown };
    const token = body.access_token;
    if (typeof token !== "string" || token === "")
      throw new SimHttpError(422, 'Invalid request.\n\n"access_token" wasn\'t supplied.');
    const user = state.userByToken(token);
    const grant = user?.tokens.get(token);
    const octocat = !user && sim.userTokens.includes(token);
    const ours = tokenKindOf(token) === "app-user" && (grant ? isOwnApp(grant.clientId) : octocat);
    if (!ours) throw new SimHttpError(404, "Not Found");
    const login = user?.login ?? "octocat";
    const createdAt = grant?.createdAt ?? "2026-01-01T00:00:00Z";
    const id = grant?.id ?? accountId(token);
    return {
      status: 200,
      body: {
        id,
        url: `${req.base}/authorizations/${id}`,
        scopes: [],
        token,
        token_last_eight: token.slice(-8),
        hashed_token: await sha256Base64(token),
        app: {
          client_id: client.clientId,
          name: sim.appSlug,
          url: `${req.base}/apps/${sim.appSlug}`,
        },
        note: null,
        note_url: null,
        fingerprint: null,
        created_at: createdAt,
        updated_at: createdAt,
        expires_at: null,
        user: renderUser(req.base, login),
      },
    };
  });
}
