// Authentication of every `/v1/repos/{owner}/{repo}/...` route (spec 6.4). The decisions are in
// shared/auth/; this file does the I/O they need: the directory's shards (name and id lookups,
// functions/objects/name-lookup.ts), the RepoObject's keys, GitHub's
// permission answer for a user token, the OIDC issuer's key set. A raw token is never stored,
// logged or repeated in a message: only its SHA-256 is kept (as a cache key or a key's hash).
import type { Context, MiddlewareHandler } from "hono";
import { createRemoteJWKSet, type JWTVerifyGetKey } from "jose";
import {
  type AuthFailure,
  forbidden,
  type GitHubAnswer,
  isCacheable,
  type Resolution,
  resolveBound,
  resolveForUser,
  type UserAccess,
  unauthorized,
  userAccess,
  userAccessCacheKey,
  userAccessTtlMs,
} from "../../../shared/auth/access.ts";
import {
  type AppTokenVerdict,
  adminProofFresh,
  appTokenCacheKey,
  appTokenVerdict,
  carriesScopes,
  type GitHubTokenKind,
  githubTokenKind,
  scopedTokenAccess,
  TOKEN_KIND_NAMES,
  tokenRule,
} from "../../../shared/auth/github-tokens.ts";
import { sha256Hex } from "../../../shared/auth/hash.ts";
import { parseKey } from "../../../shared/auth/keys.ts";
import { DEFAULT_OIDC_ISSUER, jwksUrl, verifyActionsToken } from "../../../shared/auth/oidc.ts";
import { parseAuthorization, tokenKind } from "../../../shared/auth/tokens.ts";
import { TtlCache } from "../../../shared/auth/ttl-cache.ts";
import { QueueQuerySchema } from "../../../shared/fleet/schemas.ts";
import { GitHubClient } from "../../../shared/github/client.ts";
import { GitHubApiError } from "../../../shared/github/errors.ts";
import { type Env, numberSetting } from "../../env.ts";
import { lookupName, lookupRepo } from "../../objects/directory/name-lookup.ts";
import { apiError, type Caller, repoObject, schemaFailureMessage, type V1 } from "./context.ts";
import { GraphQuerySchema } from "./graph.ts";

/** The query schemas of the `/v1` routes that take one, by method and last path segment. */
const QUERY_SCHEMAS: Record<string, { safeParse(input: unknown): QueryCheck }> = {
  "GET graph": GraphQuerySchema,
  "GET queue": QueueQuerySchema,
};
type QueryCheck =
  | { success: true }
  | { success: false; error: Parameters<typeof schemaFailureMessage>[1] };

/**
 * A malformed query of a route that takes one is refused before the caller is proven, so a
 * bad `?machine=` costs no directory lookup, key check or GitHub call. The route validates the
 * same schema again (and owns the parsed value).
 */
function queryFailure(method: string, path: string, query: Record<string, string>) {
  const route = /^\/v1\/repos\/[^/]+\/[^/]+\/([^/]+)\/?$/.exec(path)?.[1];
  const schema = route === undefined ? undefined : QUERY_SCHEMAS[`${method} ${route}`];
  if (!schema) return null;
  const checked = schema.safeParse(query);
  return checked.success ? null : schemaFailureMessage("query", checked.error);
}

/** What GitHub said of a user token on one repository, and when it said it. */
interface UserCheck {
  access: UserAccess;
  login: string;
  /** When GitHub answered (epoch ms): minting a key needs an answer under a minute old. */
  checkedMs: number;
}

/** GitHub's permission answers per (token SHA-256, repository), in this isolate's memory only. */
const userChecks = new TtlCache<UserCheck>(10_000);
/** The App's checks of `ghu_` tokens per token SHA-256, in this isolate's memory only. */
const appChecks = new TtlCache<AppTokenVerdict>(10_000);
/** One remote key set per issuer: jose caches the keys (10 minutes) and refetches on a new kid. */
const issuerKeySets = new Map<string, JWTVerifyGetKey>();

