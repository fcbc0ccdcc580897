import type { Env } from "./env.ts";
import { directory } from "./objects/directory-object.ts";

/**
 * The cron trigger: GitHub does not redeliver lost webhooks by itself, so every active
 * repository's reconciliation is re-armed (incremental, or full when a day has passed).
 */
export async function scheduled(
  _controller: ScheduledController,
  env: Env,
): Promise<{ armed: number; failed: number }> {
  const repos = await directory(env).list({ status: "active" });
  let armed = 0;
  let failed = 0;
  for (const entry of repos) {
    try {
      const stub = env.REPO.get(env.REPO.idFromName(String(entry.repoId)));
      if (await stub.armReconcile()) armed += 1;
    } catch (error) {
      failed += 1;
      console.error(`cron: could not arm reconciliation for ${entry.fullName}`, error);
    }
  }
  return { armed, failed };
}
