import { z } from "zod";
import { describeZodError } from "../validation.ts";
import { branchToken, claimIdToken, markerTimestamp, markerToken } from "./fields.ts";

/**
 * The `forced-handoff` payload: a human-gated transfer of the active claim to a successor.
 * Canonical keys are hyphen-case; the camelCase spelling of each key is accepted on input.
 * Reading follows IDD's own parser (idd-skill v0.7 `normalizeForcedHandoffPayload`): string
 * values are trimmed, a non-string value counts as absent, a `linked-pr` that is not a PR
 * number or URL counts as absent, both spellings of one key must agree (compared as trimmed
 * text), and the camelCase spelling is the one read when both are present.
 */
export const FORCED_HANDOFF_SCOPES = ["issue-only", "issue-plus-pr"] as const;

/** A PR number without leading zeros, or an http(s) URL, as IDD's `linked-pr` grammar says. */
const LINKED_PR = /^(?:[1-9]\d*|https?:\/\/[^\s<>"]+)$/;

/** One line of text (IDD refuses a multi-line reason) that cannot close the marker. */
const reasonText = z
  .string()
  .min(1, "cannot be empty")
  .refine((v) => v === v.trim(), "cannot start or end with whitespace")
  .refine((v) => !/[\r\n]/.test(v), "must be a single line")
  .refine((v) => !v.includes("-->"), "cannot contain `-->`");

export const ForcedHandoffPayloadSchema = z
  .object({
    oldAgentId: markerToken,
    oldClaimId: claimIdToken,
    newAgentId: markerToken,
    newClaimId: claimIdToken,
    branch: branchToken,
    /** The pull request the handoff covers: a number (as digits) or a URL; null for issue-only. */
    linkedPr: z.string().regex(LINKED_PR, "must be a PR number or URL").nullable(),
    forcedBy: markerToken,
    reason: reasonText,
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

const has = (record: Record<string, unknown>, key: string) => Object.hasOwn(record, key);
const asText = (value: unknown) => String(value ?? "").trim();

/** Validates a decoded JSON payload (either key spelling) into the canonical payload. */
export function readForcedHandoffPayload(raw: unknown): HandoffPayloadRead {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: "the payload must be a JSON object" };
  }
  const record = raw as Record<string, unknown>;
  const candidate: Record<string, unknown> = {};
  for (const [field, key] of KEYS) {
    const aliased = field !== key;
    if (aliased && has(record, field) && has(record, key)) {
      if (asText(record[field]) !== asText(record[key])) {
        return { ok: false, reason: `conflicting values for "${key}" and "${field}"` };
      }
    }
    const value = aliased && has(record, field) ? record[field] : record[key];
    const text = typeof value === "string" ? value.trim() : undefined;
    if (field === "linkedPr")
      candidate[field] = text !== undefined && LINKED_PR.test(text) ? text : null;
    else candidate[field] = text ?? value;
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

/**
 * The PR number a `linked-pr` names, as IDD normalises it (`normalizeLinkedPrReference`): digits,
 * or an http(s) URL on github.com whose path is exactly `/{owner}/{repo}/pull/{n}` (a trailing
 * `/`, a query and a fragment are fine). Anything else names no PR.
 */
export function linkedPrNumber(linkedPr: string): number | null {
  if (/^[1-9]\d*$/.test(linkedPr)) return Number(linkedPr);
  let url: URL;
  try {
    url = new URL(linkedPr);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (url.hostname !== "github.com" && url.hostname !== "www.github.com") return null;
  const match = /^\/[^/]+\/[^/]+\/pull\/([1-9]\d*)\/?$/i.exec(url.pathname);
  return match ? Number(match[1]) : null;
}
