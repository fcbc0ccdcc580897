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
    })
    .prefault({}),
  queue: z
    .strictObject({
      mode: z.enum(["events", "all"]).default("events"),
      approvalLabel: labelName.nullable().default(null),
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
      ttlMinutes: z.number().positive().max(10080).default(30),
      branchPattern: z.string().min(1).default("issue/{number}-{slug}"),
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
});

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
export type LabelNames = Config["labels"];

export const DEFAULT_CONFIG: Config = ConfigSchema.parse({});
