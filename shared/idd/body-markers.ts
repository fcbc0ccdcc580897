import { z } from "zod";
import { describeZodError, ValidationError } from "../validation.ts";
import { positiveInt } from "./fields.ts";
import { maskCode } from "./markdown-code.ts";
import { SweepTracePayloadSchema } from "./sweep-trace.ts";

/**
 * Markers that may sit anywhere in an issue body or comment (outside code):
 *
 *   <!-- {prefix}-autopilot-suitability: 1..5 -->   <!-- {prefix}-effort: S|M|L -->
 *   <!-- {prefix}-blocked-by: {roadmap-id} -->      <!-- {prefix}-roadmap-id: {roadmap-id} -->
 *   <!-- {prefix}-triage-verdict: {outcome} -->     <!-- spinoff-of: #N -->
 *   <!-- requires: cap1,cap2 -->                    <!-- sweep-trace: {json} -->
 *
 * `{prefix}` is the repository's IDD marker prefix (e.g. `idd-skill`). Names are
 * case-insensitive; a marker with a bad value is a diagnostic, never a marker.
 */

const prefix = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "must be letters, digits, `_`, `.` or `-`")
  .refine((p) => !p.endsWith("-"), "cannot end with `-`");
const roadmapId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:/#-]*$/, "must be one roadmap-id token")
  .refine((v) => !v.includes("-->"), "cannot contain `-->`");
const capability = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "must be letters, digits, `.`, `_` or `-`");
const crossRepoRef = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}#[1-9]\d{0,9}$/);

export const TRIAGE_VERDICTS = ["unclear", "duplicate", "out-of-scope", "invalid"] as const;
export const EFFORTS = ["S", "M", "L"] as const;

export const SuitabilityScoreMarkerSchema = z.object({
  kind: z.literal("autopilot-suitability"),
  prefix,
  score: z.number().int().min(1).max(5),
});
export const EffortMarkerSchema = z.object({
  kind: z.literal("effort"),
  prefix,
  effort: z.enum(EFFORTS),
});
export const BlockedByMarkerSchema = z.object({
  kind: z.literal("blocked-by"),
  prefix,
  roadmapId,
});
export const RoadmapIdMarkerSchema = z.object({
  kind: z.literal("roadmap-id"),
  prefix,
  roadmapId,
});
export const TriageVerdictMarkerSchema = z.object({
  kind: z.literal("triage-verdict"),
  prefix,
  outcome: z.enum(TRIAGE_VERDICTS),
});
export const SpinoffOfMarkerSchema = z.object({
  kind: z.literal("spinoff-of"),
  /** The parent issue: a number in this repository, or `owner/repo#n`. */
  parent: z.union([positiveInt, crossRepoRef]),
});
export const RequiresMarkerSchema = z.object({
  kind: z.literal("requires"),
  capabilities: z.array(capability).min(1, "must name at least one capability"),
});
export const SweepTraceMarkerSchema = z.object({
  kind: z.literal("sweep-trace"),
  payload: SweepTracePayloadSchema,
});

export const BodyMarkerSchema = z.discriminatedUnion("kind", [
  SuitabilityScoreMarkerSchema,
  EffortMarkerSchema,
  BlockedByMarkerSchema,
  RoadmapIdMarkerSchema,
  TriageVerdictMarkerSchema,
  SpinoffOfMarkerSchema,
  RequiresMarkerSchema,
  SweepTraceMarkerSchema,
]);

export type SuitabilityScoreMarker = z.infer<typeof SuitabilityScoreMarkerSchema>;
export type EffortMarker = z.infer<typeof EffortMarkerSchema>;
export type BlockedByMarker = z.infer<typeof BlockedByMarkerSchema>;
export type RoadmapIdMarker = z.infer<typeof RoadmapIdMarkerSchema>;
export type TriageVerdictMarker = z.infer<typeof TriageVerdictMarkerSchema>;
export type SpinoffOfMarker = z.infer<typeof SpinoffOfMarkerSchema>;
export type RequiresMarker = z.infer<typeof RequiresMarkerSchema>;
export type SweepTraceMarker = z.infer<typeof SweepTraceMarkerSchema>;
export type BodyMarker = z.infer<typeof BodyMarkerSchema>;
export type BodyMarkerKind = BodyMarker["kind"];

const PREFIXED_KINDS = [
  "autopilot-suitability",
  "effort",
  "blocked-by",
  "roadmap-id",
  "triage-verdict",
] as const;
type PrefixedKind = (typeof PREFIXED_KINDS)[number];

export interface BodyMarkerDiagnostic {
  kind: "malformed-marker";
  marker: string;
  /** Offset of the `<!--` in the text. */
  offset: number;
  reason: string;
}

export interface BodyMarkerScan {
  markers: BodyMarker[];
  diagnostics: BodyMarkerDiagnostic[];
}

export interface BodyMarkerOptions {
  /** Only prefixed markers with this prefix (case-insensitive) count; absent: any prefix. */
  prefix?: string | null;
}

