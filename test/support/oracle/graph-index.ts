// The oracle's index of a snapshot (see ./analyze.ts): issues in ascending number order,
// references canonicalised once, edges in both directions, over the snapshot's issue objects.
import type { GraphIndex } from "../../../shared/graph/analyze.ts";
import {
  canonicalBlockers,
  canonicalRef,
  type IssueRef,
  refKey,
} from "../../../shared/graph/refs.ts";
import type { ExternalIssue, Snapshot, SnapshotIssue } from "../../../shared/graph/snapshot.ts";

const NONE: readonly never[] = Object.freeze([]);

/** Rows of a compressed adjacency: row `slot` is `values[start[slot] .. start[slot + 1])`. */
class Rows {
  readonly start: Int32Array;
  readonly values: Int32Array;
  private fill: Int32Array;
  constructor(counts: Int32Array) {
    this.start = new Int32Array(counts.length + 1);
    for (let i = 0; i < counts.length; i++) this.start[i + 1] = this.start[i]! + counts[i]!;
    this.values = new Int32Array(this.start[counts.length]!);
    this.fill = this.start.slice(0, counts.length);
  }
  push(slot: number, value: number) {
    this.values[this.fill[slot]!++] = value;
  }
  count(slot: number): number {
    return this.start[slot + 1]! - this.start[slot]!;
  }

  /** The row's values (slots) mapped through `toNumber`. */
  row(slot: number, toNumber: (slot: number) => number): readonly number[] {
    const from = this.start[slot]!;
    const to = this.start[slot + 1]!;
    if (from === to) return NONE;
    const out = new Array<number>(to - from);
    for (let k = from; k < to; k++) out[k - from] = toNumber(this.values[k]!);
    return out;
  }

  /** How many of the row's values satisfy `test` (no list allocated). */
  countWhere(slot: number, test: (value: number) => boolean): number {
    let count = 0;
    for (let k = this.start[slot]!; k < this.start[slot + 1]!; k++)
      if (test(this.values[k]!)) count += 1;
    return count;
  }
}

/**
 * Issue number → slot. Issue numbers are dense in practice (1..N, shared with pull requests),
 * so a flat array indexed by number is the common case: one memory access, no hashing, which
 * keeps lookups linear at 100k issues. Sparse numbers fall back to a Map.
 */
function slotLookup(sorted: readonly SnapshotIssue[]): {
  get(n: number): number | undefined;
  has(n: number): boolean;
} {
  const max = sorted.length > 0 ? sorted[sorted.length - 1]!.number : 0;
  if (max <= sorted.length * 4 + 1024) {
    const slots = new Int32Array(max + 1).fill(-1);
    for (let i = 0; i < sorted.length; i++) slots[sorted[i]!.number] = i;
    const get = (num: number) => {
      const slot = num >= 0 && num <= max ? slots[num]! : -1;
      return slot === -1 ? undefined : slot;
    };
    return { get, has: (num) => get(num) !== undefined };
  }
  const map = new Map<number, number>();
  for (let i = 0; i < sorted.length; i++) map.set(sorted[i]!.number, i);
  return map;
}

export function indexGraph(snapshot: Snapshot): GraphIndex {
  const repo = snapshot.repo;
  const sorted = [...snapshot.issues].sort((a, b) => a.number - b.number);
  const n = sorted.length;
  const slotOf = slotLookup(sorted);

  const external = new Map<string, ExternalIssue>();
  for (const entry of snapshot.external ?? []) {
    const ref = canonicalRef(entry.ref, repo);
    if (typeof ref === "number" && slotOf.has(ref)) continue;
    external.set(refKey(ref), entry);
  }

  const parents: Array<IssueRef | undefined> = new Array(n);
  const blockers: Array<readonly IssueRef[]> = new Array(n);
  const childCount = new Int32Array(n);
  const blockCount = new Int32Array(n);
  // Blockers the snapshot does not hold (other repositories, or own numbers it lacks).
  const blocksElsewhere = new Map<string, number[]>();
  let edgeCount = 0;

  for (let i = 0; i < n; i++) {
    const issue = sorted[i]!;
    if (issue.parent !== undefined && issue.parent !== null) {
      const p = canonicalRef(issue.parent, repo);
      parents[i] = p;
      const slot = typeof p === "number" ? slotOf.get(p) : undefined;
      if (slot !== undefined) childCount[slot]! += 1;
      edgeCount += 1;
    }
    const list = issue.blockedBy?.length ? canonicalBlockers(issue.blockedBy, repo) : NONE;
    blockers[i] = list;
    edgeCount += list.length;
    for (const ref of list) {
      const slot = typeof ref === "number" ? slotOf.get(ref) : undefined;
      if (slot !== undefined) blockCount[slot]! += 1;
      else {
        const key = refKey(ref);
        const blocked = blocksElsewhere.get(key);
        if (blocked) blocked.push(issue.number);
        else blocksElsewhere.set(key, [issue.number]);
      }
    }
  }

  // Filled in ascending issue order, so every row comes out sorted.
  const children = new Rows(childCount);
  const blocks = new Rows(blockCount);
  for (let i = 0; i < n; i++) {
    const p = parents[i];
    const parentSlot = typeof p === "number" ? slotOf.get(p) : undefined;
    if (parentSlot !== undefined) children.push(parentSlot, i);
    for (const ref of blockers[i]!) {
      const slot = typeof ref === "number" ? slotOf.get(ref) : undefined;
      if (slot !== undefined) blocks.push(slot, i);
    }
  }

  const numberAt = (slot: number) => sorted[slot]!.number;
  // Edges point anywhere: reading states from one small array instead of 100k scattered issue
  // objects keeps those random reads in cache.
  const openAt = new Uint8Array(n);
  for (let i = 0; i < n; i++) openAt[i] = sorted[i]!.state === "open" ? 1 : 0;
  const issue = (num: number) => {
    const slot = slotOf.get(num);
    return slot === undefined ? undefined : sorted[slot];
  };
  return {
    repo,
    sorted,
    issue,
    slotOf: (num) => slotOf.get(num) ?? -1,
    external,
    edgeCount,
    blockersOf: (num) => {
      const slot = slotOf.get(num);
      return slot === undefined ? NONE : blockers[slot]!;
    },
    parentOf: (num) => {
      const slot = slotOf.get(num);
      return slot === undefined ? undefined : parents[slot];
    },
    childCount: (num) => {
      const slot = slotOf.get(num);
      return slot === undefined ? 0 : children.count(slot);
    },
    openChildCount: (num) => {
      const slot = slotOf.get(num);
      return slot === undefined ? 0 : children.countWhere(slot, (child) => openAt[child] === 1);
    },
    childrenOf: (num) => {
      const slot = slotOf.get(num);
      return slot === undefined ? NONE : children.row(slot, numberAt);
    },
    blockedBy: (ref) => {
      const slot = typeof ref === "number" ? slotOf.get(ref) : undefined;
      if (slot !== undefined) return blocks.row(slot, numberAt);
      return blocksElsewhere.get(refKey(ref)) ?? NONE;
    },
    stateOf(ref) {
      if (typeof ref === "number") {
        const slot = slotOf.get(ref);
        if (slot !== undefined) return openAt[slot] === 1 ? "open" : "closed";
      }
      return external.get(refKey(ref))?.state;
    },
    withLabel: (label) => sorted.filter((i) => i.labels.includes(label)).map((i) => i.number),
  };
}
