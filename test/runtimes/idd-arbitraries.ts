// fast-check arbitraries for every IDD marker kind, shared by the vitest property tests and the
// cross-runtime suite.
import fc from "fast-check";
import { EFFORTS, TRIAGE_VERDICTS } from "../../shared/idd/body-markers.ts";
import { FORCED_HANDOFF_SCOPES } from "../../shared/idd/forced-handoff.ts";
import type { Marker } from "../../shared/idd/markers.ts";
import { SUITABILITY_OUTCOMES } from "../../shared/idd/suitability-rejection.ts";
import { formatSecond } from "../../shared/idd/timestamp.ts";
import { isBranchToken, isMarkerToken } from "../../shared/idd/tokens.ts";

/** fc.record with ordinary objects (node:assert's deepStrictEqual compares prototypes). */
const record = <T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<T> =>
  fc.record(model, { noNullPrototype: true }) as fc.Arbitrary<T>;

const chars = (alphabet: string[], min: number, max: number) =>
  fc.array(fc.constantFrom(...alphabet), { minLength: min, maxLength: max }).map((a) => a.join(""));

// Printable ASCII without space, plus letters from other scripts and an emoji: token material.
const TOKEN_CHARS = [
  ...Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i)),
  "é",
  "ß",
  "日",
  "Ж",
  "🚀",
];
const WORD = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"];
const PROSE_CHARS = [...WORD, " ", ".", ",", ":", "-", "(", ")", "'", "—", "é", "日"];

export const token = chars(TOKEN_CHARS, 1, 16).filter(isMarkerToken);
export const claimId = token.filter((t) => t !== "none");
export const branch = token.filter(isBranchToken);
export const timestamp = fc.integer({ min: 0, max: 253402300799 }).map(formatSecond);
const proseText = (max: number) => chars(PROSE_CHARS, 0, max);
export const note = fc.option(
  fc.tuple(proseText(12), proseText(12)).map(([a, b]) => `_${a} IDD ${b}_`),
  { nil: null },
);
/** What follows a forced-handoff marker: an IDD note line, or lines of consent prose. */
export const consent = fc.oneof(
  fc.tuple(token, proseText(12)).map(([by, a]) => `_${by}: forced claim handoff ${a} IDD_`),
  fc
    .array(proseText(30), { minLength: 1, maxLength: 5 })
    .map((lines) => lines.join("\n").trim())
    .filter((text) => text !== ""),
);
const word = (max: number) => chars(WORD, 1, max);
const prefix = fc
  .tuple(word(6), fc.option(word(6), { nil: null }))
  .map(([a, b]) => (b === null ? a : `${a}-${b}`));
const roadmapId = fc
  .tuple(word(8), fc.constantFrom("", "-2", ".v1", "/x", "#3"))
  .map(([a, b]) => a + b);
const trimmedText = chars(PROSE_CHARS, 1, 24)
  .map((s) => s.trim())
  .filter((s) => s !== "");
const jsonString = fc.string({ unit: "grapheme", maxLength: 16 }).filter((s) => !s.includes("-->"));

const handoffPayload = fc
  .record({
    oldAgentId: token,
    oldClaimId: claimId,
    newAgentId: token,
    newClaimId: claimId,
    branch,
    forcedBy: token,
    reason: trimmedText,
    timestamp,
    contextScope: fc.constantFrom(...FORCED_HANDOFF_SCOPES),
    pr: fc.oneof(
      fc.integer({ min: 1, max: 99999 }).map(String),
      word(10).map((w) => `https://github.com/o/r/pull/${w}`),
    ),
  })
  .filter((p) => p.oldClaimId !== p.newClaimId)
  .map(({ pr, ...p }) => ({ ...p, linkedPr: p.contextScope === "issue-plus-pr" ? pr : null }));

