import { scanMaskedBodyMarkers } from "./body-markers.ts";
import type { CommentAuthor } from "./comments.ts";
import { decodeEntitiesDeep } from "./html-entities.ts";
import { maskCode, maskHtmlComments } from "./markdown-code.ts";
import { isSuggestionListProse } from "./suggestion-list.ts";
import { SUITABILITY_REJECTION_PREFIX } from "./suitability-rejection.ts";
import { TERMINAL_TRACE_VALUES } from "./sweep-trace.ts";

/**
 * Sweep comment classification (issue-sweep Step 2). Human vs agent goes by content, not by
 * account (agents and humans often post from one account): a comment is agent-written when it
 * carries a machine marker (decoded from HTML entities first), the Claude Code footer, or a Bot
 * author; a `> 📡` heartbeat is neither human input nor a response; everything else, including a
 * `> 🤖 AI Agent` header without a marker, is human.
 *
 * An agent comment's verdict is decided in a fixed order: code is stripped first; a real unlock
 * condition makes it `terminal` (terminal wins); otherwise a deferral phrase makes it `deferral`;
 * otherwise it is `neutral`.
 */

export type CommentRole = "human" | "agent" | "heartbeat";
export type ResponseVerdict = "terminal" | "deferral" | "neutral";

export interface TextClassification {
  role: CommentRole;
  /** Why the text is not human: `bot-author`, `marker:<name>`, `marker:<name>:html-escaped`, `footer:claude-code`, `suitability-rejection`, `heartbeat`. */
  signals: string[];
  /** For agent text only. */
  verdict: ResponseVerdict | null;
  /** Unlock conditions found (agent text only). */
  terminalSignals: string[];
  /** Deferral phrases found (agent text only), reported even when terminal wins. */
  deferralSignals: string[];
  /** Carries a suggested-batch-action list (see the suggestion-list gate). */
  suggestionList: boolean;
}

/** Marker names (lower-case) that only machines write. */
export const AGENT_MARKER_NAMES: readonly string[] = [
  "sweep-trace",
  "claimed-by",
  "unclaimed-by",
  "activation-nonce",
  "forced-handoff",
  "idd-live-status",
  "spinoff-of",
  "requires",
  "test-sweep-key",
];
const AGENT_MARKER_SUFFIXES = [
  "-autopilot-suitability",
  "-effort",
  "-blocked-by",
  "-roadmap-id",
  "-triage-verdict",
];

const HEARTBEAT = /^\s*>[ \t]*📡/u;
const CLAUDE_FOOTER = /Generated (?:by|with) \[Claude Code\]/;

export const TERMINAL_PATTERNS: ReadonlyArray<readonly [string, RegExp]> = [
  ["pr-link", /\bPR\s*#\d+|\bpull request\s*#\d+|\/pull\/\d+/i],
  [
    "closed",
    /\bclosed as\b|\b(?:closed|closing) (?:this|the) issue\b|\bissue (?:is |has been )?closed\b|已关闭|已合并|已完成|✅\s*(?:done|closed|完成)/i,
  ],
  ["needs-human-confirm", /needs-human-(?:confirm|review)/i],
  ["needs-design", /needs-design/i],
  ["security-sensitive", /security-sensitive/i],
  ["not-verifiable-here", /not-verifiable-here/i],
];

/** The seed's deferral regex, one alternative per entry, in its order. */
export const DEFERRAL_PATTERNS: ReadonlyArray<readonly [string, RegExp]> = [
  ["排队中", /排队中/],
  ["本轮未做", /本轮未做/],
  ["留开放", /留开放/],
  ["不在…范围", /不在.{0,8}范围/],
  ["非单 PR", /非单\s*PR/i],
  ["多 phase…留开放|不在", /多.?phase.*(?:留开放|不在)/i],
  ["candidate-queued", /candidate-queued/i],
  ["queued", /queued/i],
  ["in-progress", /in-progress/i],
  ["稍后", /稍后/],
  ["will do", /\bwill\s+do\b/i],
  ["TODO", /\bTODO\b/],
];

/** Known machine-marker names opening an HTML comment in text whose code is blanked. */
function markerNames(masked: string): string[] {
  const names: string[] = [];
  for (const match of masked.matchAll(/<!--\s*([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:/g)) {
    const name = match[1]!.toLowerCase();
    const known =
      AGENT_MARKER_NAMES.includes(name) || AGENT_MARKER_SUFFIXES.some((s) => name.endsWith(s));
    if (known && !names.includes(name)) names.push(name);
  }
  return names;
}

/** Classifies one comment or issue body. */
export function classifyText(
  body: string,
  author: Pick<CommentAuthor, "type"> | null = null,
): TextClassification {
  const decoded = decodeEntitiesDeep(body);
  // One Markdown parse per distinct text: the decoded text, and the raw text only when escaped.
  const masked = maskCode(decoded);
  const prose = maskHtmlComments(masked);
  const signals: string[] = [];
  let role: CommentRole = "human";
  if (HEARTBEAT.test(decoded)) {
    role = "heartbeat";
    signals.push("heartbeat");
  } else {
    if (author?.type === "Bot") signals.push("bot-author");
    const raw = decoded === body ? null : markerNames(maskCode(body));
    for (const name of markerNames(masked)) {
      signals.push(
        raw === null || raw.includes(name) ? `marker:${name}` : `marker:${name}:html-escaped`,
      );
    }
    if (CLAUDE_FOOTER.test(prose)) signals.push("footer:claude-code");
    if (decoded.trimStart().startsWith(SUITABILITY_REJECTION_PREFIX)) {
      signals.push("suitability-rejection");
    }
    if (signals.length > 0) role = "agent";
  }
  const terminalSignals: string[] = [];
  const deferralSignals: string[] = [];
  let verdict: ResponseVerdict | null = null;
  if (role === "agent") {
    for (const [name, pattern] of TERMINAL_PATTERNS)
      if (pattern.test(prose)) terminalSignals.push(name);
    for (const marker of scanMaskedBodyMarkers(masked).markers) {
      const val = marker.kind === "sweep-trace" ? marker.payload.val : undefined;
      if (val !== undefined && TERMINAL_TRACE_VALUES.includes(val)) {
        const signal = `trace:${val}`;
        if (!terminalSignals.includes(signal)) terminalSignals.push(signal);
      }
    }
    for (const [name, pattern] of DEFERRAL_PATTERNS)
      if (pattern.test(prose)) deferralSignals.push(name);
    verdict =
      terminalSignals.length > 0 ? "terminal" : deferralSignals.length > 0 ? "deferral" : "neutral";
  }
  return {
    role,
    signals,
    verdict,
    terminalSignals,
    deferralSignals,
    suggestionList: isSuggestionListProse(prose),
  };
}
