import type { Config } from "../config/schema.ts";
import { classifyText, type ResponseVerdict } from "../idd/classify.ts";
import { TEST_SWEEP_LABELS } from "../idd/sweep.ts";
import {
  isTrustedReplyAuthor,
  needsPermissionCheck,
  type ReplyAuthor,
  type ReplyTrust,
} from "./reply-authors.ts";

/**
 * Human replies as work (issue-sweep Step 2, served by the queue): an issue's reply state is
 * decided from its comment history by `evaluateSweep`, over trusted people's words only, in two
 * steps so the Worker can keep the middle one instead of bodies:
 *
 *   history --summarizeReplies--> ReplySummary --decideReply--> ReplyState
 *
 * The summary holds what the decision needs (the latest trusted human input, whether an agent
 * spoke before it, and the agent comments after it with their verdicts, times and URLs); labels
 * and configuration are applied when deciding, so a label change needs no re-read.
 */

/** Bump when a rule that makes a summary changes: stored summaries are then re-decided. */
export const REPLY_RULES_VERSION = 1;

export interface ReplyComment {
  author: ReplyAuthor;
  body: string;
  createdAt: string;
  url: string;
}

/** What the decision reads of one issue. `comments` undefined: never read (not evaluated). */
export interface ReplyHistory {
  /** The issue's own URL: a body's input points there. */
  url: string;
  createdAt: string;
  title?: string;
  body: string | null;
  /** The body's author. */
  author: ReplyAuthor | null;
  /** Oldest first (sorted again by time, as the sweep reads them). */
  comments: readonly ReplyComment[] | undefined;
}

export type ReplyReason =
  | "unanswered-human-comment"
  | "unanswered-body"
  | "deferred-response"
  | "neutral-response";

/** The input a reply item answers: the comment (or the body) and who wrote it when. */
export interface Reply {
  reason: ReplyReason;
  url: string;
  author: string;
  at: string;
}

export interface ReplyInput {
  source: "comment" | "body";
  url: string;
  author: string;
  at: string;
}

export interface ReplyResponse {
  at: string;
  url: string;
  verdict: ResponseVerdict;
}

/** The compact, body-free result of reading an issue's history. */
export interface ReplySummary {
  /** The latest trusted human input, or null when there is none. */
  input: ReplyInput | null;
  /** An agent comment precedes the input: a person answered an agent (`queue.replies: answers`). */
  afterAgent: boolean;
  /** The agent comments after the input, oldest first; the last one decides. */
  responses: ReplyResponse[];
}

export type QuietReason =
  | "off"
  | "no-human-input"
  | "answered"
  | "test-sweep-zero-comment"
  | "not-an-answer";

export type ReplyState =
  | { state: "not-evaluated" }
  | { state: "answered"; why: QuietReason }
  | { state: "unanswered"; reply: Reply };

/** Claim markers say who works on an issue; they answer nobody and nobody answers them. */
const CLAIM_MARKERS = ["claimed-by", "unclaimed-by", "activation-nonce"];

/**
 * A comment's part in the sweep, decided from its body once (the Worker keeps this, not the
 * body): `human` input, an `agent` comment with its verdict, a `heartbeat`, or a `claim` marker.
 */
export type ReplyRole = "human" | "agent" | "heartbeat" | "claim";

export interface ClassifiedComment {
  author: ReplyAuthor;
  createdAt: string;
  url: string;
  role: ReplyRole;
  /** For agent comments: terminal, deferral or neutral (`classifyText`'s verdict). */
  verdict: ResponseVerdict | null;
}

/** A history with its bodies read: what `summarizeClassified` needs, without a body. */
export interface ClassifiedHistory {
  url: string;
  createdAt: string;
  author: ReplyAuthor | null;
  /** The opening (title and body) is human input by its content (before trust is applied). */
  openingIsHuman: boolean;
  comments: readonly ClassifiedComment[] | undefined;
  /**
   * `comments` are only the newest part of the thread (read backwards, older ones not read):
   * decided only when that part holds a trusted human comment with an agent comment before it,
   * which is all the summary reads; otherwise not evaluated until the thread is read whole.
   */
  partial?: boolean;
}

