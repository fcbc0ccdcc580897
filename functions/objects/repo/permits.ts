import type { RateLimitReading } from "../../../shared/budget/reconcile-permits.ts";
import type { GitHubClient } from "../../../shared/github/client.ts";
import type { RepoContext } from "./context.ts";
import type { RepoIdentity } from "./repo-store.ts";

// A full reconcile runs under a permit of the repository's installation (issue 25; the rule is
// shared/budget/reconcile-permits.ts, the line is the InstallationObject's). Each step asks (a
// holder's ask renews its lease), a refused one waits by rescheduling itself, never by
// sleeping, and the permit goes back when the run ends, with what it spent. Webhooks do not
// wait for any of this: the acknowledgement path calls no GitHub and takes no permit.

/**
 * Asks for (or renews) the permit; true when held. Refused: `reconcile-full` waits for the
 * installation's word (`permitGranted`), or asks again after a lease's time if that is lost.
 */
export async function takePermit(
  c: RepoContext,
  identity: RepoIdentity,
  nowMs: number,
): Promise<boolean> {
  // The installation's clock decides (leases, the budget's windows), not this object's.
  const answer = await c.installationObject(identity.installationId).askPermit(identity.repoId);
  if (answer.granted) {
    if (c.store.meta.get("permitHeldSinceMs") === undefined) {
      c.store.meta.set("permitHeldSinceMs", nowMs);
    }
    return true;
  }
  c.store.meta.delete("permitHeldSinceMs");
  c.schedules.at("reconcile-full", answer.retryAtMs);
  return false;
}

/**
 * Gives the permit back: the run completed (`completed`), failed or is no longer wanted.
 * `requests` is what it sent (the whole run's when it completed). Never throws: a permit not
 * given back ends with its lease.
 */
export async function givePermit(
  c: RepoContext,
  identity: RepoIdentity,
  outcome: { completed: boolean; requests: number; client: GitHubClient | null },
  nowMs: number,
): Promise<void> {
  const since = c.store.meta.get("permitHeldSinceMs");
  c.store.meta.delete("permitHeldSinceMs");
  try {
    await c.installationObject(identity.installationId).releasePermit(identity.repoId, {
      requests: outcome.requests,
      durationMs: since === undefined ? 0 : Math.max(0, nowMs - since),
      readings: outcome.client ? readingsOf(outcome.client) : [],
      completed: outcome.completed,
    });
  } catch (error) {
    console.error(`${identity.fullName}: giving back the reconcile permit failed`, error);
  }
}

/**
 * The last `x-ratelimit-*` the client saw of each resource (`core`, `graphql`). GitHub's reset
 * is an absolute time, only as good as the two clocks agree (`budgetRoom` ignores a reset more
 * than an hour ahead).
 */
function readingsOf(client: GitHubClient): RateLimitReading[] {
  return Object.entries(client.stats.rateLimits)
    .filter(([, seen]) => [seen.limit, seen.remaining, seen.reset].every(Number.isFinite))
    .map(([resource, seen]) => ({
      resource,
      limit: seen.limit,
      remaining: seen.remaining,
      resetMs: seen.reset * 1000,
    }));
}

/** The installation says this repository's turn came: its full reconcile runs now. */
export async function permitGranted(c: RepoContext): Promise<"woken" | "gone"> {
  if (!c.active()) return "gone";
  c.schedules.at("reconcile-full", Date.now());
  await c.schedules.rearm();
  return "woken";
}
