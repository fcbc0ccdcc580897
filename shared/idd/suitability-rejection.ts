import { z } from "zod";
import { ValidationError } from "../validation.ts";
import { maskCode } from "./markdown-code.ts";

/**
 * The A4.5 suitability gate rejection: a comment starting with `A4.5 suitability gate rejection`
 * that names its outcome as `outcome: <one of six>` and usually the failed check as
 * `Check N (Name)`. Outcome and check are read outside code, first occurrence wins.
 */
export const SUITABILITY_OUTCOMES = [
  "unclear",
  "needs-decision",
  "blocked-by-human",
  "duplicate",
  "out-of-scope",
  "invalid",
] as const;
export type SuitabilityOutcome = (typeof SUITABILITY_OUTCOMES)[number];

export const SUITABILITY_REJECTION_PREFIX = "A4.5 suitability gate rejection";

export const SuitabilityRejectionMarkerSchema = z.object({
  kind: z.literal("suitability-rejection"),
  /** null when the comment names no recognised outcome (reported as a diagnostic). */
  outcome: z.enum(SUITABILITY_OUTCOMES).nullable(),
  /** `Check N (Name)` as written, or null. */
  check: z
    .string()
    .regex(/^Check \d+ \([^()\r\n]+\)$/, "must look like `Check 4 (Duplicate or Superseded Work)`")
    .nullable(),
});
export type SuitabilityRejectionMarker = z.infer<typeof SuitabilityRejectionMarkerSchema>;

const OUTCOME = new RegExp(`outcome:\\s*(${SUITABILITY_OUTCOMES.join("|")})\\b`, "i");
const CHECK = /Check\s+(\d+)\s*\(([^()\r\n]*[^()\s][^()\r\n]*)\)/;

/** Leading whitespace is tolerated here (as the IDD reference does): the prefix is prose. */
export function parseSuitabilityRejection(body: string): SuitabilityRejectionMarker | null {
  const text = body.trimStart();
  if (!text.startsWith(SUITABILITY_REJECTION_PREFIX)) return null;
  const visible = maskCode(text);
  const outcome = OUTCOME.exec(visible);
  const check = CHECK.exec(visible);
  return {
    kind: "suitability-rejection",
    outcome: outcome ? (outcome[1]!.toLowerCase() as SuitabilityOutcome) : null,
    check: check ? `Check ${Number(check[1])} (${check[2]!.trim()})` : null,
  };
}

/**
 * Renders a rejection comment: the prefix (with the failed check), the `outcome:` line, then
 * the free-text reason. The reason is prose for humans and is not part of the parsed value.
 */
export function renderSuitabilityRejection(input: {
  outcome: SuitabilityOutcome;
  check?: string | null;
  reason?: string | null;
}): string {
  const result = SuitabilityRejectionMarkerSchema.safeParse({
    kind: "suitability-rejection",
    outcome: input.outcome,
    check: input.check ?? null,
  });
  if (!result.success) throw new ValidationError("suitability rejection", result.error);
  const { outcome, check } = result.data;
  const head =
    check === null
      ? SUITABILITY_REJECTION_PREFIX
      : `${SUITABILITY_REJECTION_PREFIX}: ${check} failed.`;
  const reason = input.reason?.trim() ? `\n\n${input.reason.trim()}` : "";
  return `${head}\n\noutcome: ${outcome}${reason}`;
}
