// Authentication of the org routes (`/v1/orgs/{owner}/...`, spec 6.4), in its own file: the
// repository routes' auth (auth.ts) is not changed. Decisions are shared/org/owner-check.ts and
// shared/auth/; this file does their I/O: the owner's object (its installation, owner keys),
// GitHub's `GET /user`, `GET /user/installations/{id}/repositories` (switchyard's own user
// token: one paged call, cached) and `GET /orgs/{org}/memberships/{username}` with the App's
// installation token. A raw token is never stored or logged: caches are keyed by its SHA-256.
import type { Context, MiddlewareHandler } from "hono";
import { type AuthFailure, forbidden, unauthorized } from "../../../shared/auth/access.ts";
import { sha256Hex } from "../../../shared/auth/hash.ts";
import { parseKey } from "../../../shared/auth/keys.ts";
import { parseAuthorization, tokenKind } from "../../../shared/auth/tokens.ts";
import { TtlCache } from "../../../shared/auth/ttl-cache.ts";
import { GitHubApiError } from "../../../shared/github/errors.ts";
import {
  classicTokenRefusal,
  type MembershipAnswer,
  ownerVerdict,
  repositoryScopedRefusal,
} from "../../../shared/org/owner-check.ts";
import { isOwnerKeyShape, parseOwnerKey } from "../../../shared/org/owner-keys.ts";
import type { Env } from "../../env.ts";
import { installationClient } from "../../github-client.ts";
import { type OrgScope, ownerKeysObject, ownerObject } from "../../objects/owner/owner-object.ts";
import { userClient } from "./auth.ts";
import { apiError } from "./context.ts";

/** Who is calling an org route, as the middleware proved it. */
export type OrgCaller =
  | { kind: "owner-key"; keyId: string }
  /** A GitHub user token: `appToken` for switchyard's own (`ghu_`), else a classic one. */
  | { kind: "user"; login: string; appToken: boolean };

export interface OrgTarget {
  owner: string;
  installationId: number;
  caller: OrgCaller;
}

/**
 * Hono environment of the org routes. `token` is the caller's GitHub user token, kept for this
 * request only (the repository list is asked with it), never stored.
 */
export type OrgV1 = { Bindings: Env; Variables: { org: OrgTarget; token: string } };

/** GitHub's `GET /user` answers by token SHA-256 (5 minutes), in this isolate's memory only. */
const logins = new TtlCache<string>(10_000);
/** Repositories a `ghu_` token may push to, by token SHA-256 and installation (5 minutes). */
const reachable = new TtlCache<number[]>(10_000);
const CACHE_MS = 5 * 60_000;
/** Pages of `GET /user/installations/{id}/repositories` read at most (100 repositories each). */
const MAX_REPOSITORY_PAGES = 10;

function refuse(c: Context, failure: AuthFailure) {
  const headers: Record<string, string> = {};
  if (failure.status === 401) headers["WWW-Authenticate"] = 'Bearer realm="switchyard"';
  if (failure.retryAfterSeconds !== undefined) {
    headers["Retry-After"] = String(failure.retryAfterSeconds);
  }
  return apiError(c, failure.status, failure.error, failure.message, {}, headers);
}

function githubFailure(error: unknown, what: string): AuthFailure {
  if (!(error instanceof GitHubApiError)) throw error;
  if (error.kind === "unauthorized") {
    return unauthorized("GitHub does not accept the token (bad, expired or revoked)");
  }
  if (error.kind === "forbidden" || error.kind === "not-found") return forbidden(what);
  return {
    ok: false,
    status: 503,
    error: "unavailable",
    message: `GitHub did not answer (${error.kind}); try again`,
    retryAfterSeconds: 5,
  };
}

async function userLogin(env: Env, token: string): Promise<string | AuthFailure> {
  const key = await sha256Hex(token);
  const cached = logins.get(key);
  if (cached !== undefined) return cached;
  try {
    const me = await userClient(env, token).send<{ login?: unknown }>({
      operation: "read the caller's login",
      route: "GET /user",
      idempotent: true,
    });
    if (typeof me.data?.login !== "string")
      return unauthorized("GitHub names no user for the token");
    logins.set(key, me.data.login, CACHE_MS);
    return me.data.login;
  } catch (error) {
    return githubFailure(error, "GitHub names no user for the token");
  }
}

/**
 * Proves the caller of `/v1/orgs/{owner}/...`: an owner key of the owner's current installation
 * (verified by the owner's object), or a GitHub user token (its login from GitHub). Repository
 * keys and OIDC tokens are repository-scoped: 403. No installation of the App on the owner: 404,
 * answered only after the token was proven.
 */