function issuerKeys(env: Env, issuer: string): JWTVerifyGetKey {
  let keys = issuerKeySets.get(issuer);
  if (!keys) {
    const timeout = numberSetting(env.GITHUB_TIMEOUT_MS);
    keys = createRemoteJWKSet(new URL(jwksUrl(issuer)), {
      ...(timeout ? { timeoutDuration: Math.round(timeout) } : {}),
    });
    issuerKeySets.set(issuer, keys);
  }
  return keys;
}

/** A client acting as the caller: the same timeouts as the App's, no waiting on rate limits. */
export function userClient(env: Env, token: string): GitHubClient {
  const timeout = numberSetting(env.GITHUB_TIMEOUT_MS);
  const base = numberSetting(env.GITHUB_RETRY_BASE_MS);
  return new GitHubClient({
    auth: { kind: "token", token },
    baseUrl: env.GITHUB_API_URL || "https://api.github.com",
    ...(timeout ? { timeoutMs: timeout } : {}),
    retry: {
      maxRetries: 1,
      maxRateLimitRetries: 0,
      maxRateLimitWaitMs: 0,
      ...(base ? { baseDelayMs: base, maxDelayMs: base * 4 } : {}),
    },
  });
}

/** A client failure as the shared rules read it. */
function errorAnswer(error: unknown): GitHubAnswer {
  if (!(error instanceof GitHubApiError)) throw error;
  return {
    kind: "error",
    errorKind: error.kind,
    status: error.status,
    ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
  };
}

/**
 * `GET /repos/{owner}/{repo}` with the caller's token decides (with its `X-OAuth-Scopes` for a
 * classic or OAuth token); `GET /user` names the caller.
 */
async function askGitHub(
  env: Env,
  token: string,
  kind: GitHubTokenKind,
  owner: string,
  repo: string,
): Promise<UserCheck> {
  const fullName = `${owner}/${repo}`;
  const client = userClient(env, token);
  let answer: GitHubAnswer;
  let scopes: string | undefined;
  try {
    const res = await client.send<unknown>({
      operation: `check the caller's permission on ${fullName}`,
      route: "GET /repos/{owner}/{repo}",
      params: { owner, repo },
      idempotent: true,
    });
    answer = { kind: "ok", body: res.data };
    scopes = res.headers["x-oauth-scopes"];
  } catch (error) {
    answer = errorAnswer(error);
  }
  const access = carriesScopes(kind)
    ? scopedTokenAccess(fullName, kind, answer, scopes)
    : userAccess(fullName, answer);
  const checkedMs = Date.now();
  let login = "unknown";
  if (access.ok) {
    try {
      const me = await client.send<{ login?: unknown }>({
        operation: "read the caller's login",
        route: "GET /user",
        idempotent: true,
      });
      if (typeof me.data?.login === "string") login = me.data.login;
    } catch {
      // The login only labels the caller (e.g. who created a key); access is already decided.
    }
  }
  return { access, login, checkedMs };
}

/** GitHub's answer for this token and repository: remembered, unless `fresh` asks anew. */
async function checkUser(
  env: Env,
  token: string,
  kind: GitHubTokenKind,
  owner: string,
  repo: string,
  fresh: boolean,
): Promise<UserCheck> {
  const key = userAccessCacheKey(await sha256Hex(token), `${owner}/${repo}`);
  const cached = fresh ? undefined : userChecks.get(key);
  if (cached) return cached;
  const checked = await askGitHub(env, token, kind, owner, repo);
  if (isCacheable(checked.access)) userChecks.set(key, checked, userAccessTtlMs(checked.access));
  return checked;
}

/**
 * Whether a `ghu_` token was issued to switchyard's own App: `POST /applications/{client_id}/token`
 * with the App's client credentials, remembered by the token's SHA-256.
 */
