// The fleet API's bodies (docs/api.md), one zod schema each: the Worker's routes validate
// requests with the request schemas, the client (client.ts) validates what it sends and what it
// receives with the same ones. Request bodies are strict (an unknown key is a 400 naming it,
// so a typo such as `ttl` for `ttlSeconds` is never silently ignored); response schemas accept
// extra keys, so an older client keeps working against a newer Worker.
import { z } from "zod";
import { SUB_ISSUE_BODY_MAX } from "../claims/sub-issue-marker.ts";
import { WRITE_MARKER_ROOM } from "../claims/write-records.ts";
import { QUEUE_ORDERS } from "../queue/order.ts";
import { QUEUE_KINDS } from "../queue/queue.ts";

// ---------------------------------------------------------------------------------------------
// Building blocks

/** One IDD marker token, so a claim can be mirrored as a `claimed-by` marker. */
export const AgentIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, "must be 1 to 64 of A-Z a-z 0-9 . _ -")
  .describe("The agent's id: one IDD marker token, 1 to 64 of `A-Za-z0-9._-`.");

/** A claim's lifetime in seconds: 60 s to 24 h. */
export const TtlSecondsSchema = z
  .number()
  .int("must be a whole number of seconds")
  .min(60, "must be at least 60 seconds")
  .max(86_400, "must be at most 86400 seconds (24 hours)")
  .describe("Claim lifetime in seconds, 60 to 86400 (default `claims.ttlMinutes`).");

/** The machine a request comes from; rotates the queue's order (as `switchyard scan --machine`). */
export const MachineSchema = z
  .string()
  .min(1, "must not be empty")
  .max(200, "must be at most 200 characters")
  .describe("The caller's machine name; rotates the order within each queue section.");

/** A capability an issue may require (`<!-- requires: cap1,cap2 -->`). */
export const CapabilitySchema = z
  .string()
  .max(64, "must be at most 64 characters")
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "must be letters, digits, `.`, `_` or `-`");

export const CapabilitiesSchema = z
  .array(CapabilitySchema)
  .max(50, "at most 50 capabilities")
  .describe("Capabilities the agent has; an issue requiring others is not handed out.");

/** The claim id the Worker handed out with a grant. */
export const ClaimIdSchema = z
  .string()
  .min(1, "must not be empty")
  .max(128, "must be at most 128 characters")
  .regex(/^\S+$/, "must not contain whitespace");

/** The fencing token: the repository's claim counter, strictly increasing. */
export const FenceSchema = z
  .number()
  .int("must be an integer")
  .positive("must be positive")
  .max(Number.MAX_SAFE_INTEGER);

export const OUTCOMES = ["done", "abandoned", "failed"] as const;
export const OutcomeSchema = z.enum(OUTCOMES, { error: "must be done, abandoned or failed" });
export type Outcome = z.infer<typeof OutcomeSchema>;

export { QUEUE_KINDS };
export const QueueKindSchema = z.enum(QUEUE_KINDS, {
  error: "must be kick, rollup, ready or reply",
});

/** What a claim was granted for: the issue's work, or answering a person's input. */
export const ClaimKindSchema = z.enum(["work", "reply"], { error: "must be work or reply" });

/** The unanswered trusted human input an item carries (issue-sweep Step 2). */
export const ReplySchema = z.object({
  reason: z.enum([
    "unanswered-human-comment",
    "unanswered-body",
    "deferred-response",
    "neutral-response",
  ]),
  /** The comment's page, or the issue's for its body. */
  url: z.string(),
  /** Who wrote it (a person with write access, or one `queue.replyAuthors` lists). */
  author: z.string(),
  at: z.string(),
});

export { QUEUE_ORDERS };
export const QueueOrderSchema = z.enum(QUEUE_ORDERS, {
  error: "must be number, impact or priority",
});
export type QueueOrder = z.infer<typeof QueueOrderSchema>;

export const CLOSE_REASONS = ["completed", "not_planned"] as const;

/** A GitHub label name (GitHub allows at most 50 characters). */
export const LabelNameSchema = z
  .string()
  .trim()
  .min(1, "a label name cannot be empty")
  .max(50, "GitHub label names are at most 50 characters");

/** An issue number in a path: `/issues/{n}/...`. */
export const IssueNumberSchema = z.coerce
  .number()
  .int("must be an integer")
  .positive("must be a positive issue number")
  .max(2_147_483_647);

