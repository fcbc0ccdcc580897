// Authentication of every `/v1/repos/{owner}/{repo}/...` route (spec 6.4). The decisions are in
// shared/auth/; this file does the I/O they need: the directory's shards (name and id lookups,
// functions/objects/name-lookup.ts), the RepoObject's keys, GitHub's
// permission answer for a user token, the OIDC issuer's key set. A raw token is never stored,
// logged or repeated in a message: only its SHA-256 is kept (as a cache key or a key's hash).
import type { MiddlewareHandler } from "hono";
import { createRemoteJWKSet, type JWTVerifyGetKey } from "jose";
import {
  type AuthFailure,
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
import { sha256Hex } from "../../../shared/auth/hash.ts";
import { parseKey } from "../../../shared/auth/keys.ts";
import { DEFAULT_OIDC_ISSUER, jwksUrl, verifyActionsToken } from "../../../shared/auth/oidc.ts";
import { parseAuthorization, tokenKind } from "../../../shared/auth/tokens.ts";
import { TtlCache } from "../../../shared/auth/ttl-cache.ts";
import { QueueQuerySchema } from "../../../shared/fleet/schemas.ts";
import { GitHubClient } from "../../../shared/github/client.ts";
import { GitHubApiError } from "../../../shared/github/errors.ts";
import { isOwnerKeyShape } from "../../../shared/org/owner-keys.ts";
import { type Env, numberSetting } from "../../env.ts";
import { lookupName, lookupRepo } from "../../objects/directory/name-lookup.ts";
import { apiError, type Caller, repoObject, schemaFailureMessage, type V1 } from "./context.ts";
import { GraphQuerySchema } from "./graph.ts";
import { proveOwnerKey } from "./owner-key-repo.ts";

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

/** GitHub's permission answers per (token SHA-256, repository), in this isolate's memory only. */
const userChecks = new TtlCache<{ access: UserAccess; login: string }>(10_000);
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

/** `GET /repos/{owner}/{repo}` with the caller's token decides; `GET /user` names the caller. */
async function askGitHub(
  env: Env,
  token: string,
  owner: string,
  repo: string,
): Promise<{ access: UserAccess; login: string }> {
  const fullName = `${owner}/${repo}`;
  const client = userClient(env, token);
  let access: UserAccess;
  try {
    const res = await client.send<unknown>({
      operation: `check the caller's permission on ${fullName}`,
      route: "GET /repos/{owner}/{repo}",
      params: { owner, repo },
      idempotent: true,
    });
    access = userAccess(fullName, { kind: "ok", body: res.data });
  } catch (error) {
    if (!(error instanceof GitHubApiError)) throw error;
    access = userAccess(fullName, {
      kind: "error",
      errorKind: error.kind,
      status: error.status,
      ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
    });
  }
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
  return { access, login };
}

async function checkUser(
  env: Env,
  token: string,
  owner: string,
  repo: string,
): Promise<{ access: UserAccess; login: string }> {
  const key = userAccessCacheKey(await sha256Hex(token), `${owner}/${repo}`);
  const cached = userChecks.get(key);
  if (cached) return cached;
  const checked = await askGitHub(env, token, owner, repo);
  if (isCacheable(checked.access)) userChecks.set(key, checked, userAccessTtlMs(checked.access));
  return checked;
}

export type Proven = { ok: true; caller: Caller; resolution: Resolution } | AuthFailure;

/** Proves `token` (a fleet key, an OIDC token or a GitHub user token) for `owner/repo`; the status page uses it too. */
export async function prove(env: Env, token: string, owner: string, repo: string): Promise<Proven> {
  const fullName = `${owner}/${repo}`;
  const lookup = () => lookupName(env, fullName);
  switch (tokenKind(token)) {
    case "key": {
      // An owner key (`syk_o...`, the org queue's): owner-key-repo.ts.
      if (isOwnerKeyShape(token)) return proveOwnerKey(env, token, owner, repo);
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
      const [checked, entry] = await Promise.all([checkUser(env, token, owner, repo), lookup()]);
      if (!checked.access.ok) return checked.access;
      return {
        ok: true,
        caller: { kind: "user", login: checked.login, access: checked.access.access },
        resolution: resolveForUser(fullName, checked.access.repoId, entry),
      };
    }
  }
}

function refuse(c: Parameters<MiddlewareHandler<V1>>[0], failure: AuthFailure) {
  const headers: Record<string, string> = {};
  if (failure.status === 401) headers["WWW-Authenticate"] = 'Bearer realm="switchyard"';
  if (failure.retryAfterSeconds !== undefined)
    headers["Retry-After"] = String(failure.retryAfterSeconds);
  return apiError(c, failure.status, failure.error, failure.message, {}, headers);
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
