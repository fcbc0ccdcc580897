import { fnv1a32 } from "../graph/hash.ts";

/**
 * The queue's order: spec 6.4's table, one row per order, each row the sort key built from an
 * item's fields (the first difference decides). docs/api.md shows the same table. A new section
 * or order is a change of this table, not a special case elsewhere.
 */

export const QUEUE_ORDERS = ["number", "impact", "priority"] as const;
export type QueueOrder = (typeof QUEUE_ORDERS)[number];

/**
 * The queue's sections, numbered as in spec 6.4: 1 replies (unanswered human input), 2 issues
 * carrying the ready label (kicks and rollups), 3 other ready issues (mode `all`).
 */
export type QueueSection = 1 | 2 | 3;

/** What the order reads of an item. */
export interface Orderable {
  number: number;
  section: QueueSection;
  /** Open issues transitively waiting on it. */
  impact: number;
  /** The priority rank (lower is more urgent), or null when unranked. */
  priority: number | null;
}

/** An item's fields as the sort keys read them. */
export interface SortFields {
  /** The priority rank; unranked is `Infinity` (last). */
  rank: number;
  section: QueueSection;
  impact: number;
  number: number;
  /** Position by number within its section, rotated by the caller's machine (spec 3.2). */
  rotation: number;
}

/** Spec 6.4's order table: each order's sort key, compared element by element, ascending. */
export const SORT_KEYS: { readonly [order in QueueOrder]: (f: SortFields) => readonly number[] } = {
  number: (f) => [f.section, f.rotation],
  impact: (f) => [f.section, -f.impact, f.number],
  priority: (f) => [f.rank, f.section, -f.impact, f.number],
};

/**
 * Each item's position by number within its section, rotated by `fnv1a32(machine) mod n` (n:
 * the section's size), so machines sharing a queue start at different places (spec 3.2).
 */
export function rotations<T extends Orderable>(
  items: readonly T[],
  machine: string | undefined,
): Map<T, number> {
  const bySection = new Map<QueueSection, T[]>();
  for (const item of items) {
    const list = bySection.get(item.section);
    if (list) list.push(item);
    else bySection.set(item.section, [item]);
  }
  const hash = machine === undefined ? 0 : fnv1a32(machine);
  const out = new Map<T, number>();
  for (const list of bySection.values()) {
    list.sort((a, b) => a.number - b.number);
    const n = list.length;
    const offset = hash % n;
    for (let k = 0; k < n; k++) out.set(list[k]!, (k - offset + n) % n);
  }
  return out;
}

/** The fields the sort keys read, for one item. */
export function sortFields(item: Orderable, rotation: number): SortFields {
  return {
    rank: item.priority ?? Number.POSITIVE_INFINITY,
    section: item.section,
    impact: item.impact,
    number: item.number,
    rotation,
  };
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return 0;
}

/** The queue in `order` (spec 6.4's table), for a caller on `machine`. */
export function orderQueue<T extends Orderable>(
  items: readonly T[],
  order: QueueOrder,
  machine?: string,
): T[] {
  const rotation = rotations(items, machine);
  const key = SORT_KEYS[order];
  return items
    .map((item) => ({ item, key: key(sortFields(item, rotation.get(item)!)) }))
    .sort((a, b) => compareKeys(a.key, b.key))
    .map((k) => k.item);
}