export const orgAuth: MiddlewareHandler<OrgV1> = async (c, next) => {
  const bearer = parseAuthorization(c.req.header("authorization"));
  if (!bearer.ok) return refuse(c, unauthorized(bearer.message));
  const token = bearer.token;
  const owner = c.req.param("owner")!;
  const stub = ownerObject(c.env, owner);
  if (tokenKind(token) === "oidc") {
    return refuse(c, repositoryScopedRefusal("a GitHub Actions OIDC token", owner));
  }
  if (tokenKind(token) === "key") {
    if (!isOwnerKeyShape(token)) {
      return refuse(
        c,
        parseKey(token) !== null
          ? repositoryScopedRefusal("a repository's fleet key", owner)
          : unauthorized("unknown fleet key"),
      );
    }
    const parsed = parseOwnerKey(token);
    if (!parsed) return refuse(c, unauthorized("unknown owner key"));
    const { installationId } = parsed;
    // Both asked at once: the owner's current installation, and the key where its installation
    // keeps it (ownerKeysObject: a rename of the owner does not lose it).
    const hash = await sha256Hex(token);
    let [current, verdict] = await Promise.all([
      stub.installation(),
      ownerKeysObject(c.env, installationId).verifyKey(hash, installationId, Date.now()),
    ]);
    if (current.installationId !== installationId) {
      // Another owner's key, or one of a former installation of this owner.
      return refuse(c, forbidden(`the owner key does not belong to ${owner}'s installation`));
    }
    // A key minted before keys lived by installation was just moved there: ask again.
    if (!verdict.ok && current.movedKeys > 0) {
      verdict = await ownerKeysObject(c.env, installationId).verifyKey(
        hash,
        installationId,
        Date.now(),
      );
    }
    if (!verdict.ok) return refuse(c, unauthorized(`${verdict.reason} owner key`));
    c.set("org", { owner, installationId, caller: { kind: "owner-key", keyId: verdict.id } });
    return next();
  }
  const login = await userLogin(c.env, token);
  if (typeof login !== "string") return refuse(c, login);
  const { installationId } = await stub.installation();
  if (installationId === null) {
    return apiError(c, 404, "not-found", `switchyard's App is not installed on ${owner}`);
  }
  c.set("org", {
    owner,
    installationId,
    caller: { kind: "user", login, appToken: token.startsWith("ghu_") },
  });
  c.set("token", token);
  return next();
};

/**
 * The repositories the caller's credential reaches for the queue and claims: every repository
 * of the installation for an owner key; for switchyard's own user token, those GitHub lists for
 * it in the installation with push (one paged call, cached 5 minutes by the token's SHA-256;
 * never a call per repository); a classic token: 403, pointing to owner keys.
 */
export async function orgScope(c: Context<OrgV1>): Promise<OrgScope | AuthFailure> {
  const { caller, installationId, owner } = c.var.org;
  if (caller.kind === "owner-key") return { installationId, repoIds: null };
  if (!caller.appToken) return classicTokenRefusal(owner);
  const token = c.var.token;
  const key = `${await sha256Hex(token)}:${installationId}`;
  const cached = reachable.get(key);
  if (cached !== undefined) return { installationId, repoIds: cached };
  const client = userClient(c.env, token);
  const ids: number[] = [];
  try {
    for (let page = 1; page <= MAX_REPOSITORY_PAGES; page++) {
      const res = await client.send<{
        repositories?: Array<{ id: number; permissions?: { push?: boolean; admin?: boolean } }>;
      }>({
        operation: `list the caller's repositories of installation ${installationId}`,
        route: "GET /user/installations/{installation_id}/repositories",
        params: { installation_id: installationId, per_page: 100, page },
        idempotent: true,
      });
      const list = res.data?.repositories ?? [];
      for (const r of list) {
        if (r.permissions?.push === true || r.permissions?.admin === true) ids.push(r.id);
      }
      if (list.length < 100) break;
    }
  } catch (error) {
    return githubFailure(error, `the token sees no repository of ${owner}'s installation`);
  }
  reachable.set(key, ids, CACHE_MS);
  return { installationId, repoIds: ids };
}

/**
 * Minting and revoking owner keys: an active organization owner (or the user account itself),
 * asked of GitHub every time (the membership read is not cached: admin proven now). Listing:
 * an owner key, or a user who is an active member of the organization (any role).
 */
export async function mayManageKeys(
  c: Context<OrgV1>,
  what: "manage" | "list",
): Promise<AuthFailure | null> {
  const { caller, installationId, owner } = c.var.org;
  if (caller.kind === "owner-key") {
    return what === "list"
      ? null
      : forbidden(
          "owner keys cannot mint or revoke owner keys: an active organization owner's GitHub token can",
        );
  }
  if (caller.login.toLowerCase() === owner.toLowerCase()) return null;
  const answer = await membership(c.env, installationId, owner, caller.login);
  if (what === "list") {
    if (answer.kind === "ok" && (answer.body as { state?: unknown }).state === "active")
      return null;
    const verdict = ownerVerdict(caller.login, owner, installationId, answer);
    return verdict.ok ? null : verdict;
  }
  const verdict = ownerVerdict(caller.login, owner, installationId, answer);
  return verdict.ok ? null : verdict;
}

async function membership(
  env: Env,
  installationId: number,
  owner: string,
  login: string,
): Promise<MembershipAnswer> {
  const installation = env.INSTALLATION.get(env.INSTALLATION.idFromName(String(installationId)));
  const client = installationClient(
    env,
    installationId,
    {
      get: (k) => installation.tokenCacheGet(k),
      set: (k, v) => installation.tokenCacheSet(k, v),
    },
    `check ${login}'s membership of ${owner}`,
  );
  try {
    const res = await client.send<unknown>({
      operation: `check ${login}'s membership of ${owner}`,
      route: "GET /orgs/{org}/memberships/{username}",
      params: { org: owner, username: login },
      idempotent: true,
    });
    return { kind: "ok", body: res.data };
  } catch (error) {
    if (!(error instanceof GitHubApiError)) throw error;
    return { kind: "error", status: error.status };
  }
}
