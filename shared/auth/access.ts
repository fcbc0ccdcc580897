// Who may use `/v1/repos/{owner}/{repo}`: the decisions after a token has been checked (spec
// 6.4). A GitHub user token's access is GitHub's answer to `GET /repos/{owner}/{repo}`; a fleet
// key or an OIDC token is bound to one repository id. Then the repository is resolved: unknown
// and uninstalled repositories answer the same 404, and only to callers with access, so the API
// does not reveal which private repositories have the App (a caller without access gets 403
// whether or not it is installed).
import { z } from "zod";

export type Access = "admin" | "write";

export type AuthErrorCode =
  | "unauthorized"
  | "forbidden"
  | "not-found"
  | "rate-limited"
  | "unavailable";

/** Every refusal of the auth layer: status, `{error, message}` and, for 429/503, when to retry. */
export interface AuthFailure {
  ok: false;
  status: 401 | 403 | 404 | 429 | 503;
  error: AuthErrorCode;
  message: string;
  retryAfterSeconds?: number;
}

export const unauthorized = (message: string): AuthFailure => ({
  ok: false,
  status: 401,
  error: "unauthorized",
  message,
});
export const forbidden = (message: string): AuthFailure => ({
  ok: false,
  status: 403,
  error: "forbidden",
  message,
});
/** GitHub rate-limited a check: 429, retried when GitHub said (a minute when it did not). */
export const rateLimited = (message: string, retryAfterMs: number | undefined): AuthFailure => ({
  ok: false,
  status: 429,
  error: "rate-limited",
  message,
  retryAfterSeconds: Math.max(1, Math.ceil((retryAfterMs ?? 60_000) / 1000)),
});
/** GitHub did not answer a check, or answered something else: 503, try again shortly. */
export const unavailable = (message: string, retryAfterSeconds = 5): AuthFailure => ({
  ok: false,
  status: 503,
  error: "unavailable",
  message,
  retryAfterSeconds,
});
/** An error answer in a message: its kind and, when there was one, its status. */
export const describeError = (answer: { errorKind: string; status: number | null }): string =>
  `${answer.errorKind}${answer.status === null ? "" : ` ${answer.status}`}`;
export const notInstalled = (fullName: string): AuthFailure => ({
  ok: false,
  status: 404,
  error: "not-found",
  message: `repository ${fullName} is not installed`,
});

// --- GitHub user tokens ----------------------------------------------------------------------

/** The part of GitHub's `GET /repos/{owner}/{repo}` answer the decision reads. */
export const GitHubRepoAnswerSchema = z.object({
  id: z.number().int().positive(),
  full_name: z.string(),
  permissions: z
    .object({
      admin: z.boolean().optional(),
      maintain: z.boolean().optional(),
      push: z.boolean().optional(),
      triage: z.boolean().optional(),
      pull: z.boolean().optional(),
    })
    .optional(),
});
export type GitHubRepoAnswer = z.infer<typeof GitHubRepoAnswerSchema>;

/** What the permission check learned from GitHub (cacheable unless `ok: false` with 429/503). */
export type UserAccess = { ok: true; access: Access; repoId: number } | AuthFailure;

/** GitHub's answer (or why there was none), as the client reports it. */
export type GitHubAnswer =
  | { kind: "ok"; body: unknown }
  | {
      kind: "error";
      /** `GitHubErrorKind` of shared/github/errors.ts. */
      errorKind: string;
      status: number | null;
      retryAfterMs?: number;
    };

/**
 * GitHub 401: the token is not valid (401). 403 or 404: the token cannot see the repository
 * (403). 200: `permissions.admin` gives admin, `permissions.push` write, anything less (or no
 * `permissions` at all, as for tokens that are not a person's) is 403.
 */
