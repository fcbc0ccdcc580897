import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rotateForMachine } from "../../../shared/graph/hash.ts";
import type { Kick } from "../../../shared/graph/kicks.ts";
import {
  blockedPage,
  decodeCursor,
  encodeCursor,
  kicksPage,
  type Page,
  type PageCursor,
  readyPage,
} from "../../../shared/graph/pages.ts";

/** Follows `next` from the first page to the last, concatenating the items. */
function all<T>(first: (cursor: PageCursor | null) => Page<T>): T[] {
  const out: T[] = [];
  let cursor: PageCursor | null = null;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = first(cursor);
    out.push(...page.items);
    if (page.next === null) return out;
    cursor = decodeCursor(page.next);
    expect(cursor).not.toBeNull();
  }
  throw new Error("no last page");
}

const sortedNumbers = fc
  .uniqueArray(fc.integer({ min: 1, max: 500 }), { maxLength: 60 })
  .map((l) => l.sort((a, b) => a - b));

describe("graph API pages", () => {
  it("concatenated ready pages are the rotated list, for any machine and page size", () => {
    fc.assert(
      fc.property(
        sortedNumbers,
        fc.option(fc.string({ minLength: 1, maxLength: 8 }), { nil: undefined }),
        fc.integer({ min: 1, max: 70 }),
        (sorted, machine, limit) => {
          const pages = all((c) => readyPage(sorted, machine, c as never, limit));
          expect(pages).toEqual(rotateForMachine(sorted, machine));
        },
      ),
    );
  });

  it("concatenated blocked and kick pages are the whole lists", () => {
    fc.assert(
      fc.property(sortedNumbers, fc.integer({ min: 1, max: 70 }), (numbers, limit) => {
        const blocked = numbers.map((n) => ({ number: n, blockers: [n + 1] }));
        expect(all((c) => blockedPage(blocked, c as never, limit))).toEqual(blocked);
        const kicks: Kick[] = numbers.flatMap((n) =>
          n % 3 === 0
            ? [
                { target: n, kind: "child-closed" as const, causes: [n + 1] },
                { target: n, kind: "unblocked" as const, causes: [n + 2] },
              ]
            : [{ target: n, kind: "unblocked" as const, causes: [n + 2] }],
        );
        expect(all((c) => kicksPage(kicks, c as never, limit))).toEqual(kicks);
      }),
    );
  });

  it("a page after a change neither repeats nor skips an item that stayed", () => {
    const before = [1, 2, 3, 4, 5, 6].map((n) => ({ number: n, blockers: [9] }));
    const first = blockedPage(before, null, 3);
    expect(first.items.map((i) => i.number)).toEqual([1, 2, 3]);
    // #2 leaves the list and #7 joins it before the second page is read.
    const after = [1, 3, 4, 5, 6, 7].map((n) => ({ number: n, blockers: [9] }));
    const second = blockedPage(after, decodeCursor(first.next!) as never, 3);
    expect(second.items.map((i) => i.number)).toEqual([4, 5, 6]);
  });

  it("cursors are opaque text and anything else is refused", () => {
    const cursor: PageCursor = { l: "ready", a: 12, s: 7 };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    for (const bad of [
      "",
      "!!",
      "eyJsIjoibm9wZSJ9",
      "a".repeat(500),
      encodeCursor(cursor).slice(3),
    ])
      expect(decodeCursor(bad)).toBeNull();
  });
});
