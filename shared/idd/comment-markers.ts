import { z } from "zod";
import { describeZodError, ValidationError } from "../validation.ts";
import { type CommentMarkerToken, readEnvelope, renderEnvelope } from "./comment-envelope.ts";
import {
  branchToken,
  claimIdToken,
  consentNote,
  iddNote,
  markerTimestamp,
  markerToken,
} from "./fields.ts";
import {
  ForcedHandoffPayloadSchema,
  readForcedHandoffPayload,
  renderForcedHandoffPayload,
} from "./forced-handoff.ts";

/**
 * The claim-protocol comment markers, parsed and rendered byte-exactly:
 *
 *   <!-- claimed-by: {agent} {claim} supersedes: {prior|none} {ts} branch: {branch} -->
 *   <!-- claimed-by: {agent} {ts} branch: {branch} -->                        (legacy)
 *   <!-- unclaimed-by: {agent} {claim} {ts} -->
 *   <!-- unclaimed-by: {agent} {ts} -->                                       (legacy)
 *   <!-- activation-nonce: {agent} {claim} {nonce} {ts} -->
 *   <!-- forced-handoff: {json} -->
 *
 *   {consent text}                                                            (forced-handoff)
 *
 * Keywords are case-insensitive; fields are separated by whitespace; values keep their bytes.
 * A forced handoff is read as IDD's parser reads it, consent prose included (comment-envelope.ts).
 */

export const ClaimedByMarkerSchema = z.object({
  kind: z.literal("claimed-by"),
  agentId: markerToken,
  claimId: claimIdToken,
  /** The claim-id this claim takes over, or null for `supersedes: none`. */
  supersedes: claimIdToken.nullable(),
  timestamp: markerTimestamp,
  branch: branchToken,
  note: iddNote,
});

export const LegacyClaimedByMarkerSchema = z.object({
  kind: z.literal("claimed-by-legacy"),
  agentId: markerToken,
  timestamp: markerTimestamp,
  branch: branchToken,
  note: iddNote,
});

export const UnclaimedByMarkerSchema = z.object({
  kind: z.literal("unclaimed-by"),
  agentId: markerToken,
  claimId: claimIdToken,
  timestamp: markerTimestamp,
  note: iddNote,
});

export const LegacyUnclaimedByMarkerSchema = z.object({
  kind: z.literal("unclaimed-by-legacy"),
  agentId: markerToken,
  timestamp: markerTimestamp,
  note: iddNote,
});

export const ActivationNonceMarkerSchema = z.object({
  kind: z.literal("activation-nonce"),
  agentId: markerToken,
  claimId: claimIdToken,
  nonce: markerToken,
  timestamp: markerTimestamp,
  note: iddNote,
});

export const ForcedHandoffMarkerSchema = z.object({
  kind: z.literal("forced-handoff"),
  payload: ForcedHandoffPayloadSchema,
  /** The visible text after the marker (IDD's helper writes consent prose); never absent. */
  note: consentNote,
});

export const CommentMarkerSchema = z.discriminatedUnion("kind", [
  ClaimedByMarkerSchema,
  LegacyClaimedByMarkerSchema,
  UnclaimedByMarkerSchema,
  LegacyUnclaimedByMarkerSchema,
  ActivationNonceMarkerSchema,
  ForcedHandoffMarkerSchema,
]);

export type ClaimedByMarker = z.infer<typeof ClaimedByMarkerSchema>;
export type LegacyClaimedByMarker = z.infer<typeof LegacyClaimedByMarkerSchema>;
export type UnclaimedByMarker = z.infer<typeof UnclaimedByMarkerSchema>;
export type LegacyUnclaimedByMarker = z.infer<typeof LegacyUnclaimedByMarkerSchema>;
export type ActivationNonceMarker = z.infer<typeof ActivationNonceMarkerSchema>;
export type ForcedHandoffMarker = z.infer<typeof ForcedHandoffMarkerSchema>;
export type CommentMarker = z.infer<typeof CommentMarkerSchema>;

