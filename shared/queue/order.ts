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
  /** The unanswered input a reply item (section 1) answers: the oldest goes first. */
  reply?: { at: string } | null;
}

/** A field the sort keys read: ascending, or descending with a leading `-`. */
export type SortField =
  /** The priority rank; unranked is `Infinity` (last). */
  | "rank"
  | "section"
  | "-impact"
  | "number"
  /** Section 1 (replies): position by the input's time, oldest first (ties by number); else 0. */
  | "input"
  /** Position by number within its section, rotated by the caller's machine (spec 3.2). */
  | "rotation";

/** Spec 6.4's order table: each order's sort key, compared field by field (the first difference decides). */
export const SORT_KEYS: { readonly [order in QueueOrder]: readonly SortField[] } = {
  number: ["section", "input", "rotation"],
  impact: ["section", "-impact", "number"],
  priority: ["rank", "section", "-impact", "number"],
};

/**
 * Each item's position by number within its section, rotated by `fnv1a32(machine) mod n` (n:
 * the section's size), so machines sharing a queue start at different places (spec 3.2). The
 * queue view holds its items ascending by number; only a list that is not gets sorted.
 */
function rotations(items: readonly Orderable[], machine: string | undefined): Float64Array {
  // Positions of each section's items, in the items' order (sections are 1 to 3).
  const counts = [0, 0, 0, 0];
  for (const item of items) counts[item.section]! += 1;
  const lists = counts.map((count) => new Int32Array(count));
  const filled = [0, 0, 0, 0];
  for (let i = 0; i < items.length; i++) {
    const section = items[i]!.section;
    lists[section]![filled[section]!++] = i;
  }
  const hash = machine === undefined ? 0 : fnv1a32(machine);
  const out = new Float64Array(items.length);
  for (const list of lists) {
    const n = list.length;
    let ascending = true;
    for (let k = 1; k < n && ascending; k++) {
      ascending = items[list[k - 1]!]!.number < items[list[k]!]!.number;
    }
    if (!ascending) list.sort((a, b) => items[a]!.number - items[b]!.number);
    const offset = n === 0 ? 0 : hash % n;
    for (let k = 0; k < n; k++) out[list[k]!] = (k - offset + n) % n;
  }
  return out;
}

/** Each section-1 item's position by its input's time (oldest first, ties by number); others 0. */
function inputPositions(items: readonly Orderable[]): Float64Array {
  const out = new Float64Array(items.length);
  const replies: Array<{ i: number; at: number; number: number }> = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (item.section !== 1) continue;
    // An item without its input's time (none in a real queue) goes after those with one.
    const at = item.reply ? Date.parse(item.reply.at) : Number.NaN;
    replies.push({ i, at: Number.isNaN(at) ? Number.POSITIVE_INFINITY : at, number: item.number });
  }
  replies.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.number - b.number));
  for (let k = 0; k < replies.length; k++) out[replies[k]!.i] = k;
  return out;
}

function value(
  item: Orderable,
  field: SortField,
  rotation: Float64Array,
  i: number,
  input: Float64Array,
): number {
  switch (field) {
    case "rank":
      return item.priority ?? Number.POSITIVE_INFINITY;
    case "section":
      return item.section;
    case "-impact":
      return -item.impact;
    case "number":
      return item.number;
    case "input":
      return input[i]!;
    case "rotation":
      return rotation[i]!;
  }
}

/**
 * The queue in `order` (spec 6.4's table), for a caller on `machine`. claim-next orders the
 * whole queue on every call, so no object is made per item: each field of the key is read into
 * a column, and when the columns' ranges allow (they do for any real queue: whole numbers, a few
 * sections, ranks and impacts bounded by the queue) the key is packed into one number per item
 * and sorted natively with its position; otherwise positions are sorted comparing keys.
 */
export function orderQueue<T extends Orderable>(
  items: readonly T[],
  order: QueueOrder,
  machine?: string,
): T[] {
  const n = items.length;
  const fields = SORT_KEYS[order];
  const rotation = fields.includes("rotation") ? rotations(items, machine) : new Float64Array(0);
  const input = fields.includes("input") ? inputPositions(items) : new Float64Array(0);
  const columns = fields.map((field) => {
    const column = new Float64Array(n);
    for (let i = 0; i < n; i++) column[i] = value(items[i]!, field, rotation, i, input);
    return column;
  });
  const packed = pack(columns, n);
  if (packed !== null && packed.span * n <= Number.MAX_SAFE_INTEGER) {
    // Key and position in one number: a native numeric sort, no comparator.
    const combined = new Float64Array(n);
    for (let i = 0; i < n; i++) combined[i] = packed.keys[i]! * n + i;
    combined.sort();
    const out = new Array<T>(n);
    for (let k = 0; k < n; k++) out[k] = items[combined[k]! % n]!;
    return out;
  }
  const index = Array.from(items.keys());
  if (packed !== null) {
    const keys = packed.keys;
    index.sort((a, b) => keys[a]! - keys[b]!);
  } else {
    index.sort((a, b) => {
      for (const column of columns) {
        const x = column[a]!;
        const y = column[b]!;
        if (x !== y) return x < y ? -1 : 1;
      }
      return 0;
    });
  }
  const out = new Array<T>(n);
  for (let k = 0; k < n; k++) out[k] = items[index[k]!]!;
  return out;
}

/**
 * The key as one whole number per item (mixed radix over the columns' ranges, the first column
 * most significant; `Infinity`, an unranked item, one past the largest rank), or null when a
 * column holds a fraction or the ranges' product passes 2^53.
 */
function pack(
  columns: readonly Float64Array[],
  n: number,
): { keys: Float64Array; span: number } | null {
  const lows: number[] = [];
  const sizes: number[] = [];
  let span = 1;
  for (const column of columns) {
    let low = Number.POSITIVE_INFINITY;
    let high = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      const v = column[i]!;
      if (v === Number.POSITIVE_INFINITY) continue;
      if (!Number.isInteger(v)) return null;
      if (v < low) low = v;
      if (v > high) high = v;
    }
    if (low === Number.POSITIVE_INFINITY) low = high = 0;
    const size = high - low + 2; // one more for Infinity
    lows.push(low);
    sizes.push(size);
    span *= size;
    if (span > Number.MAX_SAFE_INTEGER) return null;
  }
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let key = 0;
    for (let c = 0; c < columns.length; c++) {
      const v = columns[c]![i]!;
      key = key * sizes[c]! + (v === Number.POSITIVE_INFINITY ? sizes[c]! - 1 : v - lows[c]!);
    }
    keys[i] = key;
  }
  return { keys, span };
}
