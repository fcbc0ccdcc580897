import type { GitHubClient } from "../../../shared/github/client.ts";
import { NODES_BATCH, resolveIssueNodes } from "../../../shared/github/projects.ts";
import type { ProjectItemNotice } from "../../../shared/queue/project-item.ts";
import type { Env } from "../../env.ts";
import type { InstallationStore } from "./installation-store.ts";

// `projects_v2_item` webhooks in the InstallationObject (spec 6.1): GitHub sends them for
// organization projects and names no repository. On acknowledgement a notice is kept only when
// one of the installation's repositories ranks by its project (they register the project's node
// id after reading it, priority.ts); the alarm then resolves each item's issue (one GraphQL
// request per 100) and hands the notice to that issue's repository, if it ranks by the project.

/** Recorded for the alarm, or ignored (a project no repository of the installation ranks by). */
export function receiveProjectItem(
  store: InstallationStore,
  deliveryId: string,
  notice: ProjectItemNotice,
  nowMs: number,
): "applied" | "duplicate" | "ignored" {
  return store.transaction(() => {
    if (store.journal.hasDelivery(deliveryId)) return "duplicate";
    if (store.projects.watchers(notice.projectId).length === 0) return "ignored";
    store.journal.recordDelivery(deliveryId, nowMs);
    store.projects.record(notice);
    return "applied";
  });
}

/** What the RepoObject takes: the notice with its issue's number. */
export type ResolvedProjectItem = ProjectItemNotice & { number: number };

/**
 * Resolves the due notices' issues and hands each to its repository. A failed resolution is
 * retried at `retryAt(attempts, error)`; a notice whose issue is gone or unreadable is dropped.
 */
export async function deliverProjectNotices(input: {
  env: Env;
  store: InstallationStore;
  client: () => GitHubClient;
  nowMs: number;
  retryAt: (attempts: number, error: unknown) => number;
}): Promise<void> {
  const { env, store } = input;
  for (;;) {
    const due = store.projects.due(input.nowMs, NODES_BATCH);
    if (due.length === 0) return;
    let issues: Map<string, { repoId: number; number: number }>;
    try {
      issues = await resolveIssueNodes(input.client(), [
        ...new Set(due.map((d) => d.notice.contentId)),
      ]);
    } catch (error) {
      store.transaction(() => {
        for (const d of due) {
          store.projects.failed(d.notice, d.attempts + 1, input.retryAt(d.attempts + 1, error));
        }
      });
      console.error("project items: resolving their issues failed", error);
      return;
    }
    for (const { notice, attempts } of due) {
      const issue = issues.get(notice.contentId);
      try {
        if (issue && store.projects.watchers(notice.projectId).includes(issue.repoId)) {
          const repo = env.REPO.get(env.REPO.idFromName(String(issue.repoId)));
          await repo.projectItem({ ...notice, number: issue.number });
        }
        store.projects.done(notice);
      } catch (error) {
        store.projects.failed(notice, attempts + 1, input.retryAt(attempts + 1, error));
        console.error(`project items: handing ${notice.itemId} to its repository failed`, error);
      }
    }
  }
}
