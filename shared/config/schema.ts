import { z } from "zod";
import { BREAKER_DEFAULTS, CONFIG_DEFAULTS as D } from "./defaults.ts";

const labelName = z
  .string()
  .trim()
  .min(1, "a label name cannot be empty")
  .max(50, "GitHub label names are at most 50 characters");

/** A priority rank: lower is more urgent. */
const rank = z.number().int().min(0).max(1_000);

/**
 * `.github/switchyard.yml`. Every key is optional; unknown keys are rejected so a typo
 * surfaces as an error instead of silently using a default.
 */
export const ConfigSchema = z.strictObject({
  labels: z
    .strictObject({
      ready: labelName.default(D.labels.ready),
      hold: labelName.default(D.labels.hold),
      processing: labelName.default(D.labels.processing),
      needsHuman: labelName.default(D.labels.needsHuman),
      epicManaged: labelName.default(D.labels.epicManaged),
      /** Put on an issue whose claims kept failing (the queue's dead letter); reserved like hold. */
      stuck: labelName.default(D.labels.stuck),
    })
    .prefault({}),
  queue: z
    .strictObject({
      mode: z.enum(["events", "all"]).default(D.queue.mode),
      approvalLabel: labelName.nullable().default(D.queue.approvalLabel),
      /**
       * The queue's default order (spec 6.4's table, shared/queue/order.ts): by number (rotated
       * per machine), by impact, or by priority rank.
       */
      order: z.enum(["number", "impact", "priority"]).default(D.queue.order),
      /**
       * Which unanswered human input becomes `reply` work (issue-sweep Step 2): none, only input
       * that answers an agent (follows an agent comment, or on an issue labelled
       * `labels.needsHuman`), or every unanswered input, fresh body-only issues included.
       */
      replies: z.enum(["off", "answers", "all"]).default(D.queue.replies),
      /**
       * Whose input counts as a reply: `write` (people with write access: author association
       * OWNER, MEMBER or COLLABORATOR, or a permission check) or exactly these logins
       * (case-insensitive). A stranger's comment on a public repository must never steer an agent
       * holding write access.
       */
      replyAuthors: z
        .union(
          [
            z.literal("write"),
            z
              .array(
                z
                  .string()
                  .trim()
                  .regex(
                    /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/,
                    "expected a GitHub login",
                  ),
              )
              .max(1_000),
          ],
          { error: 'expected "write" or a list of GitHub logins' },
        )
        .default(D.queue.replyAuthors),
    })
    .prefault({}),
  kicks: z
    .strictObject({
      windowHours: z.number().positive().max(8760).default(D.kicks.windowHours),
    })
    .prefault({}),
  locks: z
    .strictObject({
      processingTtlMinutes: z.number().positive().max(10080).default(D.locks.processingTtlMinutes),
    })
    .prefault({}),
  claims: z
    .strictObject({
      /** Default claim lifetime; a claim may ask for 60 s to 24 h. */
      ttlMinutes: z
        .number()
        .min(1, "claims.ttlMinutes must be at least 1 (60 seconds)")
        .max(1440, "claims.ttlMinutes must be at most 1440 (24 hours)")
        .default(D.claims.ttlMinutes),
      branchPattern: z.string().min(1).default(D.claims.branchPattern),
      /** Claims of one issue that may end without `done` before it is stuck (dead-lettered). */
      maxAttempts: z.number().int().min(1).max(100).default(D.claims.maxAttempts),
      /** Live claims one agent may hold in this repository (null: no limit). */
      maxPerAgent: z.number().int().min(1).nullable().default(D.claims.maxPerAgent),
      /** Live claims in this repository (null: no limit). */
      maxActive: z.number().int().min(1).nullable().default(D.claims.maxActive),
      /**
       * Live switchyard claims of issues carrying a label (label → limit; compared as GitHub
       * compares names, case-insensitively). IDD marker claims do not count.
       */
      maxActiveByLabel: z
        .record(labelName, z.number().int().min(1).max(10_000))
        .default(() => ({ ...D.claims.maxActiveByLabel })),
    })
    .prefault({}),
  idd: z
    .strictObject({
      staleHours: z.number().positive().default(D.idd.staleHours),
      /** Authors whose IDD markers count. Absent: no filter; empty list: nobody is trusted. */
      trustedMarkerActors: z.array(z.string().min(1)).optional(),
      mirrorClaims: z.boolean().default(D.idd.mirrorClaims),
    })
    .prefault({}),
  priority: z
    .strictObject({
      /** Label → rank (lower is more urgent); an issue with several takes the lowest. */
      labels: z.record(labelName, rank).default(() => ({ ...D.priority.labels })),
      /**
       * A single-select field of an organization project (Projects v2) whose options rank
       * issues; read by its own GraphQL query and kept current by `projects_v2_item` webhooks.
       */
      project: z
        .strictObject({
          number: z.number().int().positive(),
          field: z.string().trim().min(1).max(100),
          /** Option name → rank (names compared case-insensitively). */
          options: z.record(z.string().trim().min(1).max(100), rank),
        })
        .nullable()
        .default(D.priority.project),
    })
    .prefault({}),
  /**
   * The circuit breaker: while the default branch's head commit is red, ordinary work is not
   * handed out (repair issues and replies still are). Off unless present (`breaker: {}`).
   */
  breaker: z
    .strictObject({
      /** Required checks (check runs, status contexts, workflows); absent: every one on the head. */
      checks: z
        .array(z.string().trim().min(1).max(200))
        .min(1)
        .max(100)
        .nullable()
        .default(BREAKER_DEFAULTS.checks),
      /** Issues carrying this label are still handed out while the breaker is red. */
      repairLabel: labelName.default(BREAKER_DEFAULTS.repairLabel),
      /** How long a new head's pending checks keep the previous head's verdict. */
      pendingMinutes: z.number().min(0).max(10_080).default(BREAKER_DEFAULTS.pendingMinutes),
    })
    .nullable()
    .default(D.breaker),
  status: z
    .strictObject({
      /** Whether the status page of a public repository is readable without logging in. */
      public: z.boolean().default(D.status.public),
    })
    .prefault({}),
});

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
export type LabelNames = Config["labels"];

export { DEFAULT_CONFIG } from "./defaults.ts";
