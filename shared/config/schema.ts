import { z } from "zod";

const labelName = z
  .string()
  .trim()
  .min(1, "a label name cannot be empty")
  .max(50, "GitHub label names are at most 50 characters");

/**
 * `.github/switchyard.yml`. Every key is optional; unknown keys are rejected so a typo
 * surfaces as an error instead of silently using a default.
 */
export const ConfigSchema = z.strictObject({
  labels: z
    .strictObject({
      ready: labelName.default("agent:ready"),
      hold: labelName.default("agent:hold"),
      processing: labelName.default("agent:processing"),
      needsHuman: labelName.default("needs-human-confirm"),
      epicManaged: labelName.default("epic-managed"),
      /** Put on an issue whose claims kept failing (the queue's dead letter); reserved like hold. */
      stuck: labelName.default("agent:stuck"),
    })
    .prefault({}),
  queue: z
    .strictObject({
      mode: z.enum(["events", "all"]).default("events"),
      approvalLabel: labelName.nullable().default(null),
      /** The queue's default order: by number (rotated per machine) or by impact. */
      order: z.enum(["number", "impact"]).default("number"),
    })
    .prefault({}),
  kicks: z
    .strictObject({
      windowHours: z.number().positive().max(8760).default(2),
    })
    .prefault({}),
  locks: z
    .strictObject({
      processingTtlMinutes: z.number().positive().max(10080).default(30),
    })
    .prefault({}),
  claims: z
    .strictObject({
      /** Default claim lifetime; a claim may ask for 60 s to 24 h. */
      ttlMinutes: z
        .number()
        .min(1, "claims.ttlMinutes must be at least 1 (60 seconds)")
        .max(1440, "claims.ttlMinutes must be at most 1440 (24 hours)")
        .default(30),
      branchPattern: z.string().min(1).default("issue/{number}-{slug}"),
      /** Claims of one issue that may end without `done` before it is stuck (dead-lettered). */
      maxAttempts: z.number().int().min(1).max(100).default(3),
      /** Live claims one agent may hold in this repository (null: no limit). */
      maxPerAgent: z.number().int().min(1).nullable().default(null),
      /** Live claims in this repository (null: no limit). */
      maxActive: z.number().int().min(1).nullable().default(null),
    })
    .prefault({}),
  idd: z
    .strictObject({
      staleHours: z.number().positive().default(24),
      /** Authors whose IDD markers count. Absent: no filter; empty list: nobody is trusted. */
      trustedMarkerActors: z.array(z.string().min(1)).optional(),
      mirrorClaims: z.boolean().default(true),
    })
    .prefault({}),
  status: z
    .strictObject({
      /** Whether the status page of a public repository is readable without logging in. */
      public: z.boolean().default(false),
    })
    .prefault({}),
});

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
export type LabelNames = Config["labels"];

export const DEFAULT_CONFIG: Config = ConfigSchema.parse({});
