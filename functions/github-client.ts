import type { TokenCache } from "../shared/github/auth.ts";
import { GitHubClient } from "../shared/github/client.ts";
import { RateLimitPacer } from "../shared/github/pacing.ts";
import { githubClock } from "./clock.ts";
import { type Env, numberSetting, requireSetting } from "./env.ts";

/**
 * One pacer per installation in this isolate: an installation token's rate limit is shared by
 * every repository of the installation and outlives any single operation's client, so the last
 * `x-ratelimit-*` headers seen by one run still space the next one's requests.
 */
const pacers = new Map<number, RateLimitPacer>();

function pacerFor(installationId: number): RateLimitPacer {
  let pacer = pacers.get(installationId);
  if (!pacer) {
    if (pacers.size >= 1_000) pacers.delete(pacers.keys().next().value!);
    pacer = new RateLimitPacer();
    pacers.set(installationId, pacer);
  }
  return pacer;
}

/**
 * A GitHub client acting as the App's installation. The installation token is minted with the
 * App's key and kept only in memory (the InstallationObject's cache), never in storage or logs.
 */
export function installationClient(
  env: Env,
  installationId: number,
  cache: TokenCache,
  operation: string,
  /** The repository a RepoObject's client serves: requests naming it go by id. */
  repository?: { id: number; fullName: string },
): GitHubClient {
  const appId = requireSetting(env, "GITHUB_APP_ID", operation);
  const privateKey = requireSetting(env, "GITHUB_APP_PRIVATE_KEY", operation);
  const base = numberSetting(env.GITHUB_RETRY_BASE_MS);
  const timeout = numberSetting(env.GITHUB_TIMEOUT_MS);
  return new GitHubClient({
    auth: { kind: "app", appId, privateKey, installationId, cache },
    // GitHub's resets and token expiries are judged by the clock tests can move with the simulator's.
    now: githubClock.now,
    baseUrl: env.GITHUB_API_URL || "https://api.github.com",
    ...(repository ? { repository } : {}),
    rateLimitState: pacerFor(installationId),
    ...(timeout !== undefined ? { timeoutMs: timeout } : {}),
    // Inside an alarm, wait briefly at most; longer waits become a rescheduled alarm.
    retry: {
      maxRateLimitWaitMs: 10_000,
      ...(base !== undefined ? { baseDelayMs: base, maxDelayMs: base * 16 } : {}),
    },
  });
}
