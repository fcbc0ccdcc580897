import {
  installationChecksDue,
  MAX_CHECKS_PER_TICK,
} from "../shared/schedule/installation-check.ts";
import type { Env } from "./env.ts";
import { directory } from "./objects/directory/directory-object.ts";

/** Repositories read from the directory per call: the cron never holds the whole list. */
export const CRON_PAGE_SIZE = 500;

/**
 * The cron trigger: GitHub does not redeliver lost webhooks by itself, so every active
 * repository's reconciliation is re-armed (incremental, or full when a day has passed), and a
 * bounded share of all known repositories (each once a day) asks GitHub which installation
 * covers it (functions/installation-check.ts). Repositories are read from the directory a page
 * at a time (by id), so neither the directory's answer nor the cron's memory grows with the
 * number of repositories.
 */
export async function scheduled(
  controller: ScheduledController,
  env: Env,
  options: { pageSize?: number } = {},
): Promise<{ armed: number; failed: number; checked: number; pages: number }> {
  const pageSize = options.pageSize ?? CRON_PAGE_SIZE;
  const stub = (repoId: number) => env.REPO.get(env.REPO.idFromName(String(repoId)));
  let armed = 0;
  let failed = 0;
  let checked = 0;
  let due = 0;
  let pages = 0;
  let afterId: number | undefined;
  for (;;) {
    const page = await directory(env).list({
      ...(afterId !== undefined ? { afterId } : {}),
      limit: pageSize,
    });
    pages += 1;
    for (const entry of page) {
      if (entry.status !== "active") continue;
      try {
        if (await stub(entry.repoId).armReconcile()) armed += 1;
      } catch (error) {
        failed += 1;
        console.error(`cron: could not arm reconciliation for ${entry.fullName}`, error);
      }
    }
    // Removed and suspended repositories too: a move or an addition may never have been
    // delivered. The per-tick bound counts over all pages.
    const checks = installationChecksDue(page, controller.scheduledTime, MAX_CHECKS_PER_TICK - due);
    due += checks.length;
    for (const entry of checks) {
      try {
        await stub(entry.repoId).checkInstallation();
        checked += 1;
      } catch (error) {
        failed += 1;
        console.error(`cron: could not check the installation of ${entry.fullName}`, error);
      }
    }
    if (page.length < pageSize) break;
    afterId = page[page.length - 1]!.repoId;
  }
  return { armed, failed, checked, pages };
}