export type CommentMarkerRead =
  | { status: "none" }
  | { status: "ok"; marker: CommentMarker }
  | { status: "malformed"; token: CommentMarkerToken; reason: string };

const is = (field: string | undefined, keyword: string) => field?.toLowerCase() === keyword;

const SHAPES: Record<Exclude<CommentMarkerToken, "forced-handoff">, string> = {
  "claimed-by":
    "`{agent-id} {claim-id} supersedes: {prior-claim-id|none} {timestamp} branch: {branch}`",
  "unclaimed-by": "`{agent-id} {claim-id} {timestamp}`",
  "activation-nonce": "`{agent-id} {claim-id} {nonce} {timestamp}`",
};

/** Maps the whitespace-separated fields onto a candidate marker, or null when the shape is wrong. */
function fieldsToCandidate(token: CommentMarkerToken, f: string[], note: string | null) {
  switch (token) {
    case "claimed-by":
      if (f.length === 7 && is(f[2], "supersedes:") && is(f[5], "branch:")) {
        return {
          kind: "claimed-by",
          agentId: f[0],
          claimId: f[1],
          supersedes: f[3] === "none" ? null : f[3],
          timestamp: f[4],
          branch: f[6],
          note,
        };
      }
      if (f.length === 4 && is(f[2], "branch:")) {
        return { kind: "claimed-by-legacy", agentId: f[0], timestamp: f[1], branch: f[3], note };
      }
      return null;
    case "unclaimed-by":
      if (f.length === 3) {
        return { kind: "unclaimed-by", agentId: f[0], claimId: f[1], timestamp: f[2], note };
      }
      if (f.length === 2)
        return { kind: "unclaimed-by-legacy", agentId: f[0], timestamp: f[1], note };
      return null;
    case "activation-nonce":
      if (f.length !== 4) return null;
      return {
        kind: "activation-nonce",
        agentId: f[0],
        claimId: f[1],
        nonce: f[2],
        timestamp: f[3],
        note,
      };
    default:
      return null;
  }
}

/**
 * Reads the comment marker a comment body starts with. `none` when the body does not start with
 * a claim-protocol token; `malformed` (with the reason) when it starts with one but is not
 * exactly a marker plus at most one IDD note line (for `forced-handoff`: a marker, after
 * optional whitespace, followed by visible consent text).
 */
export function parseCommentMarker(body: string): CommentMarkerRead {
  const read = readEnvelope(body);
  if (read.status !== "ok") return read;
  const { token, inner, note } = read.envelope;
  let candidate: unknown;
  if (token === "forced-handoff") {
    let json: unknown;
    try {
      json = JSON.parse(inner.trim());
    } catch {
      return { status: "malformed", token, reason: "the payload is not valid JSON" };
    }
    const payload = readForcedHandoffPayload(json);
    if (!payload.ok) return { status: "malformed", token, reason: payload.reason };
    candidate = { kind: "forced-handoff", payload: payload.payload, note };
  } else {
    if (!/^\s/.test(inner)) {
      return { status: "malformed", token, reason: `expected whitespace after \`${token}:\`` };
    }
    candidate = fieldsToCandidate(token, inner.trim().split(/\s+/), note);
    if (candidate === null) {
      return { status: "malformed", token, reason: `expected ${SHAPES[token]}` };
    }
  }
  const result = CommentMarkerSchema.safeParse(candidate);
  if (!result.success)
    return { status: "malformed", token, reason: describeZodError(result.error) };
  return { status: "ok", marker: result.data };
}

/** Fields of a marker as the render functions take them: no `kind`, `note` optional. */
type RenderInput<T extends { note: unknown }> = Omit<T, "kind" | "note"> & { note?: T["note"] };

function validated<T>(schema: z.ZodType<T>, what: string, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(what, result.error);
  return result.data;
}

const defaultNote = (agentId: string, what: string) =>
  `_${agentId}: ${what} — IDD automation marker. Do not edit._`;

