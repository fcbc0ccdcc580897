import { fetchIssueComments } from "../../../shared/github/comments.ts";
import { commentEvents } from "../../../shared/ingest/from-comments.ts";
import type { RepoContext } from "./context.ts";

/** Threads read in one run of the `replies` schedule (the rest in the next). */
const THREADS_PER_RUN = 20;

/**
 * The `replies` schedule: an open issue whose thread the object has not seen whole (commented
 * before the App was installed, or a webhook was lost) has its comments read from GitHub (REST,
 * 100 a page), so its reply state can be decided. Asked for by the queue view when it meets such
 * an issue with a webhook-known opening: only threads people are active on cost requests.
 */
export async function readReplyThreads(
  c: RepoContext,
  fullName: string,
  nowMs: number,
): Promise<void> {
  const unread = c.views.current(nowMs).unreadThreads;
  if (unread.length === 0) return;
  const client = c.client(`read reply threads of ${fullName}`);
  for (const number of unread.slice(0, THREADS_PER_RUN)) {
    const readStartedMs = Date.now();
    const comments = await fetchIssueComments(client, fullName, number);
    c.store.transaction(() => {
      c.store.applyEvents(commentEvents(number, comments));
      c.store.replies.settleThread(
        number,
        comments.map((comment) => ({ id: comment.id, createdAt: comment.created_at })),
        readStartedMs,
      );
    });
  }
  if (unread.length > THREADS_PER_RUN) c.schedules.at("replies", Date.now());
}
