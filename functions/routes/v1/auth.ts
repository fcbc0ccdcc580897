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
import {
  PermissionCache,
  RefusalThrottle,
  USER_TOKEN_REFUSALS_PER_MINUTE,
} from "../../../shared/auth/refusal-throttle.ts";
import { parseAuthorization, tokenKind } from "../../../shared/auth/tokens.ts";
import { QueueQuerySchema } from "../../../shared/fleet/schemas.ts";
import { GitHubClient } from "../../../shared/github/client.ts";
import { GitHubApiError } from "../../../shared/github/errors.ts";
import { isOwnerKeyShape } from "../../../shared/org/owner-keys.ts";
import { type Env, numberSetting } from "../../env.ts";
import { lookupName, lookupRepo } from "../../objects/directory/name-lookup.ts";
import { apiError, type Caller, repoObject, schemaFailureMessage, type V1 } from "./context.ts";
import { GraphQuerySchema } from "./graph.ts";
import { KeyCallRefused, keyedEnv, rememberedName, rememberName } from "./key-calls.ts";
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

/** What GitHub said of a user token on one repository, and when it said it. */
interface UserCheck {
  access: UserAccess;
  login: string;
  /** When GitHub answered (epoch ms): minting a key needs an answer under a minute old. */
  checkedMs: number;
}

/**
 * GitHub's permission answers per (token SHA-256, repository), in this isolate's memory only;
 * refusals apart, so garbage tokens never push a proven one out.
 */
const userChecks = new PermissionCache<UserCheck>({ proven: 10_000, refused: 2_000 });
/** The App's checks of `ghu_` tokens per token SHA-256, in this isolate's memory only. */
const appChecks = new PermissionCache<AppTokenVerdict>({ proven: 10_000, refused: 2_000 });
/** Refused user tokens per client address (shared/auth/refusal-throttle.ts). */
const refusals = new RefusalThrottle({
  limit: USER_TOKEN_REFUSALS_PER_MINUTE,
  windowMs: 60_000,
  maxAddresses: 10_000,
});

/**
 * A refusal when `address` is past its refused tokens for now (its tokens not proven before
 * cost no GitHub call until its window ends); null: go ahead.
 */
function heldBack(address: string | undefined, nowMs: number): AuthFailure | null {
  const waitMs = address === undefined ? null : refusals.wait(address, nowMs);
  if (waitMs === null) return null;
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return {
    ok: false,
    status: 429,
    error: "rate-limited",
    message: `too many refused tokens from this address; retry in ${seconds} s`,
    retryAfterSeconds: seconds,
  };
}

/** GitHub refused a token from `address` (a 401 or 403 it answered, not an outage). */
function noteRefusal(address: string | undefined, refusal: { ok: boolean }, nowMs: number) {
  if (address !== undefined && !refusal.ok) refusals.refused(address, nowMs);
}
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
  address: string | undefined,
): Promise<UserCheck> {
  const key = userAccessCacheKey(await sha256Hex(token), `${owner}/${repo}`);
  const cached = fresh ? undefined : userChecks.get(key);
  if (cached) return cached;
  const nowMs = Date.now();
  const held = heldBack(address, nowMs);
  if (held) return { access: held, login: "unknown", checkedMs: nowMs };
  const checked = await askGitHub(env, token, kind, owner, repo);
  if (isCacheable(checked.access)) {
    userChecks.set(key, checked, checked.access.ok, userAccessTtlMs(checked.access));
    noteRefusal(address, checked.access, nowMs);
  }
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
  address: string | undefined,
): Promise<AppTokenVerdict> {
  const key = appTokenCacheKey(await sha256Hex(token));
  const cached = appChecks.get(key);
  if (cached) return cached;
  const nowMs = Date.now();
  const held = heldBack(address, nowMs);
  if (held) return held;
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
  if (isCacheable(verdict)) {
    appChecks.set(key, verdict, verdict.ok, userAccessTtlMs(verdict));
    noteRefusal(address, verdict, nowMs);
  }
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
  /**
   * `address`: the client's (throttles refused user tokens, see `heldBack`); the status page's
   * sessions pass none.
   */
  options: { fresh?: boolean; address?: string } = {},
): Promise<Proven> {
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
      // The next key requests of this name go the one-call way (key-calls.ts).
      if (entry) rememberName(fullName, entry);
      return { ok: true, caller: { kind: "key", access: "write" }, resolution };
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
        const app = await checkAppToken(env, token, rule, options.address);
        if (!app.ok) return app;
      }
      const [checked, entry] = await Promise.all([
        checkUser(env, token, kind, owner, repo, options.fresh === true, options.address),
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
  const proven = await prove(c.env, bearer.token, owner, repo, {
    fresh: true,
    address: clientAddress(c),
  });
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

/**
 * The client's address: Cloudflare sets CF-Connecting-IP (a client cannot), `switchyard serve`
 * sets it from the socket. Without it (tests calling the app directly) every caller shares one.
 */
function clientAddress(c: Context): string {
  return c.req.header("cf-connecting-ip") ?? "unknown";
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
  const owner = c.req.param("owner")!;
  const repo = c.req.param("repo")!;
  // A fleet key of a name whose entry this isolate remembers: no lookup and no separate key
  // check; the route's own RepoObject call verifies the key (one Durable Object call).
  const key = tokenKind(bearer.token) === "key" ? parseKey(bearer.token) : null;
  const known = key ? rememberedName(`${owner}/${repo}`) : undefined;
  if (key && known && known.repoId === key.repoId) {
    const keyed = keyedEnv(c.env, {
      hash: await sha256Hex(bearer.token),
      fullName: `${owner}/${repo}`,
      installationId: known.installationId,
    });
    c.env = keyed.env;
    c.set("caller", { kind: "key", access: "write" });
    c.set("repo", {
      repoId: known.repoId,
      fullName: known.fullName,
      installationId: known.installationId,
    });
    await next();
    // An answer that asked no object (a body failing its schema, no such route, a key trying
    // to manage keys) goes out only once the key is proven: a forged key gets 401 and cannot
    // tell a remembered name's repository id from the answer.
    if (!keyed.judged()) {
      try {
        await repoObject(c.env, known.repoId).identity();
      } catch (error) {
        if (!(error instanceof KeyCallRefused)) throw error;
        c.res = refuse(c, error.failure);
      }
    }
    return;
  }
  const proven = await prove(c.env, bearer.token, owner, repo, { address: clientAddress(c) });
  if (!proven.ok) return refuse(c, proven);
  if (!proven.resolution.ok) return refuse(c, proven.resolution);
  c.set("caller", proven.caller);
  c.set("repo", proven.resolution.repo);
  await next();
};
