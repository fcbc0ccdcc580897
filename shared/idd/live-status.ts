import { z } from "zod";
import { ValidationError } from "../validation.ts";

/**
 * The live status digest: a human-facing comment whose first line is
 * `<!-- idd-live-status: current -->`. switchyard reads it only to report digests (and to count
 * duplicates); it is never claim evidence.
 */
export const LiveStatusMarkerSchema = z.object({
  kind: z.literal("live-status"),
  /** The word after the colon; IDD writes `current`. */
  status: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, "must be one word"),
  /** Everything after the first line (the digest text), or "" when there is none. */
  details: z.string(),
});
export type LiveStatusMarker = z.infer<typeof LiveStatusMarkerSchema>;

const FIRST_LINE = /^<!--\s*idd-live-status:\s*([A-Za-z0-9][A-Za-z0-9_-]*)\s*-->[ \t]*\r?$/i;

/** The digest marker when it is the body's first line (exactly), else null. */
export function parseLiveStatus(body: string): LiveStatusMarker | null {
  const newline = body.indexOf("\n");
  const first = newline < 0 ? body : body.slice(0, newline);
  const match = FIRST_LINE.exec(first);
  if (!match) return null;
  return {
    kind: "live-status",
    status: match[1]!,
    details: newline < 0 ? "" : body.slice(newline + 1),
  };
}

export function renderLiveStatus(input: { status?: string; details: string }): string {
  const result = LiveStatusMarkerSchema.safeParse({
    kind: "live-status",
    status: input.status ?? "current",
    details: input.details,
  });
  if (!result.success) throw new ValidationError("live-status digest", result.error);
  const { status, details } = result.data;
  return `<!-- idd-live-status: ${status} -->${details === "" ? "" : `\n${details}`}`;
}