async function checkAppToken(
  env: Env,
  token: string,
  app: { clientId: string; clientSecret: string },
): Promise<AppTokenVerdict> {
  const key = appTokenCacheKey(await sha256Hex(token));
  const cached = appChecks.get(key);
  if (cached) return cached;
  const timeout = numberSetting(env.GITHUB_TIMEOUT_MS);
  const client = new GitHubClient({
    auth: { kind: "client", ...app },
    baseUrl: env.GITHUB_API_URL || "https://api.github.com",
    ...(timeout ? { timeoutMs: timeout } : {}),
    retry: { maxRetries: 0, maxRateLimitRetries: 0, maxRateLimitWaitMs: 0 },
  });
  let answer: GitHubAnswer;
  try {
    const res = await client.send<unknown>({
      operation: "check that the token was issued to switchyard's App",
      route: "POST /applications/{client_id}/token",
      params: { client_id: app.clientId, access_token: token },
      // A check changes nothing on GitHub.
      idempotent: true,
    });
    answer = { kind: "ok", body: res.data };
  } catch (error) {
    answer = errorAnswer(error);
  }
  const verdict = appTokenVerdict(app.clientId, answer);
  if (isCacheable(verdict)) appChecks.set(key, verdict, userAccessTtlMs(verdict));
  return verdict;
}

export type Proven = { ok: true; caller: Caller; resolution: Resolution } | AuthFailure;

/**
 * Proves `token` (a fleet key, an OIDC token or a GitHub user token) for `owner/repo`; the
 * status page uses it too. `fresh`: a GitHub user token's permission is asked of GitHub anew
 * (minting a key needs admin proven within the last minute).
 */
export async function prove(
  env: Env,
  token: string,
  owner: string,
  repo: string,
  options: { fresh?: boolean } = {},
): Promise<Proven> {
  const fullName = `${owner}/${repo}`;
  const lookup = () => lookupName(env, fullName);
  switch (tokenKind(token)) {
    case "key": {
      const key = parseKey(token);
      if (!key) return unauthorized("unknown fleet key");
      // The key is proven before anything is said about the requested repository, so a forged
      // key learns nothing (not even whether that repository has the App); keys of repositories
      // switchyard does not serve are not looked for at all. The requested name's shard usually
      // names the key's repository itself: then it is the key's entry, and no second lookup.
      const named = await lookup();
      const home = named?.repoId === key.repoId ? named : await lookupRepo(env, key.repoId);
      if (!home || home.status === "removed") return unauthorized("unknown fleet key");
      const verdict = await repoObject(env, key.repoId).verifyKey(
        await sha256Hex(token),
        Date.now(),
      );
      if (!verdict.ok) {
        const why = { unknown: "unknown", revoked: "revoked", expired: "expired" }[verdict.reason];
        return unauthorized(`${why} fleet key`);
      }
      const entry = home.fullName.toLowerCase() === fullName.toLowerCase() ? home : named;
      const resolution = resolveBound(fullName, { repoId: key.repoId }, entry, "the key");
      if (!resolution.ok) return resolution;
      return { ok: true, caller: { kind: "key", keyId: verdict.id, access: "write" }, resolution };
    }
    case "oidc": {
      const audience = env.PUBLIC_URL?.trim();
      if (!audience) {
        return unauthorized(
          "OIDC tokens are not accepted: the Worker's PUBLIC_URL setting (the audience they must name) is not set",
        );
      }
      const issuer = env.OIDC_ISSUER?.trim() || DEFAULT_OIDC_ISSUER;
      const verdict = await verifyActionsToken(token, {
        issuer,
        audience,
        keys: issuerKeys(env, issuer),
      });
      if (!verdict.ok) {
        return verdict.status === 503
          ? { ok: false, status: 503, error: "unavailable", message: verdict.message }
          : unauthorized(verdict.message);
      }
      const bound = {
        repoId: verdict.repoId,
        ...(verdict.repository ? { fullName: verdict.repository } : {}),
      };
      return {
        ok: true,
        caller: { kind: "oidc", subject: verdict.subject, access: "write" },
        resolution: resolveBound(fullName, bound, await lookup(), "the OIDC token"),
      };
    }
    case "user": {
      // Each kind of GitHub token is used only with the authority it carries
      // (shared/auth/github-tokens.ts): refused outright, or checked before its person's role.
      const kind = githubTokenKind(token);
      const rule = tokenRule(kind, {
        clientId: env.GITHUB_APP_CLIENT_ID,
        clientSecret: env.GITHUB_APP_CLIENT_SECRET,
      });
      if (!rule.ok) return rule;
      if (rule.check === "app") {
        const app = await checkAppToken(env, token, rule);
        if (!app.ok) return app;
      }
      const [checked, entry] = await Promise.all([
        checkUser(env, token, kind, owner, repo, options.fresh === true),
        lookup(),
      ]);
      if (!checked.access.ok) return checked.access;
      return {
        ok: true,
        caller: {
          kind: "user",
          login: checked.login,
          access: checked.access.access,
          tokenKind: TOKEN_KIND_NAMES[kind],
          checkedMs: checked.checkedMs,
        },
        resolution: resolveForUser(fullName, checked.access.repoId, entry),
      };
    }
  }
}

