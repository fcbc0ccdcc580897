// GitHub tokens are used only with the authority they carry (spec 6.4, issue 21). GitHub's
// `permissions` on `GET /repos/{o}/{r}` describe the person, not the token: a token with no
// scopes, or one issued to another site's App, would otherwise act with its owner's whole role.
// So each kind of token (told apart by its prefix, as GitHub documents them) has a rule, and
// every refusal names it. Pure: the Worker does the GitHub calls these rules ask for.
import { z } from "zod";
import {
  type AuthFailure,
  describeError,
  forbidden,
  type GitHubAnswer,
  rateLimited,
  type UserAccess,
  unauthorized,
  unavailable,
  userAccess,
} from "./access.ts";

/**
 * - `classic` (`ghp_`) and `oauth` (`gho_`, what `gh auth token` gives) carry scopes in
 *   `X-OAuth-Scopes`; so do `legacy` tokens (40 hex characters, issued before 2021);
 * - `app-user` (`ghu_`): a GitHub App's user token, no scopes;
 * - `fine-grained` (`github_pat_`), `installation` (`ghs_`, the Actions `GITHUB_TOKEN`),
 *   `refresh` (`ghr_`): refused.
 */
export type GitHubTokenKind =
  | "classic"
  | "oauth"
  | "legacy"
  | "app-user"
  | "fine-grained"
  | "installation"
  | "refresh";

const PREFIXES: ReadonlyArray<[string, GitHubTokenKind]> = [
  ["github_pat_", "fine-grained"],
  ["ghp_", "classic"],
  ["gho_", "oauth"],
  ["ghu_", "app-user"],
  ["ghs_", "installation"],
  ["ghr_", "refresh"],
];

export function githubTokenKind(token: string): GitHubTokenKind {
  for (const [prefix, kind] of PREFIXES) if (token.startsWith(prefix)) return kind;
  return "legacy";
}

/** How audit entries and messages name a kind: its prefix, never any of the token. */
export const TOKEN_KIND_NAMES: Record<GitHubTokenKind, string> = {
  classic: "ghp_",
  oauth: "gho_",
  legacy: "classic (unprefixed)",
  "app-user": "ghu_",
  "fine-grained": "github_pat_",
  installation: "ghs_",
  refresh: "ghr_",
};

/** The App's OAuth client credentials, as the Worker's settings give them (maybe unset). */
export interface AppClientSettings {
  clientId?: string | undefined;
  clientSecret?: string | undefined;
}

/** What must be asked of GitHub before a token of this kind is let in, or why it never is. */
export type TokenRule =
  | { ok: true; check: "scopes" }
  | { ok: true; check: "app"; clientId: string; clientSecret: string }
  | AuthFailure;

const USE_INSTEAD =
  "use a fleet key (POST /v1/repos/{owner}/{repo}/keys, minted by a repository admin) or, inside GitHub Actions, an OIDC token (`permissions: id-token: write`)";

export function tokenRule(kind: GitHubTokenKind, app: AppClientSettings): TokenRule {
  switch (kind) {
    case "classic":
    case "oauth":
    case "legacy":
      // carriesScopes(kind)
      return { ok: true, check: "scopes" };
    case "app-user": {
      const clientId = app.clientId?.trim();
      const clientSecret = app.clientSecret?.trim();
      if (!clientId || !clientSecret) {
        return unauthorized(
          "GitHub App user tokens (ghu_) are accepted only when issued to switchyard's own App, which this Worker cannot check: its GITHUB_APP_CLIENT_ID and GITHUB_APP_CLIENT_SECRET settings are not set",
        );
      }
      return { ok: true, check: "app", clientId, clientSecret };
    }
    case "fine-grained":
      return unauthorized(
        `fine-grained personal access tokens (github_pat_) are not accepted: GitHub offers no way to learn what such a token may do; ${USE_INSTEAD}`,
      );
    case "installation":
      return unauthorized(
        `installation tokens (ghs_, such as the Actions GITHUB_TOKEN) are not accepted: GitHub offers no way to learn what such a token may do; ${USE_INSTEAD}`,
      );
    case "refresh":
      return unauthorized(
        "refresh tokens (ghr_) are not access tokens: send the access token (ghu_) they were issued with",
      );
  }
}

// --- classic and OAuth tokens: scopes ------------------------------------------------------

/** Kinds whose authority is their `X-OAuth-Scopes`. */
export function carriesScopes(kind: GitHubTokenKind): boolean {
  return kind === "classic" || kind === "oauth" || kind === "legacy";
}

