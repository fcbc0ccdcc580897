import { describe, expect, it } from "vitest";
import {
  grantWaitsForReleases,
  markersFreeToFlush,
  nextOwedWrite,
  type OwedClaim,
  type OwedIssue,
  RELEASE_BEFORE_CLAIM_GAP_MS,
  RELEASES_PAID_PER_GRANT,
  releasesBeforeGrant,
  waitBeforeClaimMs,
} from "../../../shared/claims/owed.ts";
import { STUCK_ECHO_MARGIN_MS, stuckLabelRemovedByHand } from "../../../shared/claims/rules.ts";
import { ConfigSchema, DEFAULT_CONFIG } from "../../../shared/config/schema.ts";

const NOW = 1_000_000;
const claim = (patch: Partial<OwedClaim> = {}): OwedClaim => ({
  claimId: "sy-1",
  number: 1,
  agentId: "a",
  branch: "issue/1-x",
  grantedMs: NOW - 1_000,
  expiresMs: NOW + 60_000,
  endedMs: null,
  marker: "none",
  ...patch,
});
const issue = (patch: Partial<OwedIssue> = {}): OwedIssue => ({
  number: 1,
  processing: false,
  processingMs: null,
  removeReady: false,
  addReady: false,
  stuck: false,
  stuckLabeled: false,
  stuckCommented: false,
  ...patch,
});
const decide = (input: Partial<Parameters<typeof nextOwedWrite>[0]>) =>
  nextOwedWrite({
    nowMs: NOW,
    config: DEFAULT_CONFIG,
    claims: [],
    live: new Set(),
    issues: [],
    labelsOf: () => [],
    ...input,
  });

