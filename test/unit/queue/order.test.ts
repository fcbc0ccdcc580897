// The queue's order (shared/queue/order.ts): spec 6.4's table, checked against an independent
// reading of the table on random queues: random label and project-field ranks on real graph
// analyses (queueItems), random reply items (section 1), every order and machine.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../../shared/config/schema.ts";
import { analyzeSnapshot } from "../../../shared/graph/analyze.ts";
import { rotateForMachine } from "../../../shared/graph/hash.ts";
import { type Orderable, orderQueue, QUEUE_ORDERS } from "../../../shared/queue/order.ts";
import { queueItems } from "../../../shared/queue/queue.ts";

const LABELS = ["P0", "P1", "p2", "P3", "area:db", "bug"];
const OPTIONS = ["Urgent", "High", "Low", "Someday"];
const LABEL_RANKS = { P0: 0, P1: 1, P2: 2, P3: 3 };
const OPTION_RANKS = { urgent: 0, High: 1, LOW: 5 }; // "Someday" is not ranked

/** The rank spec 6.4 describes, computed apart from shared/queue/priority.ts. */
function expectedRank(labels: readonly string[], option: string | null): number | null {
  const ranks: number[] = [];
  for (const l of labels) {
    const hit = Object.entries(LABEL_RANKS).find(
      ([name]) => name.toLowerCase() === l.toLowerCase(),
    );
    if (hit) ranks.push(hit[1]);
  }
  if (option !== null) {
    const hit = Object.entries(OPTION_RANKS).find(
      ([name]) => name.toLowerCase() === option.toLowerCase(),
    );
    if (hit) ranks.push(hit[1]);
  }
  return ranks.length === 0 ? null : Math.min(...ranks);
}

/** Spec 6.4's table read literally: a comparator per order (no shared code with order.ts). */
function specSort<T extends Orderable>(items: readonly T[], order: string, machine?: string): T[] {
  if (order === "number") {
    // Sections in order: replies oldest input first (ties by number); the others by number,
    // rotated per machine (spec 3.2).
    const at = (i: T) => (i.reply ? Date.parse(i.reply.at) : Number.POSITIVE_INFINITY);
    const out: T[] = items
      .filter((i) => i.section === 1)
      .sort((a, b) => (at(a) < at(b) ? -1 : at(a) > at(b) ? 1 : a.number - b.number));
    for (const section of [2, 3]) {
      const part = items.filter((i) => i.section === section).sort((a, b) => a.number - b.number);
      out.push(...rotateForMachine(part, machine));
    }
    return out;
  }
  const rank = (i: T) => i.priority ?? Number.POSITIVE_INFINITY;
  return [...items].sort((a, b) => {
    if (order === "priority" && rank(a) !== rank(b)) return rank(a) < rank(b) ? -1 : 1;
    if (a.section !== b.section) return a.section - b.section;
    if (a.impact !== b.impact) return b.impact - a.impact;
    return a.number - b.number;
  });
}

const issueArb = fc.record({
  labels: fc.subarray(LABELS),
  option: fc.option(fc.constantFrom(...OPTIONS), { nil: null }),
  ready: fc.boolean(),
  blockedBy: fc.option(fc.nat(20), { nil: null }),
});

const replyArb = fc.record({
  number: fc.integer({ min: 100, max: 140 }),
  impact: fc.nat(5),
  priority: fc.option(fc.nat(6), { nil: null }),
  reply: fc.integer({ min: 1, max: 4 }).map((day) => ({ at: `2026-11-0${day}T00:00:00Z` })),
});

