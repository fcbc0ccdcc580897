// Reply state from the reconciles (issue 22): each open issue's comments read backwards, from
// the newest, until a trusted human input is found (with the agent comment before it, which
// `queue.replies: answers` reads), or the thread's first comment. The page and refetch queries
// bring the newest COMMENT_WINDOW of every issue at no extra request; only the issues whose
// window decides nothing are read further: ISSUE_COMMENTS_BATCH issues a request for their
// newest 100, then one issue a request, 100 comments at a time, at most MAX_PAGES_BACK times
// (a longer thread is left "not evaluated" for the `replies` schedule to read whole). A thread
// the caller already holds whole (the incremental refetch's `storedThread`) is read back only
// to its newest held comment: the new comments are all it needs. Bodies
// stay only until the caller classified the page; GraphQL's node limit is far off (20 comments
// x 100 issues a page; 100 x 10 a batch), and the batches stay small because every comment's
// body comes back.

import type { ReplyTrust } from "../queue/reply-authors.ts";
import {
  classifyReplyComment,
  neededFrom,
  type ReplyComment,
  windowSuffices,
} from "../queue/reply-state.ts";
import type { GitHubClient } from "./client.ts";
import type { RestComment } from "./comments.ts";
import {
  ISSUE_COMMENTS_BATCH,
  ISSUE_COMMENTS_BEFORE_QUERY,
  ISSUE_COMMENTS_QUERY,
} from "./queries.ts";

/** Comment pages of 100 read further back per issue, after its newest 100. */
export const MAX_PAGES_BACK = 5;

export interface GqlActor {
  __typename: string;
  login: string;
}

export interface GqlComment {
  databaseId: number | null;
  author: GqlActor | null;
  authorAssociation: string;
  body: string;
  createdAt: string;
  updatedAt: string;
  url: string;
}

export interface GqlCommentWindow {
  totalCount: number;
  pageInfo: { hasPreviousPage: boolean; startCursor: string | null };
  nodes: (GqlComment | null)[];
}

/** What was read of one open issue's thread. */
export interface ReplyWindow {
  number: number;
  /** The issue's page and its body's author (the opening the rules read). */
  url: string;
  author: { login: string; type: string; association: string | null };
  /** GitHub's count of the issue's comments when it was read. */
  totalCount: number;
  /** The newest comments of the thread, oldest first, in the REST shape the store takes. */
  comments: RestComment[];
  /** The read reached the thread's first comment. */
  whole: boolean;
  /**
   * The read reached back into the thread the caller holds whole (`storedThread`): the
   * comments listed continue it, and nothing before them needs to be cut or read again.
   */
  joins?: boolean;
}

/**
 * GraphQL names a bot by its slug (`fleet`); REST, webhooks and the rules say `fleet[bot]`.
 * Another actor (a deleted account, null) is GitHub's `ghost`.
 */
export function actorOf(actor: GqlActor | null): { login: string; type: string } {
  if (actor === null) return { login: "ghost", type: "User" };
  const bot = actor.__typename === "Bot";
  const login = bot && !actor.login.endsWith("[bot]") ? `${actor.login}[bot]` : actor.login;
  return { login, type: actor.__typename };
}

function toRest(nodes: readonly (GqlComment | null)[]): RestComment[] {
  const out: RestComment[] = [];
  for (const n of nodes) {
    if (n === null || n.databaseId === null) continue;
    out.push({
      id: n.databaseId,
      body: n.body,
      user: actorOf(n.author),
      author_association: n.authorAssociation,
      created_at: n.createdAt,
      updated_at: n.updatedAt,
      html_url: n.url,
    });
  }
  return out;
}

interface Reading {
  id: string;
  window: ReplyWindow;
  cursor: string | null;
  /** The newest comment id of the thread the caller holds whole; null when it holds none. */
  stored: number | null;
}

/** A comment as GitHub lists it, as the reply rules read it. */
export function replyCommentOf(c: RestComment): ReplyComment {
  return {
    author: {
      login: c.user?.login ?? "ghost",
      type: c.user?.type ?? "User",
      association: c.author_association ?? null,
    },
    body: c.body ?? "",
    createdAt: c.created_at,
    url: c.html_url ?? "",
  };
}

