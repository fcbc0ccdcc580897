// Cross-runtime suite for shared/idd: every golden fixture, one call of every public function,
// and the render/parse identity for every marker kind, under Node, Bun and Deno alike.
import assert from "node:assert/strict";
import fc from "fast-check";
import * as idd from "../../shared/idd/index.ts";
import type { Check } from "./harness.ts";
import { markerArbitraries } from "./idd-arbitraries.ts";
import { assertFixture, loadIddFixtures } from "./idd-fixtures.ts";

const TS = "2026-11-01T00:00:00Z";
const claimText = idd.renderClaimedBy({
  agentId: "a",
  claimId: "c1",
  supersedes: null,
  timestamp: TS,
  branch: "issue/1-x",
  note: null,
});
const comment = (body: string, login = "bot", type = "Bot") => ({
  createdAt: TS,
  author: { login, type },
  body,
});
const handoff = {
  oldAgentId: "a",
  oldClaimId: "c1",
  newAgentId: "b",
  newClaimId: "c2",
  branch: "issue/1-x",
  linkedPr: null,
  forcedBy: "m",
  reason: "r",
  timestamp: TS,
  contextScope: "issue-only" as const,
};

/** One direct call per public function of shared/idd, keyed by its exported name. */
const calls: Record<string, () => void> = {
  branchName: () => assert.equal(idd.branchName(5, "The fix"), "issue/5-fix"),
  branchPatternProblem: () =>
    assert.equal(idd.branchPatternProblem("x/{slug}"), "the pattern must contain {number}"),
  renderBranchPattern: () =>
    assert.equal(
      idd.renderBranchPattern({ number: 5, title: "x", pattern: "c/issue-{number}" }),
      "c/issue-5",
    ),
  slugify: () => assert.equal(idd.slugify("Ünïcode — and ASCII"), "n-code-ascii"),
  renderClaimedBy: () =>
    assert.equal(claimText, `<!-- claimed-by: a c1 supersedes: none ${TS} branch: issue/1-x -->`),
  renderUnclaimedBy: () =>
    assert.equal(
      idd.renderUnclaimedBy({ agentId: "a", claimId: "c1", timestamp: TS }),
      `<!-- unclaimed-by: a c1 ${TS} -->\n\n_a: issue claim released — IDD automation marker. Do not edit._`,
    ),
  renderLegacyClaimedBy: () =>
    assert.equal(
      idd.renderLegacyClaimedBy({ agentId: "a", timestamp: TS, branch: "b", note: null }),
      `<!-- claimed-by: a ${TS} branch: b -->`,
    ),
  renderLegacyUnclaimedBy: () =>
    assert.equal(
      idd.renderLegacyUnclaimedBy({ agentId: "a", timestamp: TS, note: null }),
      `<!-- unclaimed-by: a ${TS} -->`,
    ),
  renderActivationNonce: () =>
    assert.match(
      idd.renderActivationNonce({ agentId: "a", claimId: "c1", nonce: "n", timestamp: TS }),
      /^<!-- activation-nonce: a c1 n /,
    ),
  renderForcedHandoff: () =>
    assert.match(
      idd.renderForcedHandoff({ payload: handoff, note: "Approved by m." }),
      /^<!-- forced-handoff: \{"old-agent-id":"a",.*\} -->\n\nApproved by m\.$/,
    ),
  renderCommentMarker: () =>
    assert.equal(
      idd.renderCommentMarker({
        kind: "unclaimed-by-legacy",
        agentId: "a",
        timestamp: TS,
        note: null,
      }),
      `<!-- unclaimed-by: a ${TS} -->`,
    ),
  parseCommentMarker: () =>
    assert.deepEqual(idd.parseCommentMarker(`${claimText} now`), {
      status: "malformed",
      token: "claimed-by",
      reason: "text follows the marker on the same line",
    }),
  readForcedHandoffPayload: () =>
    assert.deepEqual(idd.readForcedHandoffPayload({ ...handoff, "old-agent-id": "z" }), {
      ok: false,
      reason: 'conflicting values for "old-agent-id" and "oldAgentId"',
    }),
  scanBodyMarkers: () =>
    assert.deepEqual(
      idd.scanBodyMarkers("<!-- requires: gpu -->\n`<!-- requires: tpu -->`").markers,
      [{ kind: "requires", capabilities: ["gpu"] }],
    ),
  renderBodyMarker: () =>
    assert.equal(
      idd.renderBodyMarker({ kind: "spinoff-of", parent: 9 }),
      "<!-- spinoff-of: #9 -->",
    ),
  parseLiveStatus: () =>
    assert.deepEqual(idd.parseLiveStatus("<!-- idd-live-status: current -->\nx"), {
      kind: "live-status",
      status: "current",
      details: "x",
    }),
  renderLiveStatus: () =>
    assert.equal(idd.renderLiveStatus({ details: "" }), "<!-- idd-live-status: current -->"),
  parseSuitabilityRejection: () =>
    assert.deepEqual(
      idd.parseSuitabilityRejection("A4.5 suitability gate rejection\noutcome: invalid"),
      {
        kind: "suitability-rejection",
        outcome: "invalid",
        check: null,
      },
    ),
  renderSuitabilityRejection: () =>
    assert.equal(
      idd.renderSuitabilityRejection({ outcome: "unclear", reason: "why" }),
      "A4.5 suitability gate rejection\n\noutcome: unclear\n\nwhy",
    ),
  readMarkers: () =>
    assert.deepEqual(idd.readMarkers("<!-- x-effort: l -->").markers, [
      { kind: "effort", prefix: "x", effort: "L" },
    ]),
  renderMarker: () =>
    assert.equal(
      idd.renderMarker({ kind: "effort", prefix: "x", effort: "L" }),
      "<!-- x-effort: L -->",
    ),
  parseCommentList: () =>
    assert.equal(idd.parseCommentList({ comments: [comment("hi")] }).length, 1),
  resolveClaims: () =>
    assert.equal(
      idd.resolveClaims([comment(claimText)], { now: TS, trusted: [] }).state,
      "unclaimed",
    ),
  liveHolder: () =>
    assert.deepEqual(idd.liveHolder(idd.resolveClaims([comment(claimText)], { now: TS })), {
      agentId: "a",
      claimId: "c1",
      branch: "issue/1-x",
      staleAt: "2026-11-02T00:00:00Z",
    }),
  classifyText: () => assert.equal(idd.classifyText("> 📡 board").role, "heartbeat"),
  evaluateSweep: () =>
    assert.equal(idd.evaluateSweep({ body: "please", comments: [] }).reason, "unanswered-body"),
  containsSuggestionList: () => assert.equal(idd.containsSuggestionList("建议关闭: #3"), true),
  suggestionListItems: () =>
    assert.deepEqual(idd.suggestionListItems("| #4 | close |\n| #2 | close |\nsee #9"), [2, 4]),
  confirmsSuggestion: () => assert.equal(idd.confirmsSuggestion("LGTM", 4), false),
  formatSecond: () => assert.equal(idd.formatSecond(0), "1970-01-01T00:00:00Z"),
  isMarkerTimestamp: () => assert.equal(idd.isMarkerTimestamp("2026-02-29T00:00:00Z"), false),
  truncateToSecond: () => assert.equal(idd.truncateToSecond("2026-11-01T00:00:00.9Z"), TS),
};

const fixtures = await loadIddFixtures();

export const checks: Check[] = [
  ...fixtures.map((fixture) => ({
    name: `fixture ${fixture.area}/${fixture.name}`,
    run: () => assertFixture(fixture),
  })),
  ...Object.entries(calls).map(([name, run]) => ({ name: `public ${name}`, run })),
  {
    name: "every public function of shared/idd is called above",
    run: () => {
      const exported = Object.entries(idd)
        .filter(([, value]) => typeof value === "function")
        .map(([name]) => name)
        .sort();
      assert.deepEqual(exported, Object.keys(calls).sort());
    },
  },
  ...Object.entries(markerArbitraries).map(([kind, arbitrary]) => ({
    name: `render then parse is the identity: ${kind}`,
    run: () =>
      fc.assert(
        fc.property(arbitrary, (marker) => {
          assert.deepEqual(idd.readMarkers(idd.renderMarker(marker)), {
            markers: [marker],
            diagnostics: [],
          });
        }),
        { numRuns: 40 },
      ),
  })),
];