/** `{owner}/{repo}` path parameters, as GitHub spells repository names. */
export const RepoParamsSchema = z.object({
  owner: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/, "must be a GitHub owner name"),
  repo: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, "must be a GitHub repository name"),
});
export const IssueParamsSchema = RepoParamsSchema.extend({ n: IssueNumberSchema });

// ---------------------------------------------------------------------------------------------
// Requests

/** `GET .../queue?machine=&capabilities=&limit=&order=` (query strings, as they arrive). */
/** A queue listing's page size (repository and org queues alike). */
export const QueueLimitSchema = z.coerce
  .number()
  .int("must be an integer")
  .min(1, "must be at least 1")
  .max(100, "must be at most 100")
  .default(20);

export const QueueQuerySchema = z.object({
  machine: MachineSchema.optional(),
  capabilities: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}(,[A-Za-z0-9][A-Za-z0-9._-]{0,63})*$/,
      "must be comma-separated capabilities (letters, digits, `.`, `_`, `-`)",
    )
    .optional()
    .describe("Comma-separated capabilities the caller has (absent: none)."),
  limit: QueueLimitSchema,
  order: QueueOrderSchema.optional().describe(
    "`number` (default, or the config's `queue.order`), `impact` or `priority` (spec 6.4's order table).",
  ),
  kinds: z
    .string()
    .regex(
      /^(kick|rollup|ready|reply)(,(kick|rollup|ready|reply))*$/,
      "must be comma-separated kinds: kick, rollup, ready, reply",
    )
    .optional()
    .describe(
      "Comma-separated item kinds (absent: all); `reply` also matches a work item carrying a reply.",
    ),
});
export type QueueQuery = z.input<typeof QueueQuerySchema>;

/** Splits the queue query's `kinds` (already validated) into a list; absent: undefined (all). */
export function parseKindList(
  value: string | undefined,
): Array<(typeof QUEUE_KINDS)[number]> | undefined {
  return value === undefined
    ? undefined
    : (value.split(",") as Array<(typeof QUEUE_KINDS)[number]>);
}

/** Splits the queue query's `capabilities` (already validated) into a list. */
export function parseCapabilityList(value: string | undefined): string[] {
  return value === undefined || value === "" ? [] : value.split(",");
}

/** `POST .../issues/{n}/claim` */
export const ClaimRequestSchema = z.strictObject({
  agentId: AgentIdSchema,
  ttlSeconds: TtlSecondsSchema.optional(),
  machine: MachineSchema.optional(),
  kind: ClaimKindSchema.optional().describe(
    "`work` (default when the issue has work) or `reply` (default when it only has unanswered input).",
  ),
});
export type ClaimRequest = z.infer<typeof ClaimRequestSchema>;

/** `POST .../claims` (claim the queue's first issue). */
export const ClaimNextRequestSchema = z.strictObject({
  agentId: AgentIdSchema,
  machine: MachineSchema.optional(),
  capabilities: CapabilitiesSchema.optional(),
  ttlSeconds: TtlSecondsSchema.optional(),
  kinds: z
    .array(QueueKindSchema)
    .min(1, "name at least one kind")
    .max(4)
    .optional()
    .describe("The kinds it may take (default kick, rollup, ready: replies only when asked)."),
});
export type ClaimNextRequest = z.infer<typeof ClaimNextRequestSchema>;

/** The two fields every fenced request carries. */
export const FencedSchema = z.strictObject({ claimId: ClaimIdSchema, fence: FenceSchema });
export type Fenced = z.infer<typeof FencedSchema>;

/** `POST .../issues/{n}/claim/heartbeat` */
export const HeartbeatRequestSchema = FencedSchema;
export type HeartbeatRequest = z.infer<typeof HeartbeatRequestSchema>;

/** `POST .../issues/{n}/claim/release` */
export const ReleaseRequestSchema = FencedSchema.extend({
  outcome: OutcomeSchema,
  note: z.string().max(2000, "must be at most 2000 characters").optional(),
});
export type ReleaseRequest = z.infer<typeof ReleaseRequestSchema>;

const COMMENT_MAX = 65_536 - WRITE_MARKER_ROOM;

