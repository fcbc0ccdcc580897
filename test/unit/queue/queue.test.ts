import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../../shared/config/schema.ts";
import { analyzeSnapshot } from "../../../shared/graph/analyze.ts";
import { fnv1a32 } from "../../../shared/graph/hash.ts";
import { parseSnapshot, type Snapshot } from "../../../shared/graph/snapshot.ts";
import { orderQueue } from "../../../shared/queue/order.ts";
import {
  capabilitySet,
  DEFAULT_CLAIM_KINDS,
  hasCapabilities,
  isAvailable,
  matchesKinds,
  type QueueKind,
  queueItems,
  selectedFor,
} from "../../../shared/queue/queue.ts";
import type { Reply } from "../../../shared/queue/reply-state.ts";
import { snapshotArbitrary } from "../../support/graph-arbitraries.ts";

const issue = (number: number, labels: string[] = [], extra = {}) => ({
  number,
  title: `#${number}`,
  state: "open" as const,
  stateReason: null,
  createdAt: "2026-11-01T00:00:00Z",
  updatedAt: "2026-11-01T00:00:00Z",
  closedAt: null,
  labels,
  ...extra,
});

const build = (issues: Snapshot["issues"], config = {}) =>
  queueItems(
    analyzeSnapshot(
      { repo: "o/r", now: "2026-12-01T00:00:00Z", issues },
      { config: ConfigSchema.parse(config) },
    ),
    { reasons: new Map([[2, "kick: unblocked by #9"]]), requires: () => [], impact: new Map() },
  );

describe("queue sections", () => {
  const issues = [
    issue(1, ["agent:ready"]),
    issue(2, ["agent:ready"]),
    issue(3),
    issue(4, ["idd:ready"]),
    issue(5, ["agent:ready", "agent:hold"]),
    issue(6, ["agent:ready"], { blockedBy: [3] }),
    issue(7, ["agent:ready", "agent:stuck"]),
    issue(8, ["agent:ready"]),
    issue(9, [], { parent: 8, state: "closed", closedAt: "2026-11-30T00:00:00Z" }),
  ];

  it("mode events: only ready issues carrying the ready label, with their reasons", () => {
    expect(build(issues).map((i) => [i.number, i.section, i.reason])).toEqual([
      [1, 2, "labeled agent:ready"],
      [2, 2, "kick: unblocked by #9"],
      [8, 2, "rollup: every sub-issue is closed (#9)"],
    ]);
  });

  it("mode all: then the other ready issues; with an approval label only those carrying it", () => {
    expect(build(issues, { queue: { mode: "all" } }).map((i) => [i.number, i.section])).toEqual([
      [1, 2],
      [2, 2],
      [3, 3],
      [4, 3],
      [8, 2],
    ]);
    const approved = build(issues, { queue: { mode: "all", approvalLabel: "idd:ready" } });
    expect(approved.filter((i) => i.section === 3).map((i) => i.number)).toEqual([4]);
  });
});

describe("queue candidates in mode events", () => {
  it("are what a walk over every ready issue keeps: the ones carrying the ready label", () => {
    // Mode `all` with the ready label as approval label walks every ready issue and keeps the
    // labeled ones, all in section 2: what mode `events` lists from the labeled issues alone.
    fc.assert(
      fc.property(snapshotArbitrary(), (input) => {
        const snapshot = parseSnapshot(input);
        const inputs = { reasons: new Map(), requires: () => [], impact: new Map() };
        const itemsWith = (queue: object) =>
          queueItems(analyzeSnapshot(snapshot, { config: ConfigSchema.parse({ queue }) }), inputs);
        expect(itemsWith({ mode: "events" })).toEqual(
          itemsWith({ mode: "all", approvalLabel: "agent:ready" }),
        );
      }),
    );
  });
});

describe("queue order", () => {
  const items = [1, 3, 5, 7, 9].map((number, k) => ({
    number,
    title: "",
    labels: [],
    requires: [],
    reason: "",
    section: (k < 4 ? 2 : 3) as 2 | 3,
    impact: [0, 2, 2, 1, 9][k]!,
    priority: null,
  }));

  it("number: ascending within each section, rotated by fnv1a32(machine) mod n", () => {
    expect(orderQueue(items, "number").map((i) => i.number)).toEqual([1, 3, 5, 7, 9]);
    const offset = fnv1a32("box-1") % 4;
    const first = [1, 3, 5, 7];
    expect(orderQueue(items, "number", "box-1").map((i) => i.number)).toEqual([
      ...first.slice(offset),
      ...first.slice(0, offset),
      9,
    ]);
  });

  it("impact: most waiting first, ties by number, sections kept", () => {
    expect(orderQueue(items, "impact", "box-1").map((i) => i.number)).toEqual([3, 5, 7, 1, 9]);
  });
});

