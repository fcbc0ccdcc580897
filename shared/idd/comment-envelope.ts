import { decodeEntitiesDeep } from "./html-entities.ts";
import { maskCode } from "./markdown-code.ts";

/**
 * The envelope every IDD comment marker shares: the comment's very first bytes are
 * `<!-- token:` (token case-insensitive), the HTML comment closes at the first `-->`, and at
 * most one italic note line mentioning IDD may follow on a later line. Anything else after the
 * token makes the whole comment malformed: reported, never live.
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
  /** The italic note line, trimmed, or null when nothing follows the marker. */
  note: string | null;
}

export type EnvelopeRead =
  | { status: "none" }
  | { status: "ok"; envelope: Envelope }
  | { status: "malformed"; token: CommentMarkerToken; reason: string };

const TOKEN_ALTERNATION = COMMENT_MARKER_TOKENS.join("|");
const AT_START = new RegExp(`^<!--\\s*(${TOKEN_ALTERNATION}):`, "i");
const AFTER_WHITESPACE = new RegExp(`^\\s+<!--\\s*(${TOKEN_ALTERNATION}):`, "i");

/** The visible note line the IDD grammar allows after a marker: `_..._` on one line, naming IDD. */
export function isIddNote(line: string): boolean {
  return /^_[^\r\n]*_$/.test(line) && /\bIDD\b/i.test(line);
}

function tokenOf(text: string): CommentMarkerToken {
  return text.toLowerCase() as CommentMarkerToken;
}

export function readEnvelope(body: string): EnvelopeRead {
  const start = AT_START.exec(body);
  if (!start) {
    const indented = AFTER_WHITESPACE.exec(body);
    // Four spaces of indent make an indented code block: quoted text, not a misplaced marker.
    if (indented && AFTER_WHITESPACE.test(maskCode(body))) {
      return {
        status: "malformed",
        token: tokenOf(indented[1]!),
        reason: "the marker must be the comment's first bytes, but whitespace precedes it",
      };
    }
    const decoded = decodeEntitiesDeep(body);
    const escaped = decoded !== body ? AT_START.exec(decoded.trimStart()) : null;
    if (escaped) {
      return {
        status: "malformed",
        token: tokenOf(escaped[1]!),
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
