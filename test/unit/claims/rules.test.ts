import { describe, expect, it } from "vitest";
import {
  claimBranch,
  claimIdFrom,
  claimTtlMs,
  fenceIsCurrent,
  type GrantInput,
  grantDecision,
  htmlBaseFor,
  isLive,
  isStuckAfter,
  processingRenewalDueMs,
  stuckComment,
} from "../../../shared/claims/rules.ts";
import { fencedWriteProblem } from "../../../shared/claims/writes.ts";
import { ConfigSchema, DEFAULT_CONFIG } from "../../../shared/config/schema.ts";
import type { IssueFacts } from "../../../shared/graph/analyze.ts";
import { parseCommentMarker } from "../../../shared/idd/comment-markers.ts";

const facts = (patch: Partial<IssueFacts> = {}): IssueFacts => ({
  number: 1,
  openBlockers: [],
  childCount: 0,
  openChildren: 0,
  held: false,
  stuck: false,
  epicManaged: false,
  freshLock: false,
  stance: "none",
  ready: true,
  ...patch,
});

const input = (patch: Partial<GrantInput> = {}): GrantInput => ({
  state: "open",
  facts: facts(),
  stuck: false,
  live: null,
  idd: null,
  agentLive: 0,
  repoLive: 0,
  limits: { maxPerAgent: null, maxActive: null },
  ...patch,
});

describe("grantDecision", () => {
  it("grants an open, unblocked, unheld issue", () => {
    expect(grantDecision(input())).toEqual({ ok: true });
  });

  it("names the first reason that applies", () => {
    const cases: Array<[Partial<GrantInput>, string]> = [
      [{ state: undefined }, "not-found"],
      [{ state: "closed" }, "closed"],
      [{ live: { agentId: "a", expiresAt: "2026-12-01T00:30:00Z" } }, "held"],
      [{ idd: { agentId: "idd", staleAt: "2026-12-02T00:00:00Z" } }, "held"],
      [{ facts: facts({ epicManaged: true, held: true }) }, "epic"],
      [{ facts: facts({ held: true }) }, "hold"],
      [{ stuck: true }, "stuck"],
      [{ facts: facts({ stuck: true }) }, "stuck"],
      [{ facts: facts({ stance: "waiting" }) }, "hold"],
      [{ facts: facts({ freshLock: true }) }, "hold"],
      [{ facts: facts({ openBlockers: [2] }) }, "blocked"],
      [{ facts: facts({ openChildren: 1 }) }, "blocked"],
      [{ agentLive: 2, limits: { maxPerAgent: 2, maxActive: null } }, "agent-limit"],
      [{ repoLive: 5, limits: { maxPerAgent: null, maxActive: 5 } }, "repo-limit"],
    ];
    for (const [patch, reason] of cases) {
      expect([patch, (grantDecision(input(patch)) as { reason: string }).reason]).toEqual([
        patch,
        reason,
      ]);
    }
    expect(
      grantDecision(input({ idd: { agentId: "x", staleAt: "2026-12-02T00:00:00Z" } })),
    ).toMatchObject({
      holder: { agentId: "x", source: "idd" },
    });
  });

  it("a reply may be answered on a held, waiting, stuck or parent issue; epic, processing-locked, blocked, held by another and the limits still refuse", () => {
    const reply = (patch: Partial<GrantInput>) => grantDecision(input({ ...patch, kind: "reply" }));
    for (const patch of [
      { facts: facts({ held: true }) },
      { facts: facts({ stance: "waiting" }) },
      { stuck: true },
      { facts: facts({ stuck: true }) },
      { facts: facts({ openChildren: 2 }) },
    ] satisfies Array<Partial<GrantInput>>) {
      expect([patch, reply(patch)]).toEqual([patch, { ok: true }]);
      expect(grantDecision(input(patch)).ok).toBe(false);
    }
    const refused: Array<[Partial<GrantInput>, string]> = [
      [{ state: "closed" }, "closed"],
      [{ live: { agentId: "a", expiresAt: "2026-12-01T00:30:00Z" } }, "held"],
      [{ facts: facts({ epicManaged: true }) }, "epic"],
      [{ facts: facts({ freshLock: true }) }, "hold"],
      [{ facts: facts({ openBlockers: [2] }) }, "blocked"],
      [{ agentLive: 2, limits: { maxPerAgent: 2, maxActive: null } }, "agent-limit"],
      [{ repoLive: 5, limits: { maxPerAgent: null, maxActive: 5 } }, "repo-limit"],
    ];
    for (const [patch, reason] of refused) {
      expect([patch, (reply(patch) as { reason: string }).reason]).toEqual([patch, reason]);
    }
  });
});

