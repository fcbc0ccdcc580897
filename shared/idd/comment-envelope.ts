import { decodeEntitiesDeep } from "./html-entities.ts";

/**
 * The envelope every IDD comment marker shares. For `claimed-by`, `unclaimed-by` and
 * `activation-nonce` the comment's very first bytes are `<!-- token:` (token case-insensitive),
 * the HTML comment closes at the first `-->`, and at most one italic note line mentioning IDD
 * may follow on a later line; anything else after the token makes the whole comment malformed:
 * reported, never live. A body that only starts with the marker after some whitespace is not a
 * marker at all, as IDD's parsers read it.
 *
 * `forced-handoff` is read as IDD's own parser reads it: surrounding whitespace is ignored, the
 * marker ends at the first `-->`, and the text after it (IDD's helper writes several lines of
 * consent prose) must contain visible text once HTML comments are removed; a bare marker is
 * not a handoff.
 */
export const COMMENT_MARKER_TOKENS = [
  "claimed-by",
  "unclaimed-by",
  "activation-nonce",
  "forced-handoff",
] as const;
export type CommentMarkerToken = (typeof COMMENT_MARKER_TOKENS)[number];

export interface Envelope {
  token: CommentMarkerToken;
  /** The text between `token:` and `-->`, untrimmed. */
  inner: string;
  /**
   * What follows the marker, trimmed: the italic note line (null when nothing follows), or for
   * `forced-handoff` the consent text (never null).
   */
  note: string | null;
}

export type EnvelopeRead =
  | { status: "none" }
  | { status: "ok"; envelope: Envelope }
  | { status: "malformed"; token: CommentMarkerToken; reason: string };

const TOKEN_ALTERNATION = COMMENT_MARKER_TOKENS.join("|");
const AT_START = new RegExp(`^<!--\\s*(${TOKEN_ALTERNATION}):`, "i");
const HANDOFF_START = /^<!--\s*forced-handoff:/i;

/** The visible note line the IDD grammar allows after a marker: `_..._` on one line, naming IDD. */
export function isIddNote(line: string): boolean {
  return /^_[^\r\n]*_$/.test(line) && /\bIDD\b/i.test(line);
}

/** Text with HTML comments (closed, or left open to the end) removed, trimmed. */
export function visibleText(text: string): string {
  return text
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<!--[\s\S]*$/, " ")
    .trim();
}

/** Consent text after a forced-handoff marker: trimmed, with some text outside HTML comments. */
export function isConsentText(text: string): boolean {
  return text === text.trim() && visibleText(text) !== "";
}

function tokenOf(text: string): CommentMarkerToken {
  return text.toLowerCase() as CommentMarkerToken;
}

function readHandoffEnvelope(trimmed: string, tokenEnd: number): EnvelopeRead {
  const token = "forced-handoff";
  const close = trimmed.indexOf("-->", tokenEnd);
  if (close < 0) return { status: "malformed", token, reason: "the HTML comment is never closed" };
  const note = trimmed.slice(close + 3).trim();
  if (visibleText(note) === "") {
    return {
      status: "malformed",
      token,
      reason: "no visible consent text follows the marker (a bare forced-handoff is not a handoff)",
    };
  }
  return { status: "ok", envelope: { token, inner: trimmed.slice(tokenEnd, close), note } };
}

export function readEnvelope(body: string): EnvelopeRead {
  const trimmed = body.trim();
  const handoff = HANDOFF_START.exec(trimmed);
  if (handoff) return readHandoffEnvelope(trimmed, handoff[0].length);
  const start = AT_START.exec(body);
  if (!start) {
    const decoded = decodeEntitiesDeep(body);
    const escaped =
      decoded === body
        ? null
        : HANDOFF_START.test(decoded.trim())
          ? "forced-handoff"
          : AT_START.exec(decoded)?.[1];
    if (escaped) {
      return {
        status: "malformed",
        token: tokenOf(escaped),
        reason: "the marker is HTML-escaped; an escaped marker is never live",
      };
    }
    return { status: "none" };
  }
  const token = tokenOf(start[1]!);
  const close = body.indexOf("-->", start[0].length);
  if (close < 0) return { status: "malformed", token, reason: "the HTML comment is never closed" };
  const inner = body.slice(start[0].length, close);
  if (inner.includes("<!--")) {
    return { status: "malformed", token, reason: "a nested `<!--` appears inside the marker" };
  }
  const rest = body.slice(close + 3);
  const note = rest.trim();
  if (note === "") return { status: "ok", envelope: { token, inner, note: null } };
  const gap = /^\s*/.exec(rest)![0];
  if (!gap.includes("\n")) {
    return { status: "malformed", token, reason: "text follows the marker on the same line" };
  }
  if (/[\r\n]/.test(note)) {
    return {
      status: "malformed",
      token,
      reason: "more than one line follows the marker (only one italic IDD note line may)",
    };
  }
  if (!isIddNote(note)) {
    return {
      status: "malformed",
      token,
      reason: "the line after the marker is not an italic note (`_..._`) mentioning IDD",
    };
  }
  return { status: "ok", envelope: { token, inner, note } };
}

/** The canonical bytes: `<!-- token: inner -->`, then a blank line and the note when there is one. */
export function renderEnvelope(token: CommentMarkerToken, inner: string, note: string | null) {
  const marker = `<!-- ${token}: ${inner} -->`;
  return note === null ? marker : `${marker}\n\n${note}`;
}