function candidateFor(
  kind: BodyMarkerKind,
  markerPrefix: string,
  value: string,
): { ok: true; value: unknown } | { ok: false; reason: string } {
  switch (kind) {
    case "autopilot-suitability":
      if (!/^\d+$/.test(value)) return { ok: false, reason: "the score must be an integer 1-5" };
      return { ok: true, value: { kind, prefix: markerPrefix, score: Number(value) } };
    case "effort":
      return { ok: true, value: { kind, prefix: markerPrefix, effort: value.toUpperCase() } };
    case "blocked-by":
    case "roadmap-id":
      return { ok: true, value: { kind, prefix: markerPrefix, roadmapId: value } };
    case "triage-verdict":
      return { ok: true, value: { kind, prefix: markerPrefix, outcome: value.toLowerCase() } };
    case "spinoff-of": {
      const local = /^#([1-9]\d{0,9})$/.exec(value);
      return { ok: true, value: { kind, parent: local ? Number(local[1]) : value } };
    }
    case "requires":
      return {
        ok: true,
        value: { kind, capabilities: value === "" ? [] : value.split(",").map((c) => c.trim()) },
      };
    case "sweep-trace":
      try {
        return { ok: true, value: { kind, payload: JSON.parse(value) } };
      } catch {
        return { ok: false, reason: "the payload is not valid JSON" };
      }
  }
}

function classifyName(
  name: string,
  options: BodyMarkerOptions,
): { kind: BodyMarkerKind; prefix: string } | null {
  const lower = name.toLowerCase();
  if (lower === "spinoff-of" || lower === "requires" || lower === "sweep-trace") {
    return { kind: lower as BodyMarkerKind, prefix: "" };
  }
  for (const kind of PREFIXED_KINDS) {
    const suffix = `-${kind}`;
    if (lower.length > suffix.length && lower.endsWith(suffix)) {
      const markerPrefix = name.slice(0, name.length - suffix.length);
      if (options.prefix && markerPrefix.toLowerCase() !== options.prefix.toLowerCase()) {
        return null;
      }
      return { kind: kind satisfies PrefixedKind, prefix: markerPrefix };
    }
  }
  return null;
}

/**
 * Every body marker in `text`, in document order, skipping code spans and blocks. HTML comments
 * that are not body markers (claim markers, digests, other tools' comments) are ignored.
 */
export function scanBodyMarkers(text: string, options: BodyMarkerOptions = {}): BodyMarkerScan {
  return scanMaskedBodyMarkers(maskCode(text), options);
}

/** scanBodyMarkers over text whose code is already blanked (saves a second Markdown parse). */
export function scanMaskedBodyMarkers(
  masked: string,
  options: BodyMarkerOptions = {},
): BodyMarkerScan {
  const markers: BodyMarker[] = [];
  const diagnostics: BodyMarkerDiagnostic[] = [];
  for (const match of masked.matchAll(/<!--([\s\S]*?)-->/g)) {
    const head = /^\s*([A-Za-z0-9][A-Za-z0-9_.-]*):([\s\S]*)$/.exec(match[1]!);
    if (!head) continue;
    const named = classifyName(head[1]!, options);
    if (!named) continue;
    const offset = match.index;
    const candidate = candidateFor(named.kind, named.prefix, head[2]!.trim());
    if (!candidate.ok) {
      diagnostics.push({
        kind: "malformed-marker",
        marker: head[1]!,
        offset,
        reason: candidate.reason,
      });
      continue;
    }
    const result = BodyMarkerSchema.safeParse(candidate.value);
    if (result.success) markers.push(result.data);
    else {
      diagnostics.push({
        kind: "malformed-marker",
        marker: head[1]!,
        offset,
        reason: describeZodError(result.error),
      });
    }
  }
  return { markers, diagnostics };
}

/** Renders one body marker in canonical form (the inverse of scanBodyMarkers for one marker). */
export function renderBodyMarker(marker: BodyMarker): string {
  const result = BodyMarkerSchema.safeParse(marker);
  if (!result.success) throw new ValidationError(`${marker.kind} marker`, result.error);
  const m = result.data;
  switch (m.kind) {
    case "autopilot-suitability":
      return `<!-- ${m.prefix}-autopilot-suitability: ${m.score} -->`;
    case "effort":
      return `<!-- ${m.prefix}-effort: ${m.effort} -->`;
    case "blocked-by":
      return `<!-- ${m.prefix}-blocked-by: ${m.roadmapId} -->`;
    case "roadmap-id":
      return `<!-- ${m.prefix}-roadmap-id: ${m.roadmapId} -->`;
    case "triage-verdict":
      return `<!-- ${m.prefix}-triage-verdict: ${m.outcome} -->`;
    case "spinoff-of":
      return `<!-- spinoff-of: ${typeof m.parent === "number" ? `#${m.parent}` : m.parent} -->`;
    case "requires":
      return `<!-- requires: ${m.capabilities.join(",")} -->`;
    case "sweep-trace": {
      const json = JSON.stringify(m.payload);
      if (json.includes("-->")) {
        throw new RangeError("a sweep-trace payload cannot contain `-->`");
      }
      return `<!-- sweep-trace: ${json} -->`;
    }
  }
}
