import { z } from "zod";
import { IssueRefSchema, IssueStateSchema, SnapshotIssueSchema } from "../graph/snapshot.ts";

const instant = z.iso.datetime({ offset: true });

/**
 * What a repository's Durable Object stores, in GitHub-independent form. Webhooks and
 * reconciliation both translate into these, so one set of merge rules serves both.
 */
export const IssueRecordSchema = SnapshotIssueSchema.pick({
  number: true,
  title: true,
  state: true,
  stateReason: true,
  createdAt: true,
  updatedAt: true,
  closedAt: true,
}).extend({
  /**
   * Absent when the source did not say (GitHub may send an issue object without `labels`):
   * the stored labels are kept. An empty list means the issue has no labels.
   */
  labels: SnapshotIssueSchema.shape.labels.optional(),
  /** GitHub's REST id: sub-issue and dependency writes address issues by it. */
  id: z.number().int().nonnegative().nullable(),
  /** Absent when the source did not read bodies (a reconcile): the stored body is kept. */
  body: z.string().nullable().optional(),
  /**
   * What the reply rules read (shared/queue/reply-state.ts), when the source says (webhooks):
   * the body's author with `author_association`, how many comments GitHub counts on the issue
   * (all of them stored: its history is complete) and the issue's page.
   */
  author: z
    .object({ login: z.string(), type: z.string(), association: z.string().nullable().optional() })
    .optional(),
  commentCount: z.number().int().nonnegative().optional(),
  url: z.string().optional(),
});
export type IssueRecord = z.infer<typeof IssueRecordSchema>;

export const GraphEventSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("issue"),
    issue: IssueRecordSchema,
    /**
     * When GitHub was read and said the issue exists (a reconcile's fetch start); absent for a
     * webhook's record. It is evidence of existence newer than a removal stamped before it, so a
     * fetched record can restore a tombstoned issue, where a webhook's (ordered by `updatedAt`
     * only) cannot: a late redelivery must not resurrect a deleted issue.
     */
    observedAt: instant.optional(),
    /**
     * Who closed it, on an `issues` `closed` webhook (its sender): a fenced close GitHub applied
     * late is told apart from a person's close by it (shared/claims/write-records.ts).
     */
    closedBy: z.string().optional(),
  }),
  /** Deleted or transferred away: gone from this repository as of `at`. */
  z.object({ type: z.literal("issue-removed"), number: z.number().int().positive(), at: instant }),
  z.object({
    type: z.literal("parent"),
    child: z.number().int().positive(),
    /** The parent, or null when the child was detached from `previous`. */
    parent: IssueRefSchema.nullable(),
    previous: IssueRefSchema.optional(),
    at: instant,
  }),
  /** The complete blocker set of an issue as fetched at `at`: others stored before `at` go. */
  z.object({
    type: z.literal("blockers"),
    issue: z.number().int().positive(),
    blockers: z.array(IssueRefSchema),
    at: instant,
  }),
  z.object({
    type: z.literal("blocked-by"),
    issue: z.number().int().positive(),
    blocker: IssueRefSchema,
    present: z.boolean(),
    at: instant,
  }),
  /** The state of an issue in another repository, learned from a dependency payload. */
  z.object({
    type: z.literal("external"),
    ref: z.string(),
    state: IssueStateSchema,
    closedAt: instant.nullable(),
    at: instant,
  }),
  z.object({
    type: z.literal("label-event"),
    number: z.number().int().positive(),
    label: z.string(),
    action: z.enum(["labeled", "unlabeled"]),
    actor: z.string().nullable(),
    at: instant,
  }),
  z.object({ type: z.literal("label-renamed"), from: z.string(), to: z.string() }),
  z.object({ type: z.literal("label-deleted"), name: z.string() }),
  z.object({
    type: z.literal("comment"),
    id: z.number().int().nonnegative(),
    number: z.number().int().positive(),
    author: z.object({ login: z.string(), type: z.string() }),
    /** GitHub's `author_association` (absent when the source did not say). */
    association: z.string().nullable().optional(),
    body: z.string(),
    createdAt: instant,
    updatedAt: instant,
    /** The comment's page (`...#issuecomment-<id>`), when the source says. */
    url: z.string().optional(),
  }),
  z.object({ type: z.literal("comment-removed"), id: z.number().int().nonnegative(), at: instant }),
  z.object({ type: z.literal("config-changed"), at: instant }),
]);
export type GraphEvent = z.infer<typeof GraphEventSchema>;