describe("fences and lifetimes", () => {
  const claim = {
    claimId: "sy-1",
    number: 7,
    agentId: "a",
    fence: 12,
    expiresMs: 1_000,
    endedMs: null,
  };
  it("a fence is current only for its claim, its issue, before expiry, while not ended", () => {
    expect(fenceIsCurrent(claim, { claimId: "sy-1", fence: 12 }, 7, 999)).toBe(true);
    expect(fenceIsCurrent(claim, { claimId: "sy-1", fence: 12 }, 7, 1_000)).toBe(false);
    expect(fenceIsCurrent(claim, { claimId: "sy-1", fence: 11 }, 7, 0)).toBe(false);
    expect(fenceIsCurrent(claim, { claimId: "sy-2", fence: 12 }, 7, 0)).toBe(false);
    expect(fenceIsCurrent(claim, { claimId: "sy-1", fence: 12 }, 8, 0)).toBe(false);
    expect(fenceIsCurrent({ ...claim, endedMs: 5 }, { claimId: "sy-1", fence: 12 }, 7, 0)).toBe(
      false,
    );
    expect(fenceIsCurrent(undefined, { claimId: "sy-1", fence: 12 }, 7, 0)).toBe(false);
    expect(isLive(claim, 999)).toBe(true);
  });

  it("TTL: the request's within 60 s to 24 h, else claims.ttlMinutes", () => {
    expect(claimTtlMs(undefined, DEFAULT_CONFIG)).toBe(30 * 60_000);
    expect(claimTtlMs(90, DEFAULT_CONFIG)).toBe(90_000);
    expect(claimTtlMs(5, DEFAULT_CONFIG)).toBe(60_000);
    expect(claimTtlMs(10 ** 9, DEFAULT_CONFIG)).toBe(86_400_000);
    expect(ConfigSchema.safeParse({ claims: { ttlMinutes: 0.5 } }).success).toBe(false);
    expect(ConfigSchema.safeParse({ claims: { ttlMinutes: 1441 } }).success).toBe(false);
  });

  it("stuck after claims.maxAttempts; the processing label renews at 80% of its TTL", () => {
    expect(isStuckAfter(2, DEFAULT_CONFIG)).toBe(false);
    expect(isStuckAfter(3, DEFAULT_CONFIG)).toBe(true);
    expect(processingRenewalDueMs(0, DEFAULT_CONFIG)).toBe(24 * 60_000);
  });

  it("claim ids are marker tokens a claimed-by marker can carry", () => {
    const id = claimIdFrom(new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7, 8, 255]));
    expect(id).toBe("sy-00010203040506070 8ff".replace(" ", ""));
    const body = `<!-- claimed-by: agent-a ${id} supersedes: none 2026-12-01T00:00:00Z branch: issue/1-x -->`;
    expect(parseCommentMarker(body)).toMatchObject({ status: "ok", marker: { claimId: id } });
  });
});

describe("branches, URLs, the dead-letter comment, fenced write rules", () => {
  it("branch from claims.branchPattern; a pattern IDD refuses falls back to the default", () => {
    expect(claimBranch(DEFAULT_CONFIG, 12, "Add the OAuth login flow")).toBe(
      "issue/12-add-oauth-login-flow",
    );
    const phased = ConfigSchema.parse({ claims: { branchPattern: "agent/{number}/p{phase}" } });
    expect(claimBranch(phased, 3, "x")).toBe("agent/3/p1");
    const bad = ConfigSchema.parse({ claims: { branchPattern: "no-number-{slug}" } });
    expect(claimBranch(bad, 3, "Fix it")).toBe("issue/3-fix-it");
  });

  it("GitHub's web address for an API URL", () => {
    expect(htmlBaseFor("https://api.github.com")).toBe("https://github.com");
    expect(htmlBaseFor("https://ghe.example.com/api/v3/")).toBe("https://ghe.example.com");
    expect(htmlBaseFor("http://127.0.0.1:8790")).toBe("http://127.0.0.1:8790");
  });

  it("the stuck comment lists every attempt and how to undo it", () => {
    const text = stuckComment(
      [
        { agentId: "a", outcome: "failed", note: "exit 1 | oops", at: "2026-12-01T00:00:00Z" },
        { agentId: "b", outcome: "expired", note: null, at: "2026-12-01T01:00:00Z" },
      ],
      "agent:stuck",
    );
    expect(text).toContain("after 2 claims ended without `done`");
    expect(text).toContain("| 2026-12-01T00:00:00Z | `a` | failed | exit 1 oops |");
    expect(text).toContain("| 2026-12-01T01:00:00Z | `b` | expired |  |");
    expect(text).toContain("Remove the `agent:stuck` label");
  });

  it("owned labels are refused; a held issue cannot be closed", () => {
    const labels = DEFAULT_CONFIG.labels;
    expect(
      fencedWriteProblem({ kind: "labels", add: ["bug"], remove: [] }, { labels, issueLabels: [] }),
    ).toBeNull();
    expect(
      fencedWriteProblem(
        { kind: "labels", add: [], remove: ["agent:processing"] },
        { labels, issueLabels: [] },
      )?.status,
    ).toBe(400);
    const none = { labels, issueLabels: [] };
    expect(
      fencedWriteProblem({ kind: "labels", add: ["Agent:Ready"], remove: [] }, none)?.status,
    ).toBe(400);
    expect(
      fencedWriteProblem({ kind: "labels", add: [], remove: ["Agent:Hold"] }, none)?.status,
    ).toBe(400);
    const marker = "<!-- unclaimed-by: someone sy-1 2026-12-01T00:00:00Z -->";
    expect(fencedWriteProblem({ kind: "comment", body: marker }, none)?.status).toBe(400);
    expect(fencedWriteProblem({ kind: "comment", body: "done: #12" }, none)).toBeNull();
    expect(
      fencedWriteProblem({ kind: "close" }, { labels, issueLabels: ["AGENT:HOLD"] })?.status,
    ).toBe(409);
    expect(
      fencedWriteProblem({ kind: "close" }, { labels, issueLabels: ["agent:hold"] }),
    ).toMatchObject({
      status: 409,
      body: { reason: "hold" },
    });
  });
});