describe("writes owed for the fleet", () => {
  it("a live claim owes its claimed-by marker, then the processing label", () => {
    expect(decide({ claims: [claim()], live: new Set([1]) }).write).toMatchObject({
      kind: "claimed-marker",
    });
    expect(decide({ live: new Set([1]), issues: [issue()] }).write).toEqual({
      kind: "processing-add",
      number: 1,
    });
  });

  it("a marker owed again (IDD's reading ignored it) is posted again while the claim lives, and released after it ends", () => {
    expect(
      decide({ claims: [claim({ marker: "repost" })], live: new Set([1]) }).write,
    ).toMatchObject({ kind: "claimed-marker", claim: { marker: "repost" } });
    const ended = decide({ claims: [claim({ marker: "repost", endedMs: NOW - 5 })] });
    expect(ended.write).toMatchObject({ kind: "unclaimed-marker" });
    expect(ended.skipMarkers).toEqual([]);
  });

  it("coalesces: a claim that ended before its marker was posted owes nothing, ever", () => {
    const d = decide({ claims: [claim({ endedMs: NOW - 10 })] });
    expect(d.write).toBeNull();
    expect(d.skipMarkers).toEqual(["sy-1"]);
    // Expired without being ended is the same.
    expect(decide({ claims: [claim({ expiresMs: NOW })] }).skipMarkers).toEqual(["sy-1"]);
  });

  it("an ended claim whose marker was posted owes its unclaimed-by, before a newer claim's marker", () => {
    const old = claim({ marker: "posted", endedMs: NOW - 5 });
    const next = claim({ claimId: "sy-2" });
    expect(decide({ claims: [old, next], live: new Set([1]) }).write).toMatchObject({
      kind: "unclaimed-marker",
      claim: { claimId: "sy-1" },
    });
  });

  it("an issue's release goes before a later claim's marker posted again, and before any marker of it when nothing is taken", () => {
    const old = claim({ marker: "posted", endedMs: NOW - 5 });
    const reposted = claim({ claimId: "sy-2", marker: "repost" });
    expect(decide({ claims: [old, reposted], live: new Set([1]) }).write).toMatchObject({
      kind: "unclaimed-marker",
      claim: { claimId: "sy-1" },
    });
    const oldReposted = claim({ marker: "repost", endedMs: NOW - 5 });
    const next = claim({ claimId: "sy-2" });
    expect(
      decide({ claims: markersFreeToFlush([oldReposted, next], new Set()), live: new Set([1]) })
        .write,
    ).toMatchObject({ kind: "unclaimed-marker", claim: { claimId: "sy-1" } });
  });

  it("a release another path is posting holds back every marker of its issue, not only its own", () => {
    const old = claim({ marker: "posted", endedMs: NOW - 5 });
    const next = claim({ claimId: "sy-2", marker: "repost" });
    const elsewhere = claim({ claimId: "sy-3", number: 2 });
    const free = markersFreeToFlush([old, next, elsewhere], new Set(["sy-1"]));
    expect(free.map((c) => c.claimId)).toEqual(["sy-3"]);
    expect(decide({ claims: free, live: new Set([1, 2]) }).write).toMatchObject({
      kind: "claimed-marker",
      claim: { claimId: "sy-3" },
    });
    // Posted (no longer due) or handed back: the issue's markers are free again, release first.
    expect(markersFreeToFlush([next], new Set(["sy-1"]))).toEqual([next]);
    expect(markersFreeToFlush([old, next], new Set())).toEqual([old, next]);
  });

  it("a claimed-by waits a full second after its issue's last release was answered; the rest goes ahead meanwhile", () => {
    const next = claim({ claimId: "sy-2" });
    const elsewhere = claim({ claimId: "sy-3", number: 2 });
    const releasedMs = (n: number) => (n === 1 ? NOW - 400 : null);
    const held = decide({ claims: [next, elsewhere], live: new Set([1, 2]), releasedMs });
    expect(held.write).toMatchObject({ kind: "claimed-marker", claim: { claimId: "sy-3" } });
    expect(held.claimAtMs).toBe(NOW - 400 + RELEASE_BEFORE_CLAIM_GAP_MS);
    // Nothing else owed: no write, and the time the flush comes back for it.
    const alone = decide({ claims: [next], live: new Set([1]), releasedMs });
    expect(alone.write).toBeNull();
    expect(alone.claimAtMs).toBe(NOW + 600);
    expect(alone.skipMarkers).toEqual([]);
    // A marker posted again waits the same way; a release does not wait.
    const reposted = claim({ claimId: "sy-2", marker: "repost" });
    expect(decide({ claims: [reposted], live: new Set([1]), releasedMs }).write).toBeNull();
    const released = claim({ claimId: "sy-0", marker: "posted", endedMs: NOW - 5 });
    expect(decide({ claims: [released], releasedMs }).write).toMatchObject({
      kind: "unclaimed-marker",
    });
    // The gap is over (or no release known): posted, nothing held.
    const over = decide({ claims: [next], live: new Set([1]), releasedMs: () => NOW - 1_000 });
    expect(over.write).toMatchObject({ kind: "claimed-marker", claim: { claimId: "sy-2" } });
    expect(over.claimAtMs).toBeNull();
    expect(decide({ claims: [next], live: new Set([1]) }).claimAtMs).toBeNull();
  });

  it("mirroring off: no markers, no processing label", () => {
    const config = ConfigSchema.parse({ idd: { mirrorClaims: false } });
    const d = decide({ config, claims: [claim()], live: new Set([1]), issues: [issue()] });
    expect(d.write).toBeNull();
    expect(d.skipMarkers).toEqual(["sy-1"]);
  });

  it("the processing label comes off when no claim lives, and is renewed at 80% of its TTL", () => {
    expect(decide({ issues: [issue({ processing: true, processingMs: NOW })] }).write).toEqual({
      kind: "processing-remove",
      number: 1,
    });
    const fresh = decide({
      live: new Set([1]),
      issues: [issue({ processing: true, processingMs: NOW - 60_000 })],
    });
    expect(fresh.write).toBeNull();
    expect(fresh.renewAtMs).toBe(NOW - 60_000 + 24 * 60_000);
    expect(
      decide({
        live: new Set([1]),
        issues: [issue({ processing: true, processingMs: NOW - 24 * 60_000 })],
      }).write,
    ).toEqual({ kind: "processing-renew", number: 1 });
  });

  it("ready label changes that are already in place settle without a write", () => {
    const d = decide({
      issues: [issue({ removeReady: true }), issue({ number: 2, addReady: true })],
      labelsOf: (n) => (n === 2 ? ["agent:ready"] : []),
    });
    expect(d.write).toBeNull();
    expect(d.settled).toEqual([
      { number: 1, flag: "removeReady" },
      { number: 2, flag: "addReady" },
    ]);
    expect(
      decide({ issues: [issue({ removeReady: true })], labelsOf: () => ["agent:ready"] }).write,
    ).toEqual({ kind: "remove-ready", number: 1 });
  });

  it("a dead letter owes its label, then its one comment", () => {
    expect(decide({ issues: [issue({ stuck: true })] }).write).toEqual({
      kind: "stuck-label",
      number: 1,
    });
    expect(decide({ issues: [issue({ stuck: true, stuckLabeled: true })] }).write).toEqual({
      kind: "stuck-comment",
      number: 1,
    });
    expect(
      decide({ issues: [issue({ stuck: true, stuckLabeled: true, stuckCommented: true })] }).write,
    ).toBeNull();
  });
});