/** `POST .../issues/{n}/comments` */
export const CommentRequestSchema = FencedSchema.extend({
  body: z
    .string()
    .min(1, "must not be empty")
    // GitHub's limit is 65,536; the rest is room for the hidden marker of the write's claim.
    .max(
      COMMENT_MAX,
      `must be at most ${COMMENT_MAX} characters (GitHub's limit less the write's marker)`,
    ),
});
export type CommentRequest = z.infer<typeof CommentRequestSchema>;

const labelList = z.array(LabelNameSchema).max(20, "at most 20 labels");

/** `POST .../issues/{n}/labels`: at least one label to add or remove. */
export const LabelsRequestSchema = FencedSchema.extend({
  add: labelList.optional(),
  remove: labelList.optional(),
}).refine((b) => (b.add?.length ?? 0) + (b.remove?.length ?? 0) > 0, {
  message: "give at least one label in add or remove",
  path: ["add"],
});
export type LabelsRequest = z.infer<typeof LabelsRequestSchema>;

/** `POST .../issues/{n}/close` */
export const CloseRequestSchema = FencedSchema.extend({
  reason: z.enum(CLOSE_REASONS, { error: "must be completed or not_planned" }),
});
export type CloseRequest = z.infer<typeof CloseRequestSchema>;

/** `POST .../issues/{n}/sub-issues`: opens an issue and links it under `n`. */
export const SubIssueRequestSchema = FencedSchema.extend({
  title: z.string().trim().min(1, "must not be empty").max(256, "must be at most 256 characters"),
  body: z
    .string()
    .max(
      SUB_ISSUE_BODY_MAX,
      `must be at most ${SUB_ISSUE_BODY_MAX} characters (GitHub's limit, less the idempotency marker)`,
    )
    .optional(),
  idempotencyKey: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,128}$/, "must be 1 to 128 of A-Z a-z 0-9 . _ -")
    .optional()
    .describe("A retry with the same key returns the issue created before."),
});
export type SubIssueRequest = z.infer<typeof SubIssueRequestSchema>;

/**
 * Fleet keys (`POST/GET .../keys`, `DELETE .../keys/{id}`): the key routes' own schemas, from
 * shared/auth, so the client checks exactly what the Worker checks.
 */
export {
  type CreatedKey,
  CreatedKeySchema,
  type CreateKeyRequest,
  CreateKeyRequestSchema,
  KeyIdSchema,
  type KeyList,
  KeyListSchema,
  type KeySummary,
} from "../auth/schemas.ts";

// ---------------------------------------------------------------------------------------------
// Responses

export const QueueItemSchema = z.object({
  number: z.number().int(),
  title: z.string(),
  url: z.string(),
  /** `kick`, `rollup`, `ready` or `reply` (absent from a Worker before replies). */
  kind: QueueKindSchema.optional(),
  reason: z.string(),
  /** The issue's unanswered trusted input, when it has some. */
  reply: ReplySchema.optional(),
  labels: z.array(z.string()),
  requires: z.array(z.string()),
  impact: z.number(),
  attempts: z.number().int(),
  /** Priority rank (`priority.labels`, the project field; lower first); null: unranked. */
  priority: z.number().int().nullable().optional(),
  /** While the breaker is red: true when this item is not handed out (it is not repair work). */
  paused: z.boolean().optional(),
});
export type QueueItem = z.infer<typeof QueueItemSchema>;

/** The circuit breaker's pause: the default branch's head is red (spec 6.4). */
export const PausedSchema = z.object({
  /** When the breaker turned red. */
  since: z.string(),
  /** The head commit whose checks are red. */
  sha: z.string(),
  failing: z.array(z.object({ name: z.string(), url: z.string().nullable() })),
});
export type Paused = z.infer<typeof PausedSchema>;

export const QueueResponseSchema = z.object({
  repo: z.string(),
  order: QueueOrderSchema,
  items: z.array(QueueItemSchema),
  /** Every claimable item before `limit`. */
  total: z.number().int(),
  /** Present while the breaker is red: only repair issues are handed out. */
  paused: PausedSchema.optional(),
  /**
   * Present until the repository's first full reconcile is done: the queue is made from what
   * webhooks brought so far, and may miss issues and edges.
   */
  partial: z.literal(true).optional(),
});
export type QueueResponse = z.infer<typeof QueueResponseSchema>;