function classified(r: Reading) {
  return r.window.comments.map((c) => classifyReplyComment(replyCommentOf(c)));
}

/** The comments read reach back to the newest one the caller holds (all after it are read). */
function joins(r: Reading): boolean {
  if (r.stored === null) return false;
  const oldest = r.window.comments[0]?.id;
  return oldest !== undefined && oldest <= r.stored;
}

function suffices(r: Reading, trust: ReplyTrust): boolean {
  return r.window.whole || joins(r) || windowSuffices(classified(r), trust);
}

function take(r: Reading, conn: GqlCommentWindow, older: boolean): void {
  const read = toRest(conn.nodes);
  r.window.totalCount = conn.totalCount;
  r.window.whole = !conn.pageInfo.hasPreviousPage;
  r.cursor = conn.pageInfo.startCursor;
  if (older) {
    r.window.comments = [...read, ...r.window.comments];
  } else {
    r.window.comments = read;
  }
}

/**
 * The reply windows of `issues` (open issues with the first window their page brought), read
 * further back where that window decides nothing under `trust`. Counts its requests in
 * `report.commentRequests`.
 */
export async function readReplyWindows(
  client: GitHubClient,
  repo: string,
  issues: ReadonlyArray<{
    id: string;
    number: number;
    url: string;
    author: GqlActor | null;
    authorAssociation: string;
    comments: GqlCommentWindow;
  }>,
  trust: ReplyTrust,
  report: { commentRequests: number },
  storedThread: (number: number) => number | null = () => null,
): Promise<ReplyWindow[]> {
  const readings: Reading[] = issues.map((issue) => {
    const r: Reading = {
      id: issue.id,
      window: {
        number: issue.number,
        url: issue.url,
        author: { ...actorOf(issue.author), association: issue.authorAssociation },
        totalCount: 0,
        comments: [],
        whole: true,
      },
      cursor: null,
      stored: storedThread(issue.number),
    };
    take(r, issue.comments, false);
    return r;
  });
  // The newest 100 of each issue the first window did not decide, a few issues a request.
  const more = readings.filter((r) => !suffices(r, trust));
  for (let i = 0; i < more.length; i += ISSUE_COMMENTS_BATCH) {
    const batch = more.slice(i, i + ISSUE_COMMENTS_BATCH);
    report.commentRequests += 1;
    const data = await client.graphql<{
      nodes: ({ number: number; comments: GqlCommentWindow } | null)[];
    }>(`read the comments of ${batch.length} issues of ${repo}`, ISSUE_COMMENTS_QUERY, {
      ids: batch.map((r) => r.id),
    });
    const byNumber = new Map(batch.map((r) => [r.window.number, r]));
    for (const n of data.nodes) {
      const r = n?.comments ? byNumber.get(n.number) : undefined;
      if (r && n) take(r, n.comments, false);
    }
  }
  // Longer threads, one issue at a time, further back.
  for (const r of more) {
    for (let page = 0; page < MAX_PAGES_BACK && !suffices(r, trust); page++) {
      report.commentRequests += 1;
      const data = await client.graphql<{
        node: { number: number; comments: GqlCommentWindow } | null;
      }>(`read older comments of ${repo}#${r.window.number}`, ISSUE_COMMENTS_BEFORE_QUERY, {
        id: r.id,
        before: r.cursor,
      });
      if (!data.node?.comments) break; // deleted meanwhile: the next reconcile sees it gone
      take(r, data.node.comments, true);
    }
  }
  // Only the part the rules need is handed on (and kept): from the agent comment before the
  // latest trusted input. A thread that shows none is handed on as read.
  // A read that joins the thread held whole is handed on as is: it continues that thread.
  for (const r of readings) {
    if (!r.window.whole && joins(r)) {
      r.window.joins = true;
      continue;
    }
    const from = neededFrom(classified(r), trust);
    if (from > 0) {
      r.window.comments = r.window.comments.slice(from);
      r.window.whole = false;
    }
  }
  return readings.map((r) => r.window);
}
