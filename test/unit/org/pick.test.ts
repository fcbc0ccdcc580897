// The owner's pick over pushed heads (shared/org/pick.ts): fairness across repositories per
// agent, the other orders, caller filters, late pushes, and the bounded fallback.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type HeadItem,
  itemKind,
  nextHeadVersion,
  type RepoHead,
  supersedes,
  takenAs,
} from "../../../shared/org/head.ts";
import {
  type Candidate,
  fallbackRepos,
  ORG_FALLBACK_REPOS,
  type OrgCaller,
  orgCandidates,
  turnAfter,
} from "../../../shared/org/pick.ts";
import { liveTurn, TURN_TTL_MS, type Turn } from "../../../shared/org/turns.ts";

const item = (number: number, extra: Partial<HeadItem> = {}): HeadItem => ({
  number,
  title: `Issue ${number}`,
  kind: "kick",
  section: 2,
  reason: "labeled agent:ready",
  requires: [],
  impact: 0,
  priority: null,
  attempts: 0,
  url: `https://example.test/${number}`,
  ...extra,
});

const head = (repoId: number, items: HeadItem[], extra: Partial<RepoHead> = {}): RepoHead => ({
  repoId,
  fullName: `acme/r${repoId}`,
  installationId: 7,
  version: 1,
  status: "active",
  items,
  total: items.length,
  claims: [],
  ...extra,
});

const anyone: OrgCaller = {
  capabilities: new Set(),
  kinds: new Set(["kick", "rollup", "ready"]),
  repos: null,
};
const NOW = 1_800_000_000_000;
const picks = (c: Candidate[]) => c.map((x) => `${x.repoId}#${x.item.number}`);

describe("org pick", () => {
  it("fair: repositories take turns after the agent's last one, each in its own order", () => {
    const heads = [head(3, [item(9), item(2)]), head(1, [item(5), item(6)]), head(2, [item(1)])];
    expect(picks(orgCandidates(heads, anyone, "fair", null, NOW))).toEqual([
      "1#5",
      "2#1",
      "3#9",
      "1#6",
      "3#2",
    ]);
    const turn = turnAfter("a", 2, NOW - 1000);
    expect(picks(orgCandidates(heads, anyone, "fair", turn, NOW)).slice(0, 3)).toEqual([
      "3#9",
      "1#5",
      "2#1",
    ]);
    // An outlived turn is forgotten: the agent starts again at the first repository.
    const old = turnAfter("a", 2, NOW - TURN_TTL_MS - 1);
    expect(liveTurn(old, NOW)).toBeNull();
    expect(picks(orgCandidates(heads, anyone, "fair", old, NOW))[0]).toBe("1#5");
  });

  it("skips repositories without work the caller may claim, and honours its scope", () => {
    const heads = [
      head(1, [item(1, { requires: ["gpu"] })]),
      head(2, [item(2, { kind: "reply", section: 1 })]),
      head(3, [item(3)], { status: "removed" }),
      head(4, [item(4)]),
      head(5, [item(5)]),
    ];
    expect(picks(orgCandidates(heads, anyone, "fair", null, NOW))).toEqual(["4#4", "5#5"]);
    const gpu = { ...anyone, capabilities: new Set(["gpu"]), repos: new Set([1, 5]) };
    expect(picks(orgCandidates(heads, gpu, "fair", null, NOW))).toEqual(["1#1", "5#5"]);
    const replies = { ...anyone, kinds: new Set(["reply" as const]) };
    expect(picks(orgCandidates(heads, replies, "fair", null, NOW))).toEqual(["2#2"]);
  });

  it("number interleaves by number; impact and priority rank across repositories", () => {
    const heads = [
      head(1, [item(7, { impact: 1 }), item(3, { impact: 5, priority: 2 })]),
      head(2, [item(4, { impact: 9 }), item(8, { impact: 0, priority: 1 })]),
    ];
    expect(picks(orgCandidates(heads, anyone, "number", null, NOW))).toEqual([
      "1#3",
      "2#4",
      "1#7",
      "2#8",
    ]);
    expect(picks(orgCandidates(heads, anyone, "impact", null, NOW))).toEqual([
      "2#4",
      "1#3",
      "1#7",
      "2#8",
    ]);
    expect(picks(orgCandidates(heads, anyone, "priority", null, NOW))).toEqual([
      "2#8",
      "1#3",
      "2#4",
      "1#7",
    ]);
  });

  it("asks at most a few repositories that hold more than they pushed, in turn order", () => {
    const heads = [1, 2, 3, 4, 5].map((id) => head(id, [], { total: id === 2 ? 0 : 40 }));
    const asked = fallbackRepos(heads, anyone, turnAfter("a", 3, NOW), NOW);
    expect(asked.map((h) => h.repoId)).toEqual([4, 5, 1]);
    expect(asked.length).toBe(ORG_FALLBACK_REPOS);
    expect(fallbackRepos(heads, anyone, null, NOW, new Set([1])).map((h) => h.repoId)).toEqual([
      3, 4, 5,
    ]);
  });

  it("a late push never replaces a newer one; versions only grow", () => {
    expect(supersedes(null, { version: 1 })).toBe(true);
    expect(supersedes({ version: 5 }, { version: 5 })).toBe(false);
    expect(supersedes({ version: 5 }, { version: 4 })).toBe(false);
    expect(supersedes({ version: 5 }, { version: 6 })).toBe(true);
    expect(nextHeadVersion(0, NOW)).toBe(NOW);
    expect(nextHeadVersion(NOW + 10, NOW)).toBe(NOW + 11);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 41 }), { maxLength: 30 }), (clock) => {
        let last = 0;
        for (const t of clock) {
          const next = nextHeadVersion(last, t);
          if (next <= last) return false;
          last = next;
        }
        return true;
      }),
    );
  });

  it("names each item's kind", () => {
    expect(itemKind({ section: 1, reason: "reply" })).toBe("reply");
    expect(itemKind({ section: 2, reason: "rollup: every sub-issue is closed (#2)" })).toBe(
      "rollup",
    );
    expect(itemKind({ section: 2, reason: "#3 closed" })).toBe("kick");
    expect(itemKind({ section: 3, reason: "mode all: ready" })).toBe("ready");
  });

  it("matches kinds as the repository's queue does: by kind, or `reply` by the reply carried", () => {
    const input = { reason: "unanswered-human-comment", url: "u", author: "a", at: "t" } as const;
    const work = new Set(["kick", "rollup", "ready"] as const);
    const replies = new Set(["reply"] as const);
    const both = new Set(["kick", "reply"] as const);
    // Work carrying a reply: work for a work loop, its reply for a sweep.
    const carrying = item(1, { work: true, reply: input });
    expect([takenAs(carrying, work), takenAs(carrying, replies), takenAs(carrying, both)]).toEqual([
      "work",
      "reply",
      "work",
    ]);
    // Its work held back (a red breaker, a dead letter): pushed for its reply alone.
    const held = item(2, { work: false, reply: input });
    expect([takenAs(held, work), takenAs(held, replies)]).toEqual([null, "reply"]);
    // A reply item, also as pushed before `reply` was (kind alone).
    const only = item(3, { kind: "reply", section: 1, work: false, reply: input });
    const legacy = item(4, { kind: "reply", section: 1 });
    expect([takenAs(only, work), takenAs(only, replies), takenAs(legacy, replies)]).toEqual([
      null,
      "reply",
      "reply",
    ]);
    // Plain work pushed before `work` was: work.
    expect([takenAs(item(5), work), takenAs(item(5), replies)]).toEqual(["work", null]);
    const caller = (kinds: ReadonlySet<"kick" | "rollup" | "ready" | "reply">): OrgCaller => ({
      capabilities: new Set(),
      kinds,
      repos: null,
    });
    const heads = [head(1, [carrying, held, only, item(5)])];
    const numbers = (c: OrgCaller) =>
      orgCandidates(heads, c, "number", null, 0).map((x) => x.item.number);
    expect(numbers(caller(work))).toEqual([1, 5]);
    expect(numbers(caller(replies))).toEqual([1, 2, 3]);
  });
});

