import { installationChecksDue } from "../shared/schedule/installation-check.ts";
import type { Env } from "./env.ts";
import { directory } from "./objects/directory-object.ts";

/**
 * The cron trigger: GitHub does not redeliver lost webhooks by itself, so every active
 * repository's reconciliation is re-armed (incremental, or full when a day has passed), and a
 * bounded share of all known repositories (each once a day) asks GitHub which installation
 * covers it (functions/installation-check.ts).
 */
export async function scheduled(
  controller: ScheduledController,
  env: Env,
): Promise<{ armed: number; failed: number; checked: number }> {
  const entries = await directory(env).list();
  const stub = (repoId: number) => env.REPO.get(env.REPO.idFromName(String(repoId)));
  let armed = 0;
  let failed = 0;
  for (const entry of entries) {
    if (entry.status !== "active") continue;
    try {
      if (await stub(entry.repoId).armReconcile()) armed += 1;
    } catch (error) {
      failed += 1;
      console.error(`cron: could not arm reconciliation for ${entry.fullName}`, error);
    }
  }
  // Removed and suspended repositories too: a move or an addition may never have been delivered.
  let checked = 0;
  for (const entry of installationChecksDue(entries, controller.scheduledTime)) {
    try {
      await stub(entry.repoId).checkInstallation();
      checked += 1;
    } catch (error) {
      failed += 1;
      console.error(`cron: could not check the installation of ${entry.fullName}`, error);
    }
  }
  return { armed, failed, checked };
}
