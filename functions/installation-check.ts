// The cron's installation check, its GitHub side (the rules are in
// shared/schedule/installation-check.ts): which installation of the App covers a repository,
// asked by repository id with the App's JWT, then confirmed with that installation's list.
import { createAppAuth } from "@octokit/auth-app";
import { checkAppPrivateKey, type TokenCache } from "../shared/github/auth.ts";
import { GitHubClient } from "../shared/github/client.ts";
import { GitHubApiError } from "../shared/github/errors.ts";
import { splitRepo } from "../shared/github/fetch-snapshot.ts";
import {
  type HeldInstallation,
  type InstallationAnswer,
  needsListing,
} from "../shared/schedule/installation-check.ts";
import { type Env, numberSetting, requireSetting } from "./env.ts";
import { installationClient } from "./github-client.ts";

/**
 * A client authenticated as the App itself (a JWT signed with its key, valid for minutes). With
 * `repository`, requests about it go by id: `GET /repos/{owner}/{repo}/installation` is sent as
 * `GET /repositories/{id}/installation`, so a reused name cannot answer for another repository.
 */
export async function appClient(
  env: Env,
  operation: string,
  repository?: { id: number; fullName: string },
): Promise<GitHubClient> {
  const appId = requireSetting(env, "GITHUB_APP_ID", operation);
  const privateKey = checkAppPrivateKey(requireSetting(env, "GITHUB_APP_PRIVATE_KEY", operation));
  const { token } = await createAppAuth({ appId, privateKey })({ type: "app" });
  const timeout = numberSetting(env.GITHUB_TIMEOUT_MS);
  const base = numberSetting(env.GITHUB_RETRY_BASE_MS);
  return new GitHubClient({
    auth: { kind: "token", token },
    baseUrl: env.GITHUB_API_URL || "https://api.github.com",
    ...(repository ? { repository } : {}),
    ...(timeout !== undefined ? { timeoutMs: timeout } : {}),
    retry: {
      maxRateLimitWaitMs: 10_000,
      ...(base !== undefined ? { baseDelayMs: base, maxDelayMs: base * 16 } : {}),
    },
  });
}

/**
 * The installation of the App that covers repository `repo` now, asked by repository id with
 * the App's JWT (`GET /repositories/{id}/installation`); null when none does (404: not
 * installed, or the repository is gone). This, not a read with an installation's token, is what
 * says whether an installation covers a repository: any installation token can read a public
 * repository. Any other failure throws.
 */
export async function coveringInstallation(
  env: Env,
  repo: { id: number; fullName: string },
  operation = `check which installation covers repository ${repo.id} (${repo.fullName})`,
): Promise<{ id: number; suspended: boolean } | null> {
  const app = await appClient(env, operation, repo);
  const { owner, name } = splitRepo(repo.fullName);
  try {
    const { data } = await app.send<{ id: number; suspended_at?: string | null }>({
      operation,
      route: "GET /repos/{owner}/{repo}/installation",
      params: { owner, repo: name },
      idempotent: true,
    });
    return { id: data.id, suspended: Boolean(data.suspended_at) };
  } catch (error) {
    if (error instanceof GitHubApiError && error.kind === "not-found") return null;
    throw error;
  }
}

/** Whether installation `installationId` covers repository `repo` now (see `coveringInstallation`). */
export async function installationCovers(
  env: Env,
  installationId: number,
  repo: { id: number; fullName: string },
): Promise<boolean> {
  const operation = `check that installation ${installationId} covers repository ${repo.id} (${repo.fullName})`;
  return (await coveringInstallation(env, repo, operation))?.id === installationId;
}

/**
 * The installation as GitHub has it (`GET /app/installations/{id}` with the App's JWT, redirects
 * not followed): `status` is the answer's HTTP status, read with `removalVerdict` (404 or 410:
 * deleted), `suspended` whether its `suspended_at` is set (200 only). Other failures throw.
 */
export async function installationOnGitHub(
  env: Env,
  installationId: number,
): Promise<{ status: number; suspended: boolean }> {
  const operation = `read installation ${installationId}`;
  const app = await appClient(env, operation);
  try {
    const res = await app.send<{ suspended_at?: string | null }>({
      operation,
      route: "GET /app/installations/{installation_id}",
      params: { installation_id: installationId },
      idempotent: true,
      redirect: "manual",
    });
    return { status: res.status, suspended: Boolean(res.data?.suspended_at) };
  } catch (error) {
    if (error instanceof GitHubApiError && error.kind === "not-found") {
      return { status: error.status ?? 404, suspended: false };
    }
    throw error;
  }
}

/**
 * Asks GitHub which installation covers repository `repo` (by id, with the App's JWT; 404: none)
 * and, when that answer would change what `held` says, whether that installation's repository
 * list (`GET /installation/repositories`, with its token) holds the repository's id. Any other
 * failure throws: nothing is decided on a half answer.
 */
export async function askInstallation(
  env: Env,
  repo: { id: number; fullName: string },
  held: HeldInstallation,
  tokenCache: (installationId: number) => TokenCache,
): Promise<InstallationAnswer> {
  const installation = await coveringInstallation(env, repo);
  if (installation === null) return { kind: "not-installed" };
  const { suspended } = installation;
  if (suspended || !needsListing(held, installation.id)) {
    return { kind: "installed", installationId: installation.id, suspended, listed: null };
  }
  const client = installationClient(
    env,
    installation.id,
    tokenCache(installation.id),
    `list the repositories of installation ${installation.id}`,
  );
  for (let page = 1; ; page++) {
    const res = await client.send<{ repositories: Array<{ id: number; full_name: string }> }>({
      operation: `list the repositories of installation ${installation.id}`,
      route: "GET /installation/repositories",
      params: { per_page: 100, page },
      idempotent: true,
    });
    const found = res.data.repositories.find((r) => r.id === repo.id);
    if (found) {
      return {
        kind: "installed",
        installationId: installation.id,
        suspended,
        listed: { fullName: found.full_name },
      };
    }
    if (!/rel="next"/.test(res.headers.link ?? "")) break;
  }
  return { kind: "installed", installationId: installation.id, suspended, listed: false };
}
