import { z } from "zod";
import { ValidationError } from "../validation.ts";

/**
 * The comment list every IDD rule reads: `[{createdAt, author: {login, type}, body}]`, in the
 * order GitHub returns it. GitHub's REST shape (`created_at`, `user`) and `gh issue view --json
 * comments` output (`{comments: [...]}`) are accepted too, so API output can be fed directly.
 */
const instant = z.iso.datetime({ offset: true, message: "expected an ISO-8601 timestamp" });

export const CommentAuthorSchema = z.object({
  login: z.string().min(1, "cannot be empty"),
  /** GitHub's account type: `User`, `Bot`, `Organization`, ... */
  type: z.string().nullable().optional(),
});

export const IssueCommentSchema = z.preprocess(
  (raw) => {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return raw;
    const r = raw as Record<string, unknown>;
    const out: Record<string, unknown> = { ...r };
    if (out.createdAt === undefined && r.created_at !== undefined) out.createdAt = r.created_at;
    if (out.author === undefined && r.user !== undefined) out.author = r.user;
    if (out.url === undefined && typeof r.html_url === "string") out.url = r.html_url;
    if (r.body === null) out.body = "";
    return out;
  },
  z.object({
    id: z.union([z.number(), z.string()]).optional(),
    url: z.string().optional(),
    createdAt: instant,
    author: CommentAuthorSchema,
    body: z.string(),
  }),
);

export const CommentListSchema = z.array(IssueCommentSchema);

/** A bare comment list, or an object carrying one under `comments` (as `gh issue view` prints). */
export const CommentListInputSchema = z.preprocess(
  (raw) =>
    typeof raw === "object" && raw !== null && !Array.isArray(raw) && "comments" in raw
      ? (raw as { comments: unknown }).comments
      : raw,
  CommentListSchema,
);

export type CommentAuthor = z.infer<typeof CommentAuthorSchema>;
export type IssueComment = z.infer<typeof IssueCommentSchema>;
export type IssueCommentInput = z.input<typeof IssueCommentSchema>;

/** Validates untrusted input as a comment list; throws a ValidationError naming the first bad path. */
export function parseCommentList(input: unknown): IssueComment[] {
  const result = CommentListInputSchema.safeParse(input);
  if (!result.success) throw new ValidationError("comment list", result.error);
  return result.data;
}
