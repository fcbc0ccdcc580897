// The reply summary made the plainest way, with `evaluateSweep` itself reading the bodies: the
// oracle the shared rules (shared/queue/reply-state.ts, which keep only classified comments so
// the Worker needs no bodies) must agree with.
import { classifyText } from "../../shared/idd/classify.ts";
import { evaluateSweep } from "../../shared/idd/sweep.ts";
import {
  isTrustedReplyAuthor,
  type ReplyAuthor,
  type ReplyTrust,
} from "../../shared/queue/reply-authors.ts";
import type {
  ReplyComment,
  ReplyHistory,
  ReplyInput,
  ReplyResponse,
  ReplySummary,
} from "../../shared/queue/reply-state.ts";

/** Claim markers say who works on an issue; they answer nobody and nobody answers them. */
const CLAIM_MARKERS = ["claimed-by", "unclaimed-by", "activation-nonce"];

function isClaimMarker(comment: ReplyComment): boolean {
  return classifyText(comment.body, comment.author).signals.some((signal) =>
    CLAIM_MARKERS.some(
      (name) => signal === `marker:${name}` || signal.startsWith(`marker:${name}:`),
    ),
  );
}

function isBot(author: ReplyAuthor | null): boolean {
  return author?.type === "Bot";
}

/**
 * Reads a history into a summary, or null when its comments were never read. Comments of
 * untrusted people are dropped before the sweep reads them (a stranger neither asks nor
 * answers); bots stay (their comments are agent comments, never input); claim markers are
 * dropped (not an agent comment a person could be answering, nor an answer).
 */
export function oracleSummarizeReplies(
  history: ReplyHistory,
  trust: ReplyTrust,
): ReplySummary | null {
  if (history.comments === undefined) return null;
  const kept = history.comments.filter(
    (c) => (isBot(c.author) || isTrustedReplyAuthor(c.author, trust)) && !isClaimMarker(c),
  );
  const bodyCounts = isBot(history.author) || isTrustedReplyAuthor(history.author, trust);
  const evaluation = evaluateSweep({
    ...(bodyCounts && history.title !== undefined ? { title: history.title } : {}),
    body: bodyCounts ? history.body : null,
    author:
      history.author === null ? null : { login: history.author.login, type: history.author.type },
    comments: kept.map((c) => ({
      createdAt: c.createdAt,
      author: { login: c.author.login, type: c.author.type },
      body: c.body,
    })),
  });
  const order = evaluation.comments
    .map((verdict) => verdict.index)
    .sort((a, b) => Date.parse(kept[a]!.createdAt) - Date.parse(kept[b]!.createdAt) || a - b);
  const latest = evaluation.latestHumanInput;
  let input: ReplyInput | null = null;
  let from = 0;
  let afterAgent = false;
  if (latest?.source === "comment") {
    const comment = kept[latest.index]!;
    input = {
      source: "comment",
      url: comment.url,
      author: comment.author.login,
      at: comment.createdAt,
    };
    from = order.indexOf(latest.index) + 1;
    afterAgent = order.slice(0, from - 1).some((i) => evaluation.comments[i]!.role === "agent");
  } else if (latest?.source === "body") {
    input = {
      source: "body",
      url: history.url,
      author: history.author?.login ?? "",
      at: history.createdAt,
    };
  }
  const responses: ReplyResponse[] = [];
  if (input !== null) {
    for (const i of order.slice(from)) {
      const verdict = evaluation.comments[i]!;
      if (verdict.role === "agent")
        responses.push({ at: kept[i]!.createdAt, url: kept[i]!.url, verdict: verdict.verdict! });
    }
  }
  return { input, afterAgent, responses };
}