export type UserCaller = Extract<Caller, { kind: "user" }>;

const ADMIN_ONLY =
  "this needs a GitHub user token with admin permission on the repository (fleet keys and OIDC tokens cannot manage keys)";

/**
 * The caller as a repository admin, for the key routes. `recent`: admin proven within the
 * last minute (minting a key): a permission answer remembered longer is asked of GitHub anew,
 * so a person who lost admin since cannot mint a key that would outlive the loss by months.
 */
export async function keyAdmin(
  c: Context<V1>,
  recent: boolean,
): Promise<{ ok: true; caller: UserCaller } | AuthFailure> {
  const caller = c.var.caller;
  if (caller.kind !== "user" || caller.access !== "admin") return forbidden(ADMIN_ONLY);
  if (!recent || adminProofFresh(caller.checkedMs, Date.now())) return { ok: true, caller };
  const bearer = parseAuthorization(c.req.header("authorization"));
  if (!bearer.ok) return unauthorized(bearer.message);
  const { owner, repo } = c.req.param() as { owner: string; repo: string };
  const proven = await prove(c.env, bearer.token, owner, repo, { fresh: true });
  if (!proven.ok) return proven;
  if (!proven.resolution.ok) return proven.resolution;
  const again = proven.caller;
  if (again.kind !== "user" || again.access !== "admin") {
    return forbidden(`minting a key needs admin proven within the last minute; ${ADMIN_ONLY}`);
  }
  if (proven.resolution.repo.repoId !== c.var.repo.repoId) {
    return forbidden(`${c.var.repo.fullName} is another repository now; try again`);
  }
  return { ok: true, caller: again };
}

/** The answer to a refusal of the auth layer: `{error, message}`, its status and headers. */
export function refuse(c: Context, failure: AuthFailure) {
  const headers: Record<string, string> = {};
  if (failure.status === 401) headers["WWW-Authenticate"] = 'Bearer realm="switchyard"';
  if (failure.retryAfterSeconds !== undefined)
    headers["Retry-After"] = String(failure.retryAfterSeconds);
  return c.json({ error: failure.error, message: failure.message }, failure.status, headers);
}

/**
 * Proves the caller's access to `/v1/repos/{owner}/{repo}` (spec 6.4): `Authorization: Bearer`
 * with a fleet key, a GitHub Actions OIDC token or a GitHub user token with push or admin. No
 * or a malformed header: 401; then a malformed query of a route that takes one: 400, before
 * any Durable Object is asked; a bad token: 401; no access: 403; an unknown or uninstalled
 * repository: 404, and only to a caller with access to it. Sets `c.var.caller` and `c.var.repo`.
 */
export const repoAuth: MiddlewareHandler<V1> = async (c, next) => {
  const bearer = parseAuthorization(c.req.header("authorization"));
  if (!bearer.ok) return refuse(c, unauthorized(bearer.message));
  // Order: a present, well-formed Authorization header (401), then the query (400), then the
  // Durable Objects and GitHub that prove the token.
  const badQuery = queryFailure(c.req.method, c.req.path, c.req.query());
  if (badQuery !== null) return apiError(c, 400, "bad-request", badQuery);
  const proven = await prove(c.env, bearer.token, c.req.param("owner")!, c.req.param("repo")!);
  if (!proven.ok) return refuse(c, proven);
  if (!proven.resolution.ok) return refuse(c, proven.resolution);
  c.set("caller", proven.caller);
  c.set("repo", proven.resolution.repo);
  await next();
};