describe("fairness property", () => {
  // k repositories, each holding work this agent may claim (and some it may not); other agents
  // take items in between. Any 2k consecutive claim-nexts by the agent touch every repository.
  it("any 2k consecutive claim-nexts by one agent touch each of the k repositories with work", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.integer({ min: 0, max: 1_000 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.nat(20)), { maxLength: 80 }),
        fc.option(fc.integer({ min: 0, max: 20 }), { nil: null }),
        (k, ids, script, startTurn) => {
          const repoIds = [...new Set(ids.map((i) => i + 1))];
          while (repoIds.length < k) repoIds.push(2_000 + repoIds.length);
          const withWork = repoIds.slice(0, k);
          // Every repository with work gets plenty (4k per claim of the script) of items the
          // agent may claim, mixed with items it may not; the rest hold only the latter.
          const stock = new Map<number, HeadItem[]>();
          let n = 1;
          for (const id of repoIds) {
            const list: HeadItem[] = [];
            for (let i = 0; i < 4 * k * (script.length + 2); i++) {
              const claimable = withWork.includes(id) && i % 3 !== 1;
              list.push(item(n++, claimable ? {} : { requires: ["gpu"] }));
            }
            stock.set(id, list);
          }
          const heads = () => repoIds.map((id) => head(id, stock.get(id)!.slice(0, 20)));
          let turn: Turn | null =
            startTurn === null ? null : { agentId: "me", repoId: startTurn, atMs: NOW };
          const touched: number[] = [];
          for (const [step, pick] of script) {
            if (step < 3) {
              // Another agent takes some repository's first claimable item.
              const id = repoIds[pick % repoIds.length]!;
              const list = stock.get(id)!;
              const at = list.findIndex((x) => x.requires.length === 0);
              if (at >= 0) list.splice(at, 1);
              continue;
            }
            const [first] = orgCandidates(heads(), anyone, "fair", turn, NOW);
            if (first === undefined) return false;
            const list = stock.get(first.repoId)!;
            list.splice(list.indexOf(first.item), 1);
            turn = turnAfter("me", first.repoId, NOW);
            touched.push(first.repoId);
          }
          for (let from = 0; from + 2 * k <= touched.length; from++) {
            const window = new Set(touched.slice(from, from + 2 * k));
            if (!withWork.every((id) => window.has(id))) return false;
          }
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });
});