/** The claimed issue; claim-next adds the queue item's fields. */
export const ClaimedIssueSchema = z.object({
  number: z.number().int(),
  title: z.string(),
  url: z.string(),
  kind: QueueKindSchema.optional(),
  reason: z.string().optional(),
  reply: ReplySchema.optional(),
  labels: z.array(z.string()).optional(),
  requires: z.array(z.string()).optional(),
  impact: z.number().optional(),
  attempts: z.number().int().optional(),
  priority: z.number().int().nullable().optional(),
});

/** `201` of both claim routes. */
export const ClaimGrantSchema = z.object({
  claimId: z.string(),
  fence: z.number().int(),
  expiresAt: z.string(),
  branch: z.string(),
  /** What the claim is for: `work` or `reply` (absent from a Worker before replies). */
  kind: ClaimKindSchema.optional(),
  issue: ClaimedIssueSchema,
});
export type ClaimGrant = z.infer<typeof ClaimGrantSchema>;

export const HeartbeatResponseSchema = z.object({
  claimId: z.string(),
  fence: z.number().int(),
  expiresAt: z.string(),
});
export type HeartbeatResponse = z.infer<typeof HeartbeatResponseSchema>;

export const ReleaseResponseSchema = z.object({
  claimId: z.string(),
  fence: z.number().int(),
  outcome: OutcomeSchema,
  releasedAt: z.string(),
});
export type ReleaseResponse = z.infer<typeof ReleaseResponseSchema>;

export const LiveClaimSchema = z.object({
  claimId: z.string(),
  number: z.number().int(),
  agentId: z.string(),
  machine: z.string().nullable(),
  fence: z.number().int(),
  branch: z.string(),
  grantedAt: z.string(),
  expiresAt: z.string(),
});
export type LiveClaim = z.infer<typeof LiveClaimSchema>;

export const ClaimsResponseSchema = z.object({ claims: z.array(LiveClaimSchema) });
export type ClaimsResponse = z.infer<typeof ClaimsResponseSchema>;

export const CommentResponseSchema = z.object({ id: z.number().int(), url: z.string() });
export type CommentResponse = z.infer<typeof CommentResponseSchema>;

export const LabelsResponseSchema = z.object({ labels: z.array(z.string()) });
export type LabelsResponse = z.infer<typeof LabelsResponseSchema>;

export const CloseResponseSchema = z.object({ number: z.number().int(), state: z.string() });
export type CloseResponse = z.infer<typeof CloseResponseSchema>;

export const SubIssueResponseSchema = z.object({
  number: z.number().int(),
  url: z.string(),
  /** False when an earlier request with the same `idempotencyKey` created it. */
  created: z.boolean(),
});
export type SubIssueResponse = z.infer<typeof SubIssueResponseSchema>;

/** `GET .../graph`: the scan output plus watermarks (docs/graph.md); not re-checked here. */
export const GraphResponseSchema = z.looseObject({});
export type GraphResponse = z.infer<typeof GraphResponseSchema>;

/** The long lists of the graph that come in pages (`?list=`). */
export const GraphListNameSchema = z.enum([
  "blocked",
  "ready",
  "kicks",
  "rollupCandidates",
  "replies",
]);
export type GraphListName = z.infer<typeof GraphListNameSchema>;

/** `GET .../graph?list=`: one page of one list; `next` is the cursor of the next page. */
export const GraphPageSchema = z.looseObject({
  list: GraphListNameSchema,
  items: z.array(z.unknown()),
  next: z.string().nullable(),
  total: z.number().int(),
});
export type GraphPage = z.infer<typeof GraphPageSchema>;

// ---------------------------------------------------------------------------------------------
// Errors

export const HolderSchema = z.object({
  agentId: z.string(),
  source: z.enum(["switchyard", "idd"]),
  expiresAt: z.string().nullable(),
});
export type Holder = z.infer<typeof HolderSchema>;

export const CLAIM_CONFLICT_REASONS = [
  "held",
  "closed",
  "hold",
  "epic",
  "blocked",
  "stuck",
  "agent-limit",
  "repo-limit",
  "label-limit",
  "paused",
  "write-in-flight",
] as const;

/** Every error's body: `{error, message}`, plus `reason` and `holder` on claim conflicts. */
export const ErrorBodySchema = z.looseObject({
  error: z.string(),
  message: z.string(),
  reason: z.string().optional(),
  holder: HolderSchema.optional(),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;
