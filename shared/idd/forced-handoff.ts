import { z } from "zod";
import { describeZodError } from "../validation.ts";
import { branchToken, claimIdToken, markerTimestamp, markerToken } from "./fields.ts";

/**
 * The `forced-handoff` payload: a human-gated transfer of the active claim to a successor.
 * Canonical keys are hyphen-case; the camelCase spelling of each key is accepted on input, and
 * a payload giving both spellings of one key with different values is rejected.
 */
export const FORCED_HANDOFF_SCOPES = ["issue-only", "issue-plus-pr"] as const;

const safeText = z
  .string()
  .trim()
  .min(1, "cannot be empty")
  .refine((v) => !v.includes("-->") && !v.includes("<!--"), "cannot contain `<!--` or `-->`");

export const ForcedHandoffPayloadSchema = z
  .object({
    oldAgentId: markerToken,
    oldClaimId: claimIdToken,
    newAgentId: markerToken,
    newClaimId: claimIdToken,
    branch: branchToken,
    /** The pull request the handoff covers: a number (as digits) or a URL; null for issue-only. */
    linkedPr: z
      .string()
      .regex(/^(?:[1-9]\d{0,9}|https?:\/\/[^\s<>"]+)$/, "must be a PR number or URL")
      .nullable(),
    forcedBy: markerToken,
    reason: safeText,
    timestamp: markerTimestamp,
    contextScope: z.enum(FORCED_HANDOFF_SCOPES),
  })
  .superRefine((p, ctx) => {
    if (p.oldClaimId === p.newClaimId) {
      ctx.addIssue({
        code: "custom",
        path: ["newClaimId"],
        message: "must differ from oldClaimId",
      });
    }
    if (p.contextScope === "issue-plus-pr" && p.linkedPr === null) {
      ctx.addIssue({
        code: "custom",
        path: ["linkedPr"],
        message: "is required when contextScope is issue-plus-pr",
      });
    }
    if (p.contextScope === "issue-only" && p.linkedPr !== null) {
      ctx.addIssue({
        code: "custom",
        path: ["linkedPr"],
        message: "must be absent when contextScope is issue-only",
      });
    }
  });

export type ForcedHandoffPayload = z.infer<typeof ForcedHandoffPayloadSchema>;

/** [camelCase field, canonical hyphen-case key], in canonical render order. */
const KEYS = [
  ["oldAgentId", "old-agent-id"],
  ["oldClaimId", "old-claim-id"],
  ["newAgentId", "new-agent-id"],
  ["newClaimId", "new-claim-id"],
  ["branch", "branch"],
  ["linkedPr", "linked-pr"],
  ["forcedBy", "forced-by"],
  ["reason", "reason"],
  ["timestamp", "timestamp"],
  ["contextScope", "context-scope"],
] as const satisfies ReadonlyArray<readonly [keyof ForcedHandoffPayload, string]>;

export type HandoffPayloadRead =
  | { ok: true; payload: ForcedHandoffPayload }
  | { ok: false; reason: string };

/** Validates a decoded JSON payload (either key spelling) into the canonical payload. */
export function readForcedHandoffPayload(raw: unknown): HandoffPayloadRead {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: "the payload must be a JSON object" };
  }
  const record = raw as Record<string, unknown>;
  const candidate: Record<string, unknown> = {};
  for (const [field, key] of KEYS) {
    const hyphen = record[key];
    const camel = field === key ? undefined : record[field];
    if (hyphen !== undefined && camel !== undefined && hyphen !== camel) {
      return { ok: false, reason: `conflicting values for "${key}" and "${field}"` };
    }
    let value = hyphen ?? camel;
    if (field === "linkedPr") {
      if (typeof value === "number" && Number.isInteger(value)) value = String(value);
      value ??= null;
    }
    candidate[field] = value;
  }
  const result = ForcedHandoffPayloadSchema.safeParse(candidate);
  if (!result.success) return { ok: false, reason: describeZodError(result.error) };
  return { ok: true, payload: result.data };
}

/** The canonical JSON text: hyphen-case keys in a fixed order, `linked-pr` only when set. */
export function renderForcedHandoffPayload(payload: ForcedHandoffPayload): string {
  const out: Record<string, string> = {};
  for (const [field, key] of KEYS) {
    const value = payload[field];
    if (value !== null) out[key] = value;
  }
  return JSON.stringify(out);
}