/** `X-OAuth-Scopes: repo, read:org` → `["repo", "read:org"]`; no header → none. */
export function parseScopes(header: string | undefined | null): string[] {
  if (!header) return [];
  return header
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

const RepoVisibilitySchema = z.object({
  private: z.boolean().optional(),
  visibility: z.string().optional(),
});

/** Public only when GitHub says so (`private: false`, or `visibility: "public"`). */
function isPublic(body: unknown): boolean {
  const parsed = RepoVisibilitySchema.safeParse(body);
  if (!parsed.success) return false;
  return parsed.data.visibility === "public" || parsed.data.private === false;
}

/**
 * A classic or OAuth token's access to `fullName`: its scopes must include `repo`, or
 * `public_repo` on a public repository; then its person's role decides (`userAccess`). GitHub
 * answers 404 for a private repository to a token without `repo`, so that refusal names the
 * rule too.
 */
export function scopedTokenAccess(
  fullName: string,
  kind: GitHubTokenKind,
  answer: GitHubAnswer,
  scopesHeader: string | undefined | null,
): UserAccess {
  const name = TOKEN_KIND_NAMES[kind];
  if (answer.kind === "error") {
    const access = userAccess(fullName, answer);
    if (access.ok || access.status !== 403) return access;
    return forbidden(
      `${access.message} (a ${name} token reaches a private repository only with the repo scope)`,
    );
  }
  const scopes = parseScopes(scopesHeader);
  const allowed =
    scopes.includes("repo") || (scopes.includes("public_repo") && isPublic(answer.body));
  if (!allowed) {
    return forbidden(
      `a ${name} token needs the repo scope (or public_repo on a public repository); this one has ${scopes.length === 0 ? "no scopes" : scopes.join(", ")}`,
    );
  }
  return userAccess(fullName, answer);
}

// --- GitHub App user tokens: issued to our App ---------------------------------------------

/** The part of `POST /applications/{client_id}/token`'s answer the decision reads. */
export const AppTokenAnswerSchema = z.object({
  app: z.object({ client_id: z.string() }),
  user: z.object({ login: z.string() }).nullable().optional(),
});

export type AppTokenVerdict = { ok: true; login: string | null } | AuthFailure;

const NOT_OURS =
  "a GitHub App user token (ghu_) is accepted only when issued to switchyard's own App, and GitHub says this one was not (or it is not valid)";

/**
 * GitHub's answer to the App's check of a `ghu_` token: 200 naming our client id lets it on to
 * the permission check; 404 (another App's token, an unknown one) or another client id is 401.
 * A 401 means GitHub refused the App's own client credentials: the Worker's settings are wrong.
 */
export function appTokenVerdict(clientId: string, answer: GitHubAnswer): AppTokenVerdict {
  if (answer.kind === "error") {
    switch (answer.errorKind) {
      case "not-found":
      case "invalid":
        return unauthorized(NOT_OURS);
      case "unauthorized":
        return unavailable(
          "GitHub refused the App's client credentials (the GITHUB_APP_CLIENT_ID and GITHUB_APP_CLIENT_SECRET settings), so a ghu_ token cannot be checked",
          60,
        );
      case "rate-limited":
        return rateLimited(
          "GitHub rate-limits the App's token check; it cannot be made now",
          answer.retryAfterMs,
        );
      default:
        return unavailable(
          `GitHub did not answer the App's check of the token (${describeError(answer)}); try again`,
        );
    }
  }
  const parsed = AppTokenAnswerSchema.safeParse(answer.body);
  if (!parsed.success) {
    return unavailable(
      "GitHub's answer to the App's token check is not an authorization; try again",
    );
  }
  if (parsed.data.app.client_id !== clientId) return unauthorized(NOT_OURS);
  return { ok: true, login: parsed.data.user?.login ?? null };
}

/** The App's check is remembered by the token's SHA-256 alone (it does not depend on a repository). */
export function appTokenCacheKey(tokenSha256: string): string {
  return `app:${tokenSha256}`;
}

// --- minting keys ----------------------------------------------------------------------------

/**
 * Minting a fleet key needs admin proven within the last minute: a permission answer remembered
 * longer (up to 5 minutes) may be stale, and a key outlives it by months.
 */
export const ADMIN_PROOF_MAX_AGE_MS = 60_000;

export function adminProofFresh(provenMs: number, nowMs: number): boolean {
  return nowMs - provenMs <= ADMIN_PROOF_MAX_AGE_MS;
}
