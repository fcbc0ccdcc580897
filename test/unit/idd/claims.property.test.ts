import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ClaimResolution, resolveClaims } from "../../../shared/idd/claims.ts";
import {
  renderActivationNonce,
  renderClaimedBy,
  renderUnclaimedBy,
} from "../../../shared/idd/comment-markers.ts";
import { renderMarker } from "../../../shared/idd/markers.ts";
import { formatSecond } from "../../../shared/idd/timestamp.ts";
import { markerArbitraries } from "../../runtimes/idd-arbitraries.ts";

const T0 = Date.parse("2026-11-01T00:00:00Z") / 1000;
const AGENTS = ["agent-a", "agent-b", "agent-c"];
const CLAIMS = ["c1", "c2", "c3", "c4"];
const BRANCHES = ["issue/7-x", "issue/7-y"];

/** A random claim-protocol history from a small pool, so ids collide and every rule fires. */
const step = fc.record({
  kind: fc.constantFrom("claim", "claim", "release", "nonce"),
  agentId: fc.constantFrom(...AGENTS),
  claimId: fc.constantFrom(...CLAIMS),
  supersedes: fc.option(fc.constantFrom(...CLAIMS), { nil: null }),
  branch: fc.constantFrom(...BRANCHES),
  gap: fc.integer({ min: 0, max: 30 * 3600 }),
});

type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

function history(steps: Step[], login = "idd-bot") {
  let second = T0;
  return steps.map((s) => {
    second += s.gap;
    const timestamp = formatSecond(second);
    const body =
      s.kind === "claim"
        ? renderClaimedBy({ ...s, timestamp })
        : s.kind === "release"
          ? renderUnclaimedBy({ agentId: s.agentId, claimId: s.claimId, timestamp })
          : renderActivationNonce({
              agentId: s.agentId,
              claimId: s.claimId,
              nonce: s.branch,
              timestamp,
            });
    return { createdAt: timestamp, author: { login, type: "Bot" }, body };
  });
}

const holderOf = (r: ClaimResolution) => ({
  state: r.state,
  freshClaim: r.freshClaim,
  agentId: r.active?.agentId ?? null,
  claimId: r.active?.claimId ?? null,
  branch: r.active?.branch ?? null,
  lastHeartbeatAt: r.active?.lastHeartbeatAt ?? null,
  released: r.lastReleased?.claimId ?? null,
});

const NOW = formatSecond(T0 + 10 * 24 * 3600);
const steps = fc.array(step, { maxLength: 14 });

describe("resolveClaims properties", () => {
  it("is deterministic", () => {
    fc.assert(
      fc.property(steps, (s) => {
        const comments = history(s);
        expect(JSON.stringify(resolveClaims(comments, { now: NOW }))).toBe(
          JSON.stringify(resolveClaims(comments, { now: NOW })),
        );
      }),
    );
  });

  it("ignores every marker an untrusted author posts", () => {
    const anyMarker = fc.oneof(...Object.values(markerArbitraries)).map(renderMarker);
    const noise = fc.array(
      fc.record({ at: fc.integer({ min: 0, max: 10 * 24 * 3600 }), body: anyMarker }),
      { maxLength: 6 },
    );
    fc.assert(
      fc.property(steps, fc.array(step, { maxLength: 6 }), noise, (s, spoof, extra) => {
        const trusted = history(s);
        const untrusted = [
          ...history(spoof, "mallory"),
          ...extra.map((n) => ({
            createdAt: formatSecond(T0 + n.at),
            author: { login: "mallory", type: "User" },
            body: n.body,
          })),
        ];
        const options = { now: NOW, trusted: ["idd-bot"] };
        const clean = resolveClaims(trusted, options);
        const noisy = resolveClaims([...untrusted, ...trusted], options);
        expect(holderOf(noisy)).toEqual(holderOf(clean));
        expect(noisy.evidence.filter((e) => e.author === "mallory").map((e) => e.reason)).toEqual(
          noisy.evidence.filter((e) => e.author === "mallory").map(() => "untrusted-author"),
        );
      }),
    );
  });

  it("does not depend on input order when every comment has its own second", () => {
    fc.assert(
      fc.property(
        fc.array(
          step.map((s) => ({ ...s, gap: Math.max(1, s.gap) })),
          { maxLength: 12 },
        ),
        fc.infiniteStream(fc.nat()),
        (s, random) => {
          const comments = history(s);
          const shuffled = comments
            .map((c) => ({ c, key: random.next().value }))
            .sort((a, b) => a.key - b.key)
            .map(({ c }) => c);
          expect(holderOf(resolveClaims(shuffled, { now: NOW }))).toEqual(
            holderOf(resolveClaims(comments, { now: NOW })),
          );
        },
      ),
    );
  });

  it("gives a same-second race to the smallest claim-id, whatever the comment order", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom(...CLAIMS), { minLength: 2 }), (ids) => {
        const timestamp = formatSecond(T0);
        const comments = ids.map((claimId, i) => ({
          createdAt: timestamp,
          author: { login: "idd-bot" },
          body: renderClaimedBy({
            agentId: AGENTS[i % AGENTS.length]!,
            claimId,
            supersedes: null,
            timestamp,
            branch: "issue/7-x",
          }),
        }));
        const result = resolveClaims(comments, { now: NOW });
        expect(result.active?.claimId).toBe([...ids].sort()[0]);
        expect(result.warnings.filter((w) => w.kind === "already-claimed")).toHaveLength(
          ids.length - 1,
        );
      }),
    );
  });

  it("never reports a claim-id as active after it was released or superseded", () => {
    fc.assert(
      fc.property(steps, (s) => {
        const result = resolveClaims(history(s), { now: NOW });
        const retiredAt = new Map<string, number>();
        for (const e of result.evidence) {
          if (e.outcome === "release" && e.claimId) retiredAt.set(e.claimId, e.index);
        }
        if (result.active?.claimId) expect(retiredAt.has(result.active.claimId)).toBe(false);
      }),
    );
  });
});
