import { z } from "zod";
import { fnv1a32 } from "./hash.ts";
import type { Kick } from "./kicks.ts";
import type { ScanResult } from "./scan.ts";

/**
 * Pages of the graph API's long lists (spec 6.4): the scan's `blocked`, `ready`, `kicks` and
 * `rollupCandidates`, and the queue view's `replies`, each with its own cursor. A cursor names the last item handed out (keyset paging), not a position,
 * so a change to the graph between two pages neither repeats nor skips an item that stayed;
 * `ready` keeps the rotation point of its first page. Every page is found by binary search in
 * the sorted list: its cost does not grow with the repository.
 */

export const GRAPH_LISTS = ["blocked", "ready", "kicks", "rollupCandidates", "replies"] as const;
export type GraphList = (typeof GRAPH_LISTS)[number];
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;

const CursorSchema = z.discriminatedUnion("l", [
  z.object({ l: z.literal("blocked"), a: z.number().int().positive() }),
  z.object({ l: z.literal("rollupCandidates"), a: z.number().int().positive() }),
  z.object({ l: z.literal("replies"), a: z.number().int().positive() }),
  z.object({
    l: z.literal("kicks"),
    a: z.number().int().positive(),
    k: z.enum(["child-closed", "unblocked"]),
  }),
  z.object({
    l: z.literal("ready"),
    a: z.number().int().positive(),
    s: z.number().int().positive(),
  }),
]);
export type PageCursor = z.infer<typeof CursorSchema>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Opaque to callers: base64url of the cursor's JSON. */
export function encodeCursor(cursor: PageCursor): string {
  let binary = "";
  for (const byte of encoder.encode(JSON.stringify(cursor))) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The cursor a page handed out, or null for text that is not one. */
export function decodeCursor(text: string): PageCursor | null {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(text)) return null;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    const parsed = CursorSchema.safeParse(JSON.parse(decoder.decode(bytes)));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export interface Page<T> {
  items: T[];
  /** The cursor of the next page, or null on the last one. */
  next: string | null;
  /** How many items the whole list has. */
  total: number;
}

/** First index in [from, to) whose key is greater than `after` (keys ascending). */
function upperBound(key: (i: number) => number, from: number, to: number, after: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(mid) <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A page of a list sorted by `number` (`blocked`, `rollupCandidates`, `replies`). */
export function byNumberPage<T extends { number: number }>(
  name: "blocked" | "rollupCandidates" | "replies",
  list: readonly T[],
  cursor: { a: number } | null,
  limit: number,
): Page<T> {
  const from = cursor === null ? 0 : upperBound((i) => list[i]!.number, 0, list.length, cursor.a);
  const items = list.slice(from, from + limit);
  const last = items[items.length - 1];
  return {
    items,
    next: from + limit < list.length && last ? encodeCursor({ l: name, a: last.number }) : null,
    total: list.length,
  };
}

export function blockedPage(
  list: ScanResult["blocked"],
  cursor: Extract<PageCursor, { l: "blocked" }> | null,
  limit: number,
): Page<ScanResult["blocked"][number]> {
  return byNumberPage("blocked", list, cursor, limit);
}

const KIND_RANK: Record<Kick["kind"], number> = { "child-closed": 0, unblocked: 1 };

/** Kicks are sorted by target, then kind: one key orders both. */
export function kicksPage(
  list: readonly Kick[],
  cursor: Extract<PageCursor, { l: "kicks" }> | null,
  limit: number,
): Page<Kick> {
  const key = (i: number) => list[i]!.target * 2 + KIND_RANK[list[i]!.kind];
  const from =
    cursor === null ? 0 : upperBound(key, 0, list.length, cursor.a * 2 + KIND_RANK[cursor.k]);
  const items = list.slice(from, from + limit);
  const last = items[items.length - 1];
  return {
    items,
    next:
      from + limit < list.length && last
        ? encodeCursor({ l: "kicks", a: last.target, k: last.kind })
        : null,
    total: list.length,
  };
}

/**
 * A page of `ready` (ascending in `sorted`) in the machine's rotation (spec 3.2: the list starts
 * at `fnv1a32(machine) mod n`, as `rotateForMachine` does): the issues from the rotation point
 * up, then those below it. The cursor keeps the rotation point, so later pages continue the
 * first page's order even if the list's length changed meanwhile.
 */
export function readyPage(
  sorted: readonly number[],
  machine: string | undefined,
  cursor: Extract<PageCursor, { l: "ready" }> | null,
  limit: number,
): Page<number> {
  const n = sorted.length;
  if (n === 0) return { items: [], next: null, total: 0 };
  const key = (i: number) => sorted[i]!;
  const start = cursor?.s ?? sorted[machine === undefined ? 0 : fnv1a32(machine) % n]!;
  // Issues at or above the rotation point come first: [p, n), then [0, p).
  const p = upperBound(key, 0, n, start - 1);
  const items: number[] = [];
  let i: number;
  let inUpper: boolean;
  if (cursor === null) {
    i = p;
    inUpper = true;
  } else if (cursor.a >= start) {
    i = upperBound(key, p, n, cursor.a);
    inUpper = true;
  } else {
    i = upperBound(key, 0, p, cursor.a);
    inUpper = false;
  }
  while (items.length < limit) {
    if (inUpper && i >= n) {
      inUpper = false;
      i = 0;
    }
    if (!inUpper && i >= p) break;
    items.push(sorted[i++]!);
  }
  const more = inUpper ? i < n || p > 0 : i < p;
  const last = items[items.length - 1];
  return {
    items,
    next: more && last !== undefined ? encodeCursor({ l: "ready", a: last, s: start }) : null,
    total: n,
  };
}