/**
 * Renders `claimed-by`. `note` defaults to the IDD automation note; pass null for the bare
 * marker. Throws a ValidationError naming the bad field.
 */
export function renderClaimedBy(input: RenderInput<ClaimedByMarker>): string {
  const m = validated(ClaimedByMarkerSchema, "claimed-by marker", {
    ...input,
    kind: "claimed-by",
    note: input.note === undefined ? defaultNote(input.agentId, "issue claim") : input.note,
  });
  return renderEnvelope(
    "claimed-by",
    `${m.agentId} ${m.claimId} supersedes: ${m.supersedes ?? "none"} ${m.timestamp} branch: ${m.branch}`,
    m.note,
  );
}

export function renderLegacyClaimedBy(input: RenderInput<LegacyClaimedByMarker>): string {
  const m = validated(LegacyClaimedByMarkerSchema, "legacy claimed-by marker", {
    ...input,
    kind: "claimed-by-legacy",
    note: input.note === undefined ? defaultNote(input.agentId, "issue claim") : input.note,
  });
  return renderEnvelope("claimed-by", `${m.agentId} ${m.timestamp} branch: ${m.branch}`, m.note);
}

/** Renders `unclaimed-by` (a release of exactly this agent-id and claim-id). */
export function renderUnclaimedBy(input: RenderInput<UnclaimedByMarker>): string {
  const m = validated(UnclaimedByMarkerSchema, "unclaimed-by marker", {
    ...input,
    kind: "unclaimed-by",
    note:
      input.note === undefined ? defaultNote(input.agentId, "issue claim released") : input.note,
  });
  return renderEnvelope("unclaimed-by", `${m.agentId} ${m.claimId} ${m.timestamp}`, m.note);
}

export function renderLegacyUnclaimedBy(input: RenderInput<LegacyUnclaimedByMarker>): string {
  const m = validated(LegacyUnclaimedByMarkerSchema, "legacy unclaimed-by marker", {
    ...input,
    kind: "unclaimed-by-legacy",
    note:
      input.note === undefined ? defaultNote(input.agentId, "issue claim released") : input.note,
  });
  return renderEnvelope("unclaimed-by", `${m.agentId} ${m.timestamp}`, m.note);
}

export function renderActivationNonce(input: RenderInput<ActivationNonceMarker>): string {
  const m = validated(ActivationNonceMarkerSchema, "activation-nonce marker", {
    ...input,
    kind: "activation-nonce",
    note:
      input.note === undefined ? defaultNote(input.agentId, "claim activation nonce") : input.note,
  });
  return renderEnvelope(
    "activation-nonce",
    `${m.agentId} ${m.claimId} ${m.nonce} ${m.timestamp}`,
    m.note,
  );
}

/**
 * Renders `forced-handoff`: the marker, a blank line and the consent text (`note`, which defaults
 * to the IDD automation note). A handoff is never rendered bare: IDD does not read a bare one.
 */
export function renderForcedHandoff(input: RenderInput<ForcedHandoffMarker>): string {
  const m = validated(ForcedHandoffMarkerSchema, "forced-handoff marker", {
    ...input,
    kind: "forced-handoff",
    note:
      input.note === undefined
        ? defaultNote(input.payload.forcedBy, "forced claim handoff")
        : input.note,
  });
  return renderEnvelope("forced-handoff", renderForcedHandoffPayload(m.payload), m.note);
}

/** Renders any comment marker from its parsed form (the inverse of parseCommentMarker). */
export function renderCommentMarker(marker: CommentMarker): string {
  switch (marker.kind) {
    case "claimed-by":
      return renderClaimedBy(marker);
    case "claimed-by-legacy":
      return renderLegacyClaimedBy(marker);
    case "unclaimed-by":
      return renderUnclaimedBy(marker);
    case "unclaimed-by-legacy":
      return renderLegacyUnclaimedBy(marker);
    case "activation-nonce":
      return renderActivationNonce(marker);
    case "forced-handoff":
      return renderForcedHandoff(marker);
  }
}
