// GitHub login for the status page: the App's user authorization (OAuth web flow) against the
// configured GitHub (github.com, Enterprise or the simulator), ending in a signed session
// cookie. `@octokit/oauth-methods` builds the authorize URL and exchanges the code; its OAuth
// URLs come from the request's base URL, so GITHUB_WEB_URL (or GITHUB_API_URL) picks the host.
import { Octokit } from "@octokit/core";
import { exchangeWebFlowCode, getWebFlowAuthorizationUrl } from "@octokit/oauth-methods";
import { type Context, Hono } from "hono";
import { getCookie } from "hono/cookie";
import { messagePage } from "../../../shared/status/page.ts";
import { safeReturnTo } from "../../../shared/status/return-to.ts";
import {
  clearSessionCookieHeader,
  SESSION_COOKIE,
  type Session,
  sessionCookieHeader,
  signSession,
  verifySession,
} from "../../../shared/status/session.ts";
import type { Env } from "../../env.ts";
import { userClient } from "../v1/auth.ts";
import { type LoginSettings, loginSettings } from "./settings.ts";

type StatusEnv = { Bindings: Env };

/** The login attempt in flight: the OAuth `state` and where to go after, for 10 minutes. */
const STATE_COOKIE = "switchyard_oauth";
const STATE_TTL_S = 600;

/** The login page's URL, coming back to `returnTo` (a path on `origin`; otherwise `/`). */
export function loginUrl(returnTo: string, origin: string): string {
  return `/login?return_to=${encodeURIComponent(safeReturnTo(returnTo, origin))}`;
}

/** Octokit's request with GitHub's web URL as base: oauth-methods derives `/login/oauth/*` from it. */
function webRequest(settings: LoginSettings) {
  return new Octokit({ baseUrl: settings.webUrl }).request;
}

function callbackUrl(c: Context, settings: LoginSettings): string {
  return `${settings.publicUrl ?? new URL(c.req.url).origin}/login/callback`;
}

/** The settings, or the 503 page naming what is missing. */
export function withSettings(
  c: Context<StatusEnv>,
): { settings: LoginSettings } | { refusal: Response | Promise<Response> } {
  const checked = loginSettings(c.env);
  if (checked.ok) return { settings: checked.settings };
  return {
    refusal: c.html(
      messagePage(
        "GitHub login is not configured",
        `The status page needs its login settings: ${checked.problems.join("; ")}. See docs/status-page.md.`,
        null,
      ),
      503,
    ),
  };
}

/** The request's session, if its cookie verifies (a bad or expired cookie is no session). */
export async function readSession(
  c: Context<StatusEnv>,
  settings: LoginSettings,
): Promise<Session | null> {
  const value = getCookie(c, SESSION_COOKIE);
  if (!value) return null;
  const verdict = await verifySession(value, settings.sessionSecret, Date.now());
  return verdict.ok ? verdict.session : null;
}

function randomState(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

export const loginRoutes = new Hono<StatusEnv>();

loginRoutes.get("/login", (c) => {
  const checked = withSettings(c);
  if ("refusal" in checked) return checked.refusal;
  const { settings } = checked;
  const state = randomState();
  const returnTo = safeReturnTo(c.req.query("return_to"), new URL(c.req.url).origin);
  const { url } = getWebFlowAuthorizationUrl({
    clientType: "github-app",
    clientId: settings.clientId,
    redirectUrl: callbackUrl(c, settings),
    state,
    // GitHub's account hint (optional): which user to suggest on the sign-in page.
    ...(c.req.query("login") ? { login: c.req.query("login")! } : {}),
    request: webRequest(settings),
  });
  c.header(
    "Set-Cookie",
    `${STATE_COOKIE}=${state}.${encodeURIComponent(returnTo)}; Path=/login; Max-Age=${STATE_TTL_S}; HttpOnly; Secure; SameSite=Lax`,
  );
  return c.redirect(url, 302);
});

loginRoutes.get("/login/callback", async (c) => {
  const checked = withSettings(c);
  if ("refusal" in checked) return checked.refusal;
  const { settings } = checked;
  // `state.returnTo`: the state is hex, so the first `.` ends it (the path may hold dots).
  const stateCookie = getCookie(c, STATE_COOKIE) ?? "";
  const dot = stateCookie.indexOf(".");
  const expected = dot < 0 ? stateCookie : stateCookie.slice(0, dot);
  const encodedReturn = dot < 0 ? "" : stateCookie.slice(dot + 1);
  const code = c.req.query("code");
  const fail = (message: string, status: 400 | 502) =>
    c.html(messagePage("GitHub login failed", message, null), status);
  if (!expected || c.req.query("state") !== expected) {
    return fail("The login's state does not match (an old or forged link); sign in again.", 400);
  }
  if (!code) return fail(`GitHub sent no code (${c.req.query("error") ?? "no error given"}).`, 400);
  let token: string;
  try {
    const exchanged = await exchangeWebFlowCode({
      clientType: "github-app",
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      code,
      redirectUrl: callbackUrl(c, settings),
      request: webRequest(settings),
    });
    token = exchanged.authentication.token;
  } catch (error) {
    // The message names GitHub's error code (bad_verification_code, incorrect_client_credentials).
    return fail(`GitHub refused the code: ${(error as Error).message}`, 502);
  }
  let user: { login: string; id: number };
  try {
    const me = await userClient(c.env, token).send<{ login?: unknown; id?: unknown }>({
      operation: "read the signed-in user",
      route: "GET /user",
      idempotent: true,
    });
    if (typeof me.data.login !== "string" || typeof me.data.id !== "number")
      throw new Error("GitHub's answer names no user");
    user = { login: me.data.login, id: me.data.id };
  } catch (error) {
    return fail(`Reading the signed-in user failed: ${(error as Error).message}`, 502);
  }
  const nowMs = Date.now();
  const signed = await signSession(
    { login: user.login, userId: user.id, token },
    settings.sessionSecret,
    nowMs,
  );
  c.header("Set-Cookie", sessionCookieHeader(signed.value, signed.expiresMs, nowMs), {
    append: true,
  });
  c.header(
    "Set-Cookie",
    `${STATE_COOKIE}=; Path=/login; Max-Age=0; HttpOnly; Secure; SameSite=Lax`,
    {
      append: true,
    },
  );
  let returnTo = "/";
  try {
    returnTo = safeReturnTo(decodeURIComponent(encodedReturn), new URL(c.req.url).origin);
  } catch {
    // A mangled cookie: go home.
  }
  return c.redirect(returnTo, 302);
});

loginRoutes.get("/logout", (c) => {
  c.header("Set-Cookie", clearSessionCookieHeader());
  return c.redirect("/", 302);
});
