// The rows of reply state (`reply_openings`, `reply_comments`) and what an event makes of them:
// pure, so the store (replies-store.ts) is only the SQL around them.
import { instantMs } from "../../../shared/graph/time.ts";
import type { ResponseVerdict } from "../../../shared/idd/classify.ts";
import type { GraphEvent, IssueRecord } from "../../../shared/ingest/events.ts";
import {
  type ClassifiedComment,
  type ClassifiedHistory,
  classifyReplyComment,
  openingIsHuman,
  REPLY_RULES_VERSION,
  type ReplyRole,
} from "../../../shared/queue/reply-state.ts";

export type OpeningRow = {
  number: number;
  login: string;
  author_type: string;
  association: string | null;
  human: number;
  created_at: string;
  url: string;
  comment_count: number | null;
  updated_ms: number;
  rules: number;
  /** The oldest comment id of the thread's part read last (null: read from its first comment). */
  known_from: number | null;
  /** Comments before that part GitHub counted when it was read (not stored, not needed). */
  skipped: number;
};

export type CommentRow = {
  id: number;
  number: number;
  login: string;
  author_type: string;
  association: string | null;
  created_at: string;
  url: string;
  /** A `ReplyRole`, or `deleted` (kept so a late delivery of the comment cannot bring it back). */
  role: string;
  verdict: string | null;
  updated_ms: number;
  rules: number;
};

/** The issue's reply history as the rules read it; `comments` undefined until all were seen. */
export interface StoredReplyHistory extends ClassifiedHistory {
  number: number;
}

/**
 * The opening row `issue` makes of the stored one (`row`), or null when nothing changes: an older
 * record never replaces a newer one.
 */
export function openingOf(
  issue: IssueRecord,
  row: OpeningRow | undefined,
  repo: string | null,
): OpeningRow | null {
  if (issue.author === undefined || issue.body === undefined) return null;
  const at = instantMs(issue.updatedAt);
  if (row && row.updated_ms > at) return null;
  const human = openingIsHuman(issue.title, issue.body, issue.author) ? 1 : 0;
  const url = issue.url ?? row?.url ?? issueUrl(repo, issue.number);
  let count = issue.commentCount ?? row?.comment_count ?? null;
  // Of two records stamped alike (GitHub's times are whole seconds; a deletion does not move
  // `updated_at`) either may be the later: the higher count is kept, which at worst leaves the
  // thread unread until the `replies` schedule reads it (settleThread sets the count).
  if (row && row.updated_ms === at && row.comment_count !== null && count !== null)
    count = Math.max(count, row.comment_count);
  const association = issue.author.association ?? null;
  if (
    row &&
    row.login === issue.author.login &&
    row.association === association &&
    row.human === human &&
    row.comment_count === count &&
    row.rules === REPLY_RULES_VERSION
  )
    return null;
  return {
    number: issue.number,
    login: issue.author.login,
    author_type: issue.author.type,
    association,
    human,
    created_at: issue.createdAt,
    url,
    comment_count: count,
    updated_ms: at,
    rules: REPLY_RULES_VERSION,
    // Kept as stored: which part of the thread was read is the settle steps' to say.
    known_from: row?.known_from ?? null,
    skipped: row?.skipped ?? 0,
  };
}

/**
 * The comment row `event` makes of the stored one (`row`), classified now (the body is not
 * kept), or null when nothing changes: a deletion wins over every version of the comment, and an
 * older version never replaces a newer.
 */
export function commentOf(
  event: Extract<GraphEvent, { type: "comment" }>,
  row: CommentRow | undefined,
  repo: string | null,
): CommentRow | null {
  const at = instantMs(event.updatedAt);
  if (row && (row.role === "deleted" || row.updated_ms > at)) return null;
  const url = event.url ?? row?.url ?? `${issueUrl(repo, event.number)}#issuecomment-${event.id}`;
  const c = classifyReplyComment({
    author: { login: event.author.login, type: event.author.type },
    body: event.body,
    createdAt: event.createdAt,
    url,
  });
  const association = event.association ?? null;
  if (
    row &&
    row.role === c.role &&
    row.verdict === c.verdict &&
    row.association === association &&
    row.rules === REPLY_RULES_VERSION
  )
    return null;
  return {
    id: event.id,
    number: event.number,
    login: event.author.login,
    author_type: event.author.type,
    association,
    created_at: event.createdAt,
    url,
    role: c.role,
    verdict: c.verdict,
    updated_ms: at,
    rules: REPLY_RULES_VERSION,
  };
}

/**
 * One issue's history from its opening row and its comment rows (not deleted, ascending by id):
 * its comments only when every comment GitHub counts in the part of the thread read last (and
 * after it) was seen, classified by the current rules (else not evaluated).
 */
export function historyOf(o: OpeningRow, rows: readonly CommentRow[]): StoredReplyHistory {
  const from = o.known_from;
  let stale = false;
  const comments: ClassifiedComment[] = [];
  for (const r of rows) {
    if (r.rules !== REPLY_RULES_VERSION) stale = true;
    if (from !== null && r.id < from) continue;
    comments.push({
      author: { login: r.login, type: r.author_type, association: r.association },
      createdAt: r.created_at,
      url: r.url,
      role: r.role as ReplyRole,
      verdict: r.verdict as ResponseVerdict | null,
    });
  }
  const complete =
    o.comment_count !== null &&
    comments.length + o.skipped >= o.comment_count &&
    o.rules === REPLY_RULES_VERSION &&
    !stale;
  return {
    number: o.number,
    url: o.url,
    createdAt: o.created_at,
    author: { login: o.login, type: o.author_type, association: o.association },
    openingIsHuman: o.human === 1,
    comments: complete ? comments : undefined,
    ...(from !== null ? { partial: true } : {}),
  };
}

/**
 * Before when a comment a read did not list was deleted, not posted after the read: the newest
 * comment listed, or the second before the read began (GitHub stamps whole seconds, and its
 * clock and the Worker's differ a little), whichever is later. A deletion a race leaves
 * unnoticed is noticed by the next read; a comment wrongly taken for deleted is missing until
 * a read lists it again (it leaves no tombstone: `forgetComment`).
 */
export function readCutoffMs(
  listed: ReadonlyArray<{ createdAt: string }>,
  readStartedMs: number,
): number {
  const newest = listed.reduce((m, c) => Math.max(m, instantMs(c.createdAt)), 0);
  return Math.max(newest, Math.floor(readStartedMs / 1000) * 1000 - 1000);
}

export function issueUrl(repo: string | null, number: number): string {
  return `https://github.com/${repo ?? "unknown/unknown"}/issues/${number}`;
}