describe("releases a synchronous grant posts before its own marker", () => {
  const ids = (owed: { own: OwedClaim[]; others: OwedClaim[] }) => ({
    own: owed.own.map((c) => c.claimId),
    others: owed.others.map((c) => c.claimId),
  });

  it("the issue's ended claims whose marker is on GitHub, oldest fence first, then other issues'; nothing else", () => {
    const ended = { endedMs: NOW - 10 };
    const claims = [
      claim({ claimId: "sy-old", marker: "posted", ...ended }),
      claim({ claimId: "sy-reposted", marker: "repost", ...ended }),
      claim({ claimId: "sy-unposted", marker: "none", ...ended }),
      claim({ claimId: "sy-released", marker: "released", ...ended }),
      claim({ claimId: "sy-live", marker: "posted" }),
      claim({ claimId: "sy-other-issue", number: 2, marker: "posted", ...ended }),
      claim({ claimId: "sy-other-live", number: 4, marker: "posted" }),
    ];
    expect(ids(releasesBeforeGrant(claims, 1, NOW))).toEqual({
      own: ["sy-old", "sy-reposted"],
      others: ["sy-other-issue"],
    });
    expect(ids(releasesBeforeGrant(claims, 3, NOW))).toEqual({
      own: [],
      others: ["sy-old", "sy-reposted", "sy-other-issue"],
    });
  });

  it("pays at most a few other issues' releases, the oldest; the grant waits unless all fit", () => {
    const ended = { endedMs: NOW - 10, marker: "posted" as const };
    const claims = Array.from({ length: RELEASES_PAID_PER_GRANT + 2 }, (_, i) =>
      claim({ claimId: `sy-${i}`, number: 10 + i, ...ended }),
    );
    const owed = releasesBeforeGrant(claims, 1, NOW);
    expect(owed.own).toEqual([]);
    expect(owed.others.map((c) => c.claimId)).toEqual(
      claims.slice(0, RELEASES_PAID_PER_GRANT).map((c) => c.claimId),
    );
    // Room for the releases but not the marker, or for less: the grant waits.
    expect(grantWaitsForReleases(RELEASES_PAID_PER_GRANT, RELEASES_PAID_PER_GRANT)).toBe(true);
    expect(grantWaitsForReleases(0, 0)).toBe(true);
    expect(grantWaitsForReleases(RELEASES_PAID_PER_GRANT + 1, RELEASES_PAID_PER_GRANT)).toBe(false);
    expect(grantWaitsForReleases(1, 0)).toBe(false);
  });

  it("the grant's marker waits a full second after the last release was answered", () => {
    expect(waitBeforeClaimMs(null, NOW)).toBe(0);
    expect(waitBeforeClaimMs(NOW, NOW)).toBe(RELEASE_BEFORE_CLAIM_GAP_MS);
    expect(waitBeforeClaimMs(NOW - 400, NOW)).toBe(600);
    expect(waitBeforeClaimMs(NOW - 5_000, NOW)).toBe(0);
  });
});

describe("the stuck label removed by hand", () => {
  const base = {
    labels: [] as string[],
    stuckLabel: "agent:stuck",
    labeledMs: 5_000_500,
    updatedMs: 5_000_000,
    unlabeledMs: null as number | null,
  };
  it("not while it is on; not for echoes of switchyard's own writes of the same moment", () => {
    expect(stuckLabelRemovedByHand({ ...base, labels: ["agent:stuck"], unlabeledMs: 9e9 })).toBe(
      false,
    );
    expect(stuckLabelRemovedByHand(base)).toBe(false);
    expect(
      stuckLabelRemovedByHand({ ...base, updatedMs: base.labeledMs + STUCK_ECHO_MARGIN_MS }),
    ).toBe(false);
  });
  it("yes for an unlabeled event from that second on, or a state GitHub reported well after", () => {
    expect(stuckLabelRemovedByHand({ ...base, unlabeledMs: 5_000_000 })).toBe(true);
    expect(stuckLabelRemovedByHand({ ...base, unlabeledMs: 4_999_000 })).toBe(false);
    expect(
      stuckLabelRemovedByHand({ ...base, updatedMs: base.labeledMs + STUCK_ECHO_MARGIN_MS + 1 }),
    ).toBe(true);
  });
});
