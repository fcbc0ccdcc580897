import { z } from "zod";
import { ValidationError } from "../validation.ts";
import { CROSS_REPO_REF_PATTERN, canonicalRef, refKey } from "./refs.ts";
import { fastParseSnapshot } from "./snapshot-fast-check.ts";

const instant = z.iso.datetime({ offset: true, message: "expected an ISO-8601 timestamp" });
const issueNumber = z
  .number()
  .int()
  .positive()
  .max(2 ** 31 - 1);
const repoName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}$/, "expected owner/name");

export const IssueRefSchema = z.union([
  issueNumber,
  z.string().regex(CROSS_REPO_REF_PATTERN, 'expected an issue number or "owner/repo#n"'),
]);

export const IssueStateSchema = z.enum(["open", "closed"]);
export const StateReasonSchema = z
  .enum(["completed", "not_planned", "reopened", "duplicate"])
  .nullable();

export const LabelEventSchema = z.object({
  label: z.string().min(1),
  action: z.enum(["labeled", "unlabeled"]),
  actor: z.string().nullable().optional(),
  createdAt: instant,
});

/** An author as the reply rules read it (spec 3.1): without `association`, untrusted unless listed. */
export const SnapshotAuthorSchema = z.object({
  login: z.string().min(1, "cannot be empty"),
  type: z.string().min(1, "cannot be empty"),
  association: z.string().min(1, "cannot be empty").optional(),
});

export const SnapshotCommentSchema = z.object({
  author: SnapshotAuthorSchema,
  body: z.string(),
  createdAt: instant,
  url: z.string().min(1, "cannot be empty"),
});

export const SnapshotIssueSchema = z.object({
  number: issueNumber,
  title: z.string(),
  state: IssueStateSchema,
  stateReason: StateReasonSchema,
  createdAt: instant,
  updatedAt: instant,
  closedAt: instant.nullable(),
  labels: z.array(z.string().min(1)),
  parent: IssueRefSchema.nullable().optional(),
  blockedBy: z.array(IssueRefSchema).optional(),
  body: z.string().nullable().optional(),
  labelEvents: z.array(LabelEventSchema).optional(),
  /** The body's author. */
  author: SnapshotAuthorSchema.optional(),
  /** The issue's comments, oldest first; from them the scan reports `replies`. */
  comments: z.array(SnapshotCommentSchema).optional(),
});

export const ExternalIssueSchema = z.object({
  ref: z.string().regex(CROSS_REPO_REF_PATTERN, 'expected "owner/repo#n"'),
  state: IssueStateSchema,
  closedAt: instant.nullable().optional(),
});

export const SnapshotSchema = z
  .object({
    repo: repoName,
    now: instant.optional(),
    issues: z.array(SnapshotIssueSchema),
    external: z.array(ExternalIssueSchema).optional(),
  })
  .superRefine((snapshot, ctx) => {
    // Duplicates would make the result depend on input order; reject them where they occur.
    const seen = new Set<number>();
    snapshot.issues.forEach((issue, i) => {
      if (seen.has(issue.number)) {
        ctx.addIssue({
          code: "custom",
          path: ["issues", i, "number"],
          message: `duplicate issue number ${issue.number}`,
        });
      }
      seen.add(issue.number);
    });
    const refs = new Set<string>();
    snapshot.external?.forEach((entry, i) => {
      const key = refKey(canonicalRef(entry.ref, snapshot.repo));
      if (refs.has(key)) {
        ctx.addIssue({
          code: "custom",
          path: ["external", i, "ref"],
          message: `duplicate external reference ${entry.ref}`,
        });
      }
      refs.add(key);
    });
  });

export type Snapshot = z.infer<typeof SnapshotSchema>;
export type SnapshotIssue = z.infer<typeof SnapshotIssueSchema>;
export type ExternalIssue = z.infer<typeof ExternalIssueSchema>;
export type LabelEvent = z.infer<typeof LabelEventSchema>;
export type SnapshotAuthor = z.infer<typeof SnapshotAuthorSchema>;
export type SnapshotComment = z.infer<typeof SnapshotCommentSchema>;
export type SnapshotInput = z.input<typeof SnapshotSchema>;

/** Validates untrusted input as a snapshot; throws a ValidationError naming the first bad path. */
export function parseSnapshot(input: unknown): Snapshot {
  // A hand-written check gives zod's answer for the common valid input several times faster;
  // zod decides everything else and words every error (see snapshot-fast-check.ts).
  const fast = fastParseSnapshot(input);
  if (fast !== undefined) return fast;
  const result = SnapshotSchema.safeParse(input);
  if (!result.success) throw new ValidationError("snapshot", result.error);
  return result.data;
}