export function userAccess(fullName: string, answer: GitHubAnswer): UserAccess {
  if (answer.kind === "error") {
    switch (answer.errorKind) {
      case "unauthorized":
        return unauthorized("GitHub does not accept the token (bad, expired or revoked)");
      case "forbidden":
      case "not-found":
        return forbidden(`the token has no access to ${fullName} on GitHub`);
      case "rate-limited":
        return rateLimited(
          "GitHub rate-limits the token; its permission check cannot be made now",
          answer.retryAfterMs,
        );
      default:
        return unavailable(
          `GitHub did not answer the permission check of ${fullName} (${describeError(answer)}); try again`,
        );
    }
  }
  const parsed = GitHubRepoAnswerSchema.safeParse(answer.body);
  if (!parsed.success) {
    return unavailable(`GitHub's answer for ${fullName} is not a repository; try again`);
  }
  const { permissions, id } = parsed.data;
  if (!permissions) {
    return forbidden(`GitHub reports no permissions of the token on ${fullName}`);
  }
  if (permissions.admin === true) return { ok: true, access: "admin", repoId: id };
  if (permissions.push === true) return { ok: true, access: "write", repoId: id };
  return forbidden(`the token has neither push nor admin permission on ${fullName}`);
}

/** Answers worth remembering: access, and refusals GitHub will repeat (not 429/503). */
export function isCacheable(access: { ok: true } | AuthFailure): boolean {
  return access.ok || access.status === 401 || access.status === 403;
}

/** Permission checks are remembered at most 5 minutes (a refusal 1 minute). */
export const USER_ACCESS_TTL_MS = 5 * 60_000;
export const USER_REFUSAL_TTL_MS = 60_000;

export function userAccessTtlMs(access: { ok: true } | AuthFailure): number {
  return access.ok ? USER_ACCESS_TTL_MS : USER_REFUSAL_TTL_MS;
}

/** The cache key: the token's SHA-256 (hex) and the repository's name; never the token. */
export function userAccessCacheKey(tokenSha256: string, fullName: string): string {
  return `${tokenSha256}:${fullName.toLowerCase()}`;
}

// --- resolving the repository --------------------------------------------------------------

/** A directory entry as the Worker's DirectoryObject keeps it. */
export interface RepoEntry {
  repoId: number;
  fullName: string;
  installationId: number;
  status: "active" | "suspended" | "removed";
}

export interface RepoTarget {
  repoId: number;
  fullName: string;
  installationId: number;
}

export type Resolution = { ok: true; repo: RepoTarget } | AuthFailure;

const target = (e: RepoEntry): RepoTarget => ({
  repoId: e.repoId,
  fullName: e.fullName,
  installationId: e.installationId,
});

const installed = (e: RepoEntry | null): e is RepoEntry => e !== null && e.status !== "removed";

/**
 * A user token GitHub let in (push or admin on `requested`, a repository with id `repoId`):
 * the installed repository of that name, if it is the same repository; otherwise, for this
 * caller, the repository is not installed (404).
 */
export function resolveForUser(
  requested: string,
  repoId: number,
  entry: RepoEntry | null,
): Resolution {
  if (!installed(entry) || entry.repoId !== repoId) return notInstalled(requested);
  return { ok: true, repo: target(entry) };
}

/**
 * A token bound to one repository (a fleet key, an OIDC token): the directory entry of the
 * requested name must be that repository; a token of another repository is 403, whether or
 * not the requested one is installed. `boundName` (OIDC's `repository` claim) lets a workflow
 * of a repository that was never installed learn 404 for its own repository.
 */
export function resolveBound(
  requested: string,
  bound: { repoId: number; fullName?: string },
  entry: RepoEntry | null,
  what: string,
): Resolution {
  if (entry !== null && entry.repoId === bound.repoId) {
    return installed(entry) ? { ok: true, repo: target(entry) } : notInstalled(requested);
  }
  if (bound.fullName !== undefined && bound.fullName.toLowerCase() === requested.toLowerCase()) {
    return notInstalled(requested);
  }
  return forbidden(`${what} belongs to another repository than ${requested}`);
}