/** One arbitrary per marker kind, keyed by kind. */
export const markerArbitraries: Record<Marker["kind"], fc.Arbitrary<Marker>> = {
  "claimed-by": record({
    kind: fc.constant("claimed-by" as const),
    agentId: token,
    claimId,
    supersedes: fc.option(claimId, { nil: null }),
    timestamp,
    branch,
    note,
  }),
  "claimed-by-legacy": record({
    kind: fc.constant("claimed-by-legacy" as const),
    agentId: token,
    timestamp,
    branch,
    note,
  }),
  "unclaimed-by": record({
    kind: fc.constant("unclaimed-by" as const),
    agentId: token,
    claimId,
    timestamp,
    note,
  }),
  "unclaimed-by-legacy": record({
    kind: fc.constant("unclaimed-by-legacy" as const),
    agentId: token,
    timestamp,
    note,
  }),
  "activation-nonce": record({
    kind: fc.constant("activation-nonce" as const),
    agentId: token,
    claimId,
    nonce: token,
    timestamp,
    note,
  }),
  "forced-handoff": record({
    kind: fc.constant("forced-handoff" as const),
    payload: handoffPayload,
    note: consent,
  }),
  "live-status": record({
    kind: fc.constant("live-status" as const),
    status: fc.constantFrom("current", "superseded", "v2"),
    details: fc
      .array(proseText(30), { maxLength: 4 })
      .map((lines) => lines.join("\n"))
      .filter((d) => d === "" || !d.startsWith("\n") || d.length > 0),
  }),
  "suitability-rejection": record({
    kind: fc.constant("suitability-rejection" as const),
    outcome: fc.constantFrom(...SUITABILITY_OUTCOMES),
    check: fc.option(
      fc
        .tuple(fc.integer({ min: 1, max: 7 }), chars([...WORD, " ", "/", "-"], 1, 20))
        .map(([n, name]) => [n, name.trim()] as const)
        .filter(([, name]) => name !== "")
        .map(([n, name]) => `Check ${n} (${name})`),
      { nil: null },
    ),
  }),
  "autopilot-suitability": record({
    kind: fc.constant("autopilot-suitability" as const),
    prefix,
    score: fc.integer({ min: 1, max: 5 }),
  }),
  effort: record({
    kind: fc.constant("effort" as const),
    prefix,
    effort: fc.constantFrom(...EFFORTS),
  }),
  "blocked-by": record({ kind: fc.constant("blocked-by" as const), prefix, roadmapId }),
  "roadmap-id": record({ kind: fc.constant("roadmap-id" as const), prefix, roadmapId }),
  "triage-verdict": record({
    kind: fc.constant("triage-verdict" as const),
    prefix,
    outcome: fc.constantFrom(...TRIAGE_VERDICTS),
  }),
  "spinoff-of": record({
    kind: fc.constant("spinoff-of" as const),
    parent: fc.oneof(
      fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      fc
        .tuple(word(10), word(10), fc.integer({ min: 1, max: 99999 }))
        .map(([o, r, n]) => `${o}/${r}#${n}`),
    ),
  }),
  requires: record({
    kind: fc.constant("requires" as const),
    capabilities: fc.array(
      fc.tuple(word(8), fc.constantFrom("", "-ios", ".gpu", "_x")).map(([a, b]) => a + b),
      { minLength: 1, maxLength: 4 },
    ),
  }),
  "sweep-trace": record({
    kind: fc.constant("sweep-trace" as const),
    payload: fc.record(
      {
        ver: fc.integer({ min: 1, max: 9 }),
        issue: fc.integer({ min: 1, max: 99999 }),
        pr: fc.integer({ min: 1, max: 99999 }),
        gate: jsonString,
        val: jsonString,
        run: jsonString,
        runner: jsonString,
        skills: jsonString,
        extra: fc.oneof(jsonString, fc.boolean(), fc.integer()),
      },
      { requiredKeys: ["ver"], noNullPrototype: true },
    ),
  }),
};
