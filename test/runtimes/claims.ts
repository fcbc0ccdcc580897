// shared/claims and shared/queue on Node, Bun and Deno: grant decisions, fences, the writes the
// fleet owes, the dead letter's removal by hand, queue sections, order, impact and availability.
import assert from "node:assert/strict";
import { nextOwedWrite } from "../../shared/claims/owed.ts";
import {
  claimBranch,
  claimIdFrom,
  claimTtlMs,
  fenceIsCurrent,
  grantDecision,
  stuckComment,
  stuckLabelRemovedByHand,
} from "../../shared/claims/rules.ts";
import { fencedWriteProblem } from "../../shared/claims/writes.ts";
import { DEFAULT_CONFIG } from "../../shared/config/schema.ts";
import { analyzeSnapshot } from "../../shared/graph/analyze.ts";
import { permissionGrantsWrite, trustedMarkerAuthors } from "../../shared/idd/trust.ts";
import { impactScores } from "../../shared/queue/impact.ts";
import { orderQueue } from "../../shared/queue/order.ts";
import {
  capabilitySet,
  hasCapabilities,
  isAvailable,
  queueItems,
} from "../../shared/queue/queue.ts";
import type { Check } from "./harness.ts";

const issue = (number: number, extra: Record<string, unknown> = {}) => ({
  number,
  title: `#${number}`,
  state: "open" as const,
  stateReason: null,
  createdAt: "2026-11-01T00:00:00Z",
  updatedAt: "2026-11-01T00:00:00Z",
  closedAt: null,
  labels: [] as string[],
  ...extra,
});

export const checks: Check[] = [
  {
    name: "grant decisions, fences, TTLs, branches, claim ids",
    run() {
      const base = {
        state: "open" as const,
        facts: undefined,
        stuck: false,
        live: null,
        idd: null,
        agentLive: 0,
        repoLive: 0,
        limits: { maxPerAgent: 1, maxActive: null },
      };
      assert.deepEqual(grantDecision(base), { ok: true });
      assert.equal(
        (grantDecision({ ...base, agentLive: 1 }) as { reason: string }).reason,
        "agent-limit",
      );
      assert.equal(
        (grantDecision({ ...base, state: "closed" }) as { reason: string }).reason,
        "closed",
      );
      const claim = {
        claimId: "sy-1",
        number: 2,
        agentId: "a",
        fence: 4,
        expiresMs: 10,
        endedMs: null,
      };
      assert.equal(fenceIsCurrent(claim, { claimId: "sy-1", fence: 4 }, 2, 9), true);
      assert.equal(fenceIsCurrent(claim, { claimId: "sy-1", fence: 4 }, 2, 10), false);
      assert.equal(claimTtlMs(undefined, DEFAULT_CONFIG), 1_800_000);
      assert.equal(
        claimBranch(DEFAULT_CONFIG, 12, "Add the OAuth login flow"),
        "issue/12-add-oauth-login-flow",
      );
      assert.match(claimIdFrom(crypto.getRandomValues(new Uint8Array(10))), /^sy-[0-9a-f]{20}$/);
      assert.match(
        stuckComment([{ agentId: "a", outcome: "failed", note: null, at: "t" }], "agent:stuck"),
        /`agent:stuck`/,
      );
    },
  },
  {
    name: "owed fleet writes, the dead letter removed by hand, fenced write rules, marker trust",
    run() {
      const d = nextOwedWrite({
        nowMs: 1_000,
        config: DEFAULT_CONFIG,
        claims: [
          {
            claimId: "sy-1",
            number: 1,
            agentId: "a",
            branch: "b",
            grantedMs: 0,
            expiresMs: 900,
            endedMs: null,
            marker: "none",
          },
        ],
        live: new Set(),
        issues: [],
        labelsOf: () => [],
      });
      assert.deepEqual([d.write, d.skipMarkers], [null, ["sy-1"]]);
      assert.equal(
        stuckLabelRemovedByHand({
          labels: [],
          stuckLabel: "agent:stuck",
          labeledMs: 5_500,
          updatedMs: 5_000,
          unlabeledMs: 5_000,
        }),
        true,
      );
      const problem = fencedWriteProblem(
        { kind: "labels", add: ["AGENT:READY"], remove: [] },
        { labels: DEFAULT_CONFIG.labels, issueLabels: [] },
      );
      assert.equal(problem?.status, 400);
      const trust = trustedMarkerAuthors(
        [{ login: "x", type: "User", association: "COLLABORATOR", ownMarker: false }],
        { configured: null, known: () => undefined },
      );
      assert.deepEqual(trust, { trusted: ["x"], unknown: [] });
      assert.equal(permissionGrantsWrite("maintain"), true);
    },
  },
  {
    name: "queue sections, order, impact, capabilities and availability",
    run() {
      const analysis = analyzeSnapshot({
        repo: "o/r",
        now: "2026-12-01T00:00:00Z",
        issues: [
          issue(1, { labels: ["agent:ready"] }),
          issue(2, { labels: ["agent:ready"], body: "<!-- requires: gpu -->" }),
          issue(3, { blockedBy: [1] }),
        ],
      });
      const impact = impactScores(analysis);
      assert.deepEqual(Object.fromEntries(impact), { 1: 1, 2: 0, 3: 0 });
      const items = queueItems(analysis, {
        reasons: new Map(),
        requires: (n) => (n === 2 ? ["gpu"] : []),
        impact,
      });
      assert.deepEqual(
        orderQueue(items, "impact").map((i) => i.number),
        [1, 2],
      );
      assert.equal(hasCapabilities(items[1]!, capabilitySet("GPU")), true);
      assert.equal(hasCapabilities(items[1]!, capabilitySet(undefined)), false);
      assert.equal(
        isAvailable(1, { live: new Set([1]), parked: new Set(), idd: new Map(), nowMs: 0 }),
        false,
      );
    },
  },
];
