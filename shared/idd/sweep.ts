import { z } from "zod";
import { ValidationError } from "../validation.ts";
import { classifyText, type TextClassification } from "./classify.ts";
import { CommentAuthorSchema, CommentListSchema, type IssueComment } from "./comments.ts";
import { positiveInt } from "./fields.ts";
import { visibleProse } from "./markdown-code.ts";
import {
  confirmsSuggestionProse,
  containsSuggestionList,
  suggestionListItems,
} from "./suggestion-list.ts";

/**
 * The sweep-candidate predicate (issue-sweep Step 2): an issue needs the sweep when its latest
 * human input (its last human comment, or the issue body when no human comment exists) has no
 * agent answer after it, or when the last agent comment after it is not terminal. As the seed
 * says, skip only when the last agent comment is a terminal state with a real unlock condition
 * (PR, closed, needs-human/needs-design/security/not-verifiable-here): a deferral or a neutral
 * reply leaves the input unanswered; a `> 📡` heartbeat answers nothing. A
 * zero-comment `test-sweep-failure` / `test-sweep-report` issue is never a candidate (the label
 * wins over its `> 🤖`-headed body) until a human comments.
 */

export const TEST_SWEEP_LABELS: readonly string[] = ["test-sweep-failure", "test-sweep-report"];

export const SweepIssueSchema = z.preprocess(
  (raw) => {
    if (Array.isArray(raw)) return { comments: raw };
    if (typeof raw !== "object" || raw === null) return raw;
    const r = raw as Record<string, unknown>;
    const out: Record<string, unknown> = { ...r };
    if (out.author === undefined && r.user !== undefined) out.author = r.user;
    if (Array.isArray(r.labels)) {
      out.labels = r.labels.map((l) =>
        typeof l === "object" && l !== null && "name" in l ? (l as { name: unknown }).name : l,
      );
    }
    return out;
  },
  z.object({
    number: positiveInt.optional(),
    title: z.string().optional(),
    body: z.string().nullable().default(null),
    author: CommentAuthorSchema.nullable().default(null),
    labels: z.array(z.string()).default([]),
    comments: CommentListSchema.default([]),
    /** Issues named in a suggestion list whose hold label a human has since removed. */
    holdRemoved: z.array(positiveInt).default([]),
  }),
);

export type SweepIssueInput = z.input<typeof SweepIssueSchema>;
export type SweepIssue = z.output<typeof SweepIssueSchema>;

export type SweepReason =
  | "unanswered-human-comment"
  | "unanswered-body"
  | "deferred-response"
  | "neutral-response"
  | "answered"
  | "no-human-input"
  | "test-sweep-zero-comment";

export interface CommentVerdict extends TextClassification {
  index: number;
  createdAt: string;
  author: string;
}

export interface SuggestionListReport {
  source: "body" | "comment";
  /** The comment index, or null for the body. */
  index: number | null;
  items: number[];
  /** Items an independent later human comment confirmed. */
  confirmed: number[];
  /** Items whose hold a human removed (from the input's `holdRemoved`). */
  holdRemoved: number[];
  /** Items it is safe to act on: confirmed or hold removed. Everything else is evidence only. */
  actionable: number[];
}

export interface SweepEvaluation {
  candidate: boolean;
  reason: SweepReason;
  latestHumanInput: { source: "comment"; index: number } | { source: "body"; index: null } | null;
  /** The last agent comment after the latest human input (the one that decides), if any. */
  response: { index: number; verdict: NonNullable<TextClassification["verdict"]> } | null;
  body: TextClassification | null;
  comments: CommentVerdict[];
  suggestionLists: SuggestionListReport[];
}

function chronological(comments: readonly IssueComment[]): number[] {
  return comments
    .map((comment, index) => ({ index, at: Date.parse(comment.createdAt) }))
    .sort((a, b) => a.at - b.at || a.index - b.index)
    .map((entry) => entry.index);
}

/** Evaluates one issue for the sweep. Throws a ValidationError naming the first bad field. */
export function evaluateSweep(input: unknown): SweepEvaluation {
  const parsed = SweepIssueSchema.safeParse(input);
  if (!parsed.success) throw new ValidationError("issue", parsed.error);
  const issue = parsed.data;
  const comments: CommentVerdict[] = issue.comments.map((comment, index) => ({
    index,
    createdAt: comment.createdAt,
    author: comment.author.login,
    ...classifyText(comment.body, comment.author),
  }));
  const opening = [issue.title ?? "", issue.body ?? ""].join("\n").trim();
  const body = issue.body === null ? null : classifyText(issue.body, issue.author);
  // A title-only issue still opens with human input, unless a bot opened it.
  const openingRole = body?.role ?? (issue.author?.type === "Bot" ? "agent" : "human");
  const bodyIsHumanInput = opening !== "" && openingRole === "human";
  const order = chronological(issue.comments);

  const humans = order.filter((i) => comments[i]!.role === "human");
  const lastHuman = humans.at(-1);
  const after = lastHuman === undefined ? order : order.slice(order.indexOf(lastHuman) + 1);
  const lastAgent = after.filter((i) => comments[i]!.role === "agent").at(-1);
  const response =
    lastAgent === undefined ? null : { index: lastAgent, verdict: comments[lastAgent]!.verdict! };

  let latestHumanInput: SweepEvaluation["latestHumanInput"] = null;
  let reason: SweepReason;
  const testSweep = issue.labels.some((l) => TEST_SWEEP_LABELS.includes(l));
  if (lastHuman === undefined && testSweep) reason = "test-sweep-zero-comment";
  else if (lastHuman === undefined && !bodyIsHumanInput) reason = "no-human-input";
  else {
    latestHumanInput =
      lastHuman === undefined
        ? { source: "body", index: null }
        : { source: "comment", index: lastHuman };
    if (response === null) {
      reason = lastHuman === undefined ? "unanswered-body" : "unanswered-human-comment";
    } else {
      reason =
        response.verdict === "terminal"
          ? "answered"
          : response.verdict === "deferral"
            ? "deferred-response"
            : "neutral-response";
    }
  }

  return {
    candidate:
      reason === "unanswered-human-comment" ||
      reason === "unanswered-body" ||
      reason === "deferred-response" ||
      reason === "neutral-response",
    reason,
    latestHumanInput,
    response: latestHumanInput === null ? null : response,
    body,
    comments,
    suggestionLists: suggestionLists(issue, comments, order),
  };
}

function suggestionLists(
  issue: SweepIssue,
  comments: CommentVerdict[],
  order: number[],
): SuggestionListReport[] {
  const sources: Array<{ source: "body" | "comment"; index: number | null; text: string }> = [];
  if (issue.body !== null && containsSuggestionList(issue.body)) {
    sources.push({ source: "body", index: null, text: issue.body });
  }
  for (const i of order) {
    if (comments[i]!.suggestionList)
      sources.push({ source: "comment", index: i, text: issue.comments[i]!.body });
  }
  return sources.map(({ source, index, text }) => {
    const items = suggestionListItems(text);
    const later = index === null ? order : order.slice(order.indexOf(index) + 1);
    const confirmers = later
      .filter((i) => comments[i]!.role === "human")
      .map((i) => visibleProse(issue.comments[i]!.body));
    const confirmed = items.filter((item) =>
      confirmers.some((prose) => confirmsSuggestionProse(prose, item)),
    );
    const holdRemoved = items.filter((item) => issue.holdRemoved.includes(item));
    const actionable = items.filter(
      (item) => confirmed.includes(item) || holdRemoved.includes(item),
    );
    return { source, index, items, confirmed, holdRemoved, actionable };
  });
}