/** Classifies one comment's body with the sweep's classifier (`classifyText`). */
export function classifyReplyComment(comment: ReplyComment): ClassifiedComment {
  const c = classifyText(comment.body, comment.author);
  const claim = c.signals.some((signal) =>
    CLAIM_MARKERS.some(
      (name) => signal === `marker:${name}` || signal.startsWith(`marker:${name}:`),
    ),
  );
  return {
    author: comment.author,
    createdAt: comment.createdAt,
    url: comment.url,
    role: claim ? "claim" : c.role,
    verdict: claim ? null : c.verdict,
  };
}

/**
 * Whether an issue's opening is human input, as `evaluateSweep` decides it: a title or body
 * whose content is human (not marked, not a heartbeat); a title-only issue unless a bot opened it.
 */
export function openingIsHuman(
  title: string | undefined,
  body: string | null,
  author: ReplyAuthor | null,
): boolean {
  const opening = [title ?? "", body ?? ""].join("\n").trim();
  if (opening === "") return false;
  if (body !== null) return classifyText(body, author).role === "human";
  return author?.type !== "Bot";
}

export function classifyReplyHistory(history: ReplyHistory): ClassifiedHistory {
  return {
    url: history.url,
    createdAt: history.createdAt,
    author: history.author,
    openingIsHuman: openingIsHuman(history.title, history.body, history.author),
    comments: history.comments?.map(classifyReplyComment),
  };
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
export function summarizeReplies(history: ReplyHistory, trust: ReplyTrust): ReplySummary | null {
  return summarizeClassified(classifyReplyHistory(history), trust);
}

/**
 * The sweep's predicate (`evaluateSweep`, issue-sweep Step 2) over classified comments: the
 * latest human input is the last human comment by time (ties: list order), else the opening;
 * the agent comments after it are its responses. Test: it agrees with `evaluateSweep` on the
 * same history (test/unit/queue/replies.test.ts).
 */
export function summarizeClassified(
  history: ClassifiedHistory,
  trust: ReplyTrust,
): ReplySummary | null {
  if (history.comments === undefined) return null;
  const kept = history.comments.filter(
    (c) => c.role !== "claim" && (isBot(c.author) || isTrustedReplyAuthor(c.author, trust)),
  );
  const order = kept
    .map((c, index) => ({ index, at: Date.parse(c.createdAt) }))
    .sort((a, b) => a.at - b.at || a.index - b.index)
    .map((entry) => kept[entry.index]!);
  let last = -1;
  for (let i = 0; i < order.length; i++) if (order[i]!.role === "human") last = i;
  let input: ReplyInput | null = null;
  let afterAgent = false;
  if (last >= 0) {
    const c = order[last]!;
    input = { source: "comment", url: c.url, author: c.author.login, at: c.createdAt };
    afterAgent = order.slice(0, last).some((x) => x.role === "agent");
  } else if (
    history.openingIsHuman &&
    (isBot(history.author) || isTrustedReplyAuthor(history.author, trust))
  ) {
    input = {
      source: "body",
      url: history.url,
      author: history.author?.login ?? "",
      at: history.createdAt,
    };
  }
  // A partial thread decides only what it shows whole: its input, and an agent before it.
  if (history.partial === true && (last < 0 || !afterAgent)) return null;
  const responses: ReplyResponse[] = [];
  if (input !== null) {
    for (const c of order.slice(last + 1)) {
      if (c.role === "agent") responses.push({ at: c.createdAt, url: c.url, verdict: c.verdict! });
    }
  }
  return { input, afterAgent, responses };
}

/**
 * Whether the newest comments of a thread (oldest first) are enough to decide its reply state
 * without the older ones: reading backwards stops here (shared/github/reply-windows.ts).
 */
export function windowSuffices(comments: readonly ClassifiedComment[], trust: ReplyTrust): boolean {
  const history = { url: "", createdAt: "", author: null, openingIsHuman: false, comments };
  return summarizeClassified({ ...history, partial: true }, trust) !== null;
}

/**
 * Where the part of a thread the rules need begins (comments oldest first): the agent comment
 * before the latest trusted human comment, which `windowSuffices` then holds; 0 when the rules
 * need the whole thread (no such input, or no agent before it). What is before it is not kept.
 */
export function neededFrom(comments: readonly ClassifiedComment[], trust: ReplyTrust): number {
  const counts = (c: ClassifiedComment) =>
    c.role !== "claim" && (isBot(c.author) || isTrustedReplyAuthor(c.author, trust));
  const order = comments
    .map((c, index) => ({ c, index, at: Date.parse(c.createdAt) }))
    .sort((a, b) => a.at - b.at || a.index - b.index);
  let last = -1;
  for (let i = 0; i < order.length; i++) {
    if (order[i]!.c.role === "human" && counts(order[i]!.c)) last = i;
  }
  for (let i = last - 1; i >= 0; i--) {
    const { c, index } = order[i]!;
    // Only a thread in time order can be cut: a later comment listed before would be lost.
    if (c.role === "agent" && counts(c))
      return order.slice(i).every((e) => e.index >= index) ? index : 0;
  }
  return 0;
}

/**
 * The one author of this issue whose write access, unknown now, decides its reply next, or
 * null: walking back from the newest human input (comments, then the opening) to the newest
 * one already trusted, the newest whose author GitHub must be asked about
 * (`needsPermissionCheck`). Older input cannot matter while it is unanswered; once GitHub says
 * no, the next one back is asked. One login per issue per round, each answer cached for all
 * issues: the cost follows the people who spoke, never the number of comments.
 */
export function replyAuthorToCheck(
  history: ClassifiedHistory,
  trust: ReplyTrust,
  scope: ReplyAuthorScope = "any",
): string | null {
  if (scope === "none" || trust.replyAuthors !== "write" || history.comments === undefined)
    return null;
  // Oldest first, as the rules read a thread (a same-second tie keeps the listing's order).
  const order = history.comments
    .map((c, index) => ({ c, index, at: Date.parse(c.createdAt) }))
    .sort((a, b) => a.at - b.at || a.index - b.index);
  // `answers`: only input after an agent spoke can count, so nobody before the first agent
  // comment (nor the opening) is worth a request (the first one: a superset, never fewer).
  const from = scope === "answers" ? order.findIndex(({ c }) => c.role === "agent") : 0;
  const humans: Array<ReplyAuthor | null> =
    from < 0
      ? []
      : order
          .slice(from)
          .filter(({ c }) => c.role === "human")
          .reverse()
          .map(({ c }) => c.author);
  // A partial thread's opening is older than input the window left out: never what decides.
  if (history.openingIsHuman && history.partial !== true && scope === "any") {
    humans.push(history.author);
  }
  for (const author of humans) {
    if (author !== null && needsPermissionCheck(author, trust)) return author.login;
    if (isTrustedReplyAuthor(author, trust)) return null;
  }
  return null;
}

/**
 * Which input can count for an issue, so whose authors are worth asking GitHub about: `none`
 * (`queue.replies: off`), `answers` (`answers` on an issue without `labels.needsHuman`: only
 * input after an agent comment) or `any`.
 */
export type ReplyAuthorScope = "none" | "answers" | "any";

/** The scope of `replyAuthorToCheck` for an issue with these labels under `policy`. */
export function replyAuthorScope(labels: readonly string[], policy: ReplyPolicy): ReplyAuthorScope {
  if (policy.replies === "off") return "none";
  if (policy.replies === "all") return "any";
  const needsHuman = policy.needsHumanLabel.toLowerCase();
  return labels.some((l) => l.toLowerCase() === needsHuman) ? "any" : "answers";
}

/**
 * What a history read whole can never give the queue whatever the trust (the permission cache,
 * `queue.replyAuthors`), so a reader need not read it again until it changes: `silent` (no human
 * input at all: no human comment, an opening that is not human input) gives nothing under any
 * policy and labels; `no-agent` (no agent comment) gives nothing where only answers to an agent
 * count (`answers` scope: an issue without `labels.needsHuman`); null: it must be read (a thread
 * not seen whole, or a part of one, is read so the `replies` schedule can read it).
 */
export type ReplyQuiet = "silent" | "no-agent" | null;

export function replyQuiet(history: ClassifiedHistory): ReplyQuiet {
  if (history.comments === undefined || history.partial === true) return null;
  let human = history.openingIsHuman;
  for (const c of history.comments) {
    if (c.role === "agent") return null;
    if (c.role === "human") human = true;
  }
  return human ? "no-agent" : "silent";
}

/** Whether a history that is `quiet` gives nothing to an issue read with `scope` (test: a property). */
export function quietFor(quiet: ReplyQuiet, scope: ReplyAuthorScope): boolean {
  if (scope === "none") return true;
  if (quiet === "silent") return true;
  return quiet === "no-agent" && scope === "answers";
}

/**
 * Whether a reader of the stored histories (the queue view) may leave out issue `n`'s: a closed
 * (or absent) issue gives the queue no reply, and a quiet history gives nothing under the scope
 * of its issue's labels (`quietFor`).
 */
export function replyLeftOut(
  open: boolean,
  labels: readonly string[],
  quiet: ReplyQuiet,
  policy: ReplyPolicy,
): boolean {
  return !open || quietFor(quiet, replyAuthorScope(labels, policy));
}

export interface ReplyPolicy {
  replies: Config["queue"]["replies"];
  /** `labels.needsHuman`: an issue carrying it waits for a person, so any answer counts. */
  needsHumanLabel: string;
}

/** Decides a summary under the current labels and the configuration. */
export function decideReply(
  summary: ReplySummary | null,
  labels: readonly string[],
  policy: ReplyPolicy,
): ReplyState {
  if (summary === null) return { state: "not-evaluated" };
  if (policy.replies === "off") return { state: "answered", why: "off" };
  const { input, responses } = summary;
  if (input === null) return { state: "answered", why: "no-human-input" };
  // The sweep's label-wins exception: a test-sweep issue without a human comment is a QA finding.
  if (input.source === "body" && labels.some((l) => TEST_SWEEP_LABELS.includes(l)))
    return { state: "answered", why: "test-sweep-zero-comment" };
  const last = responses.at(-1);
  let reason: ReplyReason;
  if (last === undefined)
    reason = input.source === "body" ? "unanswered-body" : "unanswered-human-comment";
  else if (last.verdict === "terminal") return { state: "answered", why: "answered" };
  else reason = last.verdict === "deferral" ? "deferred-response" : "neutral-response";
  if (
    policy.replies === "answers" &&
    !summary.afterAgent &&
    !labels.some((l) => l.toLowerCase() === policy.needsHumanLabel.toLowerCase())
  )
    return { state: "answered", why: "not-an-answer" };
  return {
    state: "unanswered",
    reply: { reason, url: input.url, author: input.author, at: input.at },
  };
}

/** Reads and decides in one step (the offline scan's path). */
export function replyState(
  history: ReplyHistory,
  labels: readonly string[],
  config: Pick<Config, "queue" | "labels">,
  knownWrite?: ReplyTrust["knownWrite"],
): ReplyState {
  const summary = summarizeReplies(history, {
    replyAuthors: config.queue.replyAuthors,
    ...(knownWrite !== undefined ? { knownWrite } : {}),
  });
  return decideReply(summary, labels, {
    replies: config.queue.replies,
    needsHumanLabel: config.labels.needsHuman,
  });
}

/** Why the queue leaves an issue's reply out (the seed's exclusions), or null. */
export function replyExclusion(facts: {
  openBlockers: readonly unknown[];
  epicManaged: boolean;
  freshLock: boolean;
}): "blocked" | "epic" | "processing" | null {
  if (facts.openBlockers.length > 0) return "blocked";
  if (facts.epicManaged) return "epic";
  if (facts.freshLock) return "processing";
  return null;
}