describe("queue order: spec 6.4's table", () => {
  it("the order equals sorting by the table's key for random ranks, sections and replies", () => {
    fc.assert(
      fc.property(
        fc.array(issueArb, { minLength: 1, maxLength: 25 }),
        fc.uniqueArray(replyArb, { selector: (r) => r.number, maxLength: 5 }),
        fc.constantFrom(...QUEUE_ORDERS),
        fc.option(fc.string({ minLength: 1, maxLength: 8 }), { nil: undefined }),
        fc.constantFrom("events" as const, "all" as const),
        (issues, replies, order, machine, mode) => {
          const config = ConfigSchema.parse({
            queue: { mode },
            priority: {
              labels: LABEL_RANKS,
              project: { number: 1, field: "Priority", options: OPTION_RANKS },
            },
          });
          const analysis = analyzeSnapshot(
            {
              repo: "o/r",
              now: "2026-12-01T00:00:00Z",
              issues: issues.map((i, k) => ({
                number: k + 1,
                title: `#${k + 1}`,
                state: "open" as const,
                stateReason: null,
                createdAt: "2026-11-01T00:00:00Z",
                updatedAt: "2026-11-01T00:00:00Z",
                closedAt: null,
                labels: i.ready ? ["agent:ready", ...i.labels] : i.labels,
                ...(i.blockedBy !== null && i.blockedBy < issues.length && i.blockedBy !== k
                  ? { blockedBy: [i.blockedBy + 1] }
                  : {}),
              })),
            },
            { config },
          );
          const impact = new Map(issues.map((_, k) => [k + 1, (k * 7) % 4]));
          const items = [
            ...queueItems(analysis, {
              reasons: new Map(),
              requires: () => [],
              impact,
              projectOption: (n) => issues[n - 1]!.option,
            }),
            // Replies (section 1) come with the replies issue; the order already places them.
            ...replies.map((r) => ({ ...r, section: 1 as const })),
          ];
          for (const item of items) {
            if (item.section === 1) continue;
            const source = issues[item.number - 1]!;
            expect(item.priority).toBe(expectedRank(source.labels, source.option));
          }
          const got = orderQueue(items, order, machine).map((i) => i.number);
          expect(got).toEqual(specSort(items, order, machine).map((i) => i.number));
        },
      ),
    );
  });

  it("priority: the lower rank first, unranked last, then section, impact and number", () => {
    const item = (number: number, section: 1 | 2 | 3, impact: number, priority: number | null) => ({
      number,
      section,
      impact,
      priority,
    });
    const items = [
      item(1, 2, 0, null),
      item(2, 3, 0, 0),
      item(3, 2, 5, 1),
      item(4, 2, 9, 1),
      item(5, 1, 0, 1),
      item(6, 2, 5, 1),
      item(7, 3, 0, null),
    ];
    expect(orderQueue(items, "priority").map((i) => i.number)).toEqual([2, 5, 4, 3, 6, 1, 7]);
    expect(orderQueue(items, "impact").map((i) => i.number)).toEqual([5, 4, 3, 6, 1, 2, 7]);
    expect(orderQueue(items, "number").map((i) => i.number)).toEqual([5, 1, 3, 4, 6, 2, 7]);
  });

  it("the same order however the key is sorted (packed natively, packed with a comparator, field by field)", () => {
    const itemArb = (numbers: fc.Arbitrary<number>, impacts: fc.Arbitrary<number>) =>
      fc.uniqueArray(
        fc.record({
          number: numbers,
          section: fc.constantFrom(1 as const, 2 as const, 3 as const),
          impact: impacts,
          priority: fc.option(fc.nat(5), { nil: null }),
        }),
        { selector: (i) => i.number, maxLength: 40 },
      );
    const shapes = [
      itemArb(fc.integer({ min: 1, max: 500 }), fc.nat(9)), // small: one native sort
      itemArb(fc.integer({ min: 1, max: 2 ** 40 }), fc.nat(2 ** 10)), // packed, too wide with positions
      itemArb(fc.integer({ min: 1, max: 2 ** 50 }), fc.nat(2 ** 20)), // too wide to pack
      itemArb(fc.integer({ min: 1, max: 500 }), fc.double({ min: 0, max: 9, noNaN: true })), // fractions
    ];
    for (const shape of shapes) {
      fc.assert(
        fc.property(
          shape,
          fc.constantFrom(...QUEUE_ORDERS),
          fc.option(fc.string({ maxLength: 6 }), { nil: undefined }),
          (items, order, machine) => {
            expect(orderQueue(items, order, machine).map((i) => i.number)).toEqual(
              specSort(items, order, machine).map((i) => i.number),
            );
          },
        ),
      );
    }
  });
});