describe("capabilities", () => {
  it("an issue is listed only when every capability it requires is held (case-insensitive)", () => {
    const item = {
      number: 1,
      title: "",
      labels: [],
      requires: ["gpu", "linux"],
      reason: "",
      kind: "kick" as const,
      reply: null,
      section: 2 as const,
      impact: 0,
      priority: null,
    };
    expect(hasCapabilities(item, capabilitySet(undefined))).toBe(false);
    expect(hasCapabilities(item, capabilitySet("GPU"))).toBe(false);
    expect(hasCapabilities(item, capabilitySet(["gpu", " Linux "]))).toBe(true);
    expect(hasCapabilities({ ...item, requires: [] }, capabilitySet(undefined))).toBe(true);
  });
});

describe("availability", () => {
  const state = {
    live: new Set([1]),
    parked: new Set([2]),
    idd: new Map([[3, { staleAtMs: 1_000 }]]),
    nowMs: 999,
  };
  it("not while claimed (switchyard or a live IDD marker) or parked; an IDD claim frees when stale", () => {
    expect([1, 2, 3, 4].map((n) => isAvailable(n, state))).toEqual([false, false, false, true]);
    expect(isAvailable(3, { ...state, nowMs: 1_000 })).toBe(true);
  });
});

describe("kinds and replies", () => {
  const reply = (n: number): Reply => ({
    reason: "unanswered-human-comment",
    url: `https://github.com/o/r/issues/${n}#issuecomment-1`,
    author: "alice",
    at: "2026-11-20T00:00:00Z",
  });
  const issues = [
    issue(1, ["agent:ready"]),
    issue(2, ["agent:ready"]),
    issue(3, ["agent:ready"]),
    issue(4, [], { parent: 3, state: "closed", closedAt: "2026-11-30T00:00:00Z" }),
    issue(5, ["agent:hold"]),
    issue(6, []),
  ];
  const items = queueItems(
    analyzeSnapshot(
      { repo: "o/r", now: "2026-12-01T00:00:00Z", issues },
      { config: ConfigSchema.parse({ queue: { mode: "all" } }) },
    ),
    {
      reasons: new Map(),
      requires: () => [],
      impact: new Map(),
      replies: new Map([
        [2, reply(2)],
        [5, reply(5)],
      ]),
    },
  );
  const kinds = (list: QueueKind[]) => new Set(list);

  it("work items have their kind and carry the issue's reply; a reply-only issue is a section-1 reply item", () => {
    expect(items.map((i) => [i.number, i.kind, i.section, i.reply?.url ?? null])).toEqual([
      [1, "kick", 2, null],
      [2, "kick", 2, reply(2).url],
      [3, "rollup", 2, null],
      [5, "reply", 1, reply(5).url],
      [6, "ready", 3, null],
    ]);
    expect(items.find((i) => i.number === 5)!.reason).toBe(
      "reply: unanswered-human-comment by alice",
    );
  });

  it("kinds match by kind, and `reply` also by the reply field", () => {
    const pick = (list: QueueKind[]) =>
      items.filter((i) => matchesKinds(i, kinds(list))).map((i) => i.number);
    expect(pick([...DEFAULT_CLAIM_KINDS])).toEqual([1, 2, 3, 6]);
    expect(pick(["reply"])).toEqual([2, 5]);
    expect(pick(["rollup", "ready"])).toEqual([3, 6]);
  });

  it("an item is taken for its work when its kind was asked for, else for its reply", () => {
    const two = items.find((i) => i.number === 2)!;
    expect(selectedFor(two, kinds(["kick", "reply"]))).toBe("work");
    expect(selectedFor(two, kinds(["reply"]))).toBe("reply");
    expect(selectedFor(items.find((i) => i.number === 5)!, kinds(["reply"]))).toBe("reply");
  });
});
