import type { LabelNames } from "../config/schema.ts";
import { canonicalBlockers, canonicalRef, type IssueRef, refKey } from "./refs.ts";
import type { Snapshot } from "./snapshot.ts";
import { instantMs } from "./time.ts";

/**
 * The graph as the rules read it, in typed arrays over dense slots: one slot per issue number
 * the graph knows (an issue row, or a parent or blocker row stored before its issue), columns
 * for state, close time, an interned label set, the parent and the canonical blockers, and the
 * latest label events of the three labels whose history matters (ready, needs-human,
 * processing). No issue objects and no bodies: a 100k-issue graph is a few megabytes (titles
 * aside), and every change is applied in place, so it is built once and kept current.
 *
 * References are codes: a positive code is an issue number of this repository, a negative one
 * `-(id + 1)` names an interned cross-repository spelling (`spellings[id]`, compared by its
 * `refKey`). shared/graph/compact-analysis.ts runs the rules over it; it answers exactly what
 * the object-based analysis of the equivalent snapshot answers (test/support/oracle/; the property
 * tests hold them equal).
 */

/** Which label histories the rules read (shared/graph/labels.ts): ready, needs-human, processing. */
export const ROLE_READY = 0;
export const ROLE_HUMAN = 1;
export const ROLE_PROCESSING = 2;
/** Role columns per slot: a role's value of slot `s` is at `s * ROLES + role`. */
export const ROLES = 3;

export const STATE_NONE = 0;
export const STATE_OPEN = 1;
export const STATE_CLOSED = 2;

/** Issue numbers up to this are indexed by a flat array (dense in practice); above, by a Map. */
const DENSE_LIMIT = 1 << 21;

export interface CompactIssue {
  number: number;
  title: string;
  state: "open" | "closed";
  closedAt: string | null;
  /** The labels, or their JSON text as stored (interned as text, parsed once per distinct set). */
  labels: readonly string[] | string;
  /** Capabilities the body asks for (`<!-- requires: ... -->`), extracted at ingest. */
  requires?: readonly string[];
}

/** One interned label set: the labels in stored order. */
export interface LabelSet {
  labels: readonly string[];
  /** How many slots use it (a set no slot uses is skipped by the analysis). */
  uses: number;
}

function growInt32(a: Int32Array, size: number, fill = 0): Int32Array {
  const b = new Int32Array(size);
  b.set(a);
  if (fill !== 0) b.fill(fill, a.length);
  return b;
}
function growFloat64(a: Float64Array, size: number): Float64Array {
  const b = new Float64Array(size).fill(Number.NaN);
  b.set(a);
  return b;
}
function growUint8(a: Uint8Array, size: number): Uint8Array {
  const b = new Uint8Array(size);
  b.set(a);
  return b;
}

const NONE: readonly number[] = Object.freeze([]);

export class CompactGraph {
  readonly repo: string;
  /** The label names the role columns were filled for; other names need a rebuild. */
  readonly roleLabels: readonly [string, string, string];

  /** Slots in use (the high-water mark); freed slots are reused. */
  size = 0;
  private capacity: number;
  private free: number[] = [];

  number: Int32Array;
  state: Uint8Array;
  closedMs: Float64Array;
  labelSet: Int32Array;
  requiresSet: Int32Array;
  parent: Int32Array;
  titles: string[] = [];
  /** Canonical blockers of each slot: `blockerPool[blockerStart[s] .. + blockerLen[s])`. */
  blockerStart: Int32Array;
  blockerLen: Int32Array;
  blockerPool: Int32Array;
  private poolUsed = 0;
  private poolGarbage = 0;
  /** The stored rows of a slot whose blockers spell one issue twice (rare): the raw list. */
  private rawBlockers = new Map<number, number[]>();
  /** Per slot and role: the latest event's time and action, and the latest `labeled` time. */
  eventMs: Float64Array;
  eventLabeled: Uint8Array;
  labeledMs: Float64Array;

  private dense: Int32Array = new Int32Array(0);
  private sparse = new Map<number, number>();

  readonly labelSets: LabelSet[] = [];
  private labelSetIds = new Map<string, number>();
  /** The label set ids of the empty list and of one-label lists (by the label). */
  private emptyLabelSetId: number | undefined;
  private oneLabelSetIds = new Map<string, number>();
  readonly requiresSets: Array<readonly string[]> = [NONE as unknown as readonly string[]];
  private requiresIds = new Map<string, number>([["[]", 0]]);

  /** Cross-repository spellings and the keys they compare by. */
  readonly spellings: string[] = [];
  spellingKey: Int32Array = new Int32Array(16);
  private spellingIds = new Map<string, number>();
  /** Codes of references as written (`codeOf`). */
  private writtenCodes = new Map<string, number>();
  /** Reference keys (`refKey` of the canonical reference): external state per key. */
  readonly keys: string[] = [];
  private keyIds = new Map<string, number>();
  externalState: Uint8Array = new Uint8Array(16);
  externalClosedMs: Float64Array = new Float64Array(16).fill(Number.NaN);
  /** The spelling of each key's external entry, as stored (a window kick names it). */
  externalRef: Array<string | undefined> = [];

  /** Bumped when a slot gains or loses its issue row: the ascending order must be redone. */
  membership = 0;
  /** Bumped by every change. */
  changes = 0;
  /**
   * Bumped by every change the rules read: all but a retitling. An analysis made since still
   * holds when only titles moved (they are read from `titles` when shown).
   */
  ruleChanges = 0;

  /**
   * `sizes` presizes the columns for a graph built at once (`compactFromSnapshot`): slots, the
   * highest issue number and blocker rows expected; they grow past it as needed.
   */
  constructor(
    repo: string,
    labels: Pick<LabelNames, "ready" | "needsHuman" | "processing">,
    sizes: { slots?: number; maxNumber?: number; blockers?: number } = {},
  ) {
    this.repo = repo;
    this.roleLabels = [labels.ready, labels.needsHuman, labels.processing];
    this.capacity = Math.max(64, sizes.slots ?? 0);
    const c = this.capacity;
    this.number = new Int32Array(c);
    this.state = new Uint8Array(c);
    this.closedMs = new Float64Array(c).fill(Number.NaN);
    this.labelSet = new Int32Array(c).fill(-1);
    this.requiresSet = new Int32Array(c);
    this.parent = new Int32Array(c);
    this.blockerStart = new Int32Array(c);
    this.blockerLen = new Int32Array(c);
    this.blockerPool = new Int32Array(Math.max(256, sizes.blockers ?? 0));
    this.eventMs = new Float64Array(c * ROLES).fill(Number.NaN);
    this.eventLabeled = new Uint8Array(c * ROLES);
    this.labeledMs = new Float64Array(c * ROLES).fill(Number.NaN);
    const maxNumber = sizes.maxNumber ?? -1;
    if (maxNumber >= 0 && maxNumber < DENSE_LIMIT)
      this.dense = new Int32Array(maxNumber + 1).fill(-1);
  }

  /** True when the role columns were filled for these label names. */
  fits(repo: string, labels: Pick<LabelNames, "ready" | "needsHuman" | "processing">): boolean {
    const [ready, human, processing] = this.roleLabels;
    return (
      repo === this.repo &&
      labels.ready === ready &&
      labels.needsHuman === human &&
      labels.processing === processing
    );
  }

  // --- slots ----------------------------------------------------------------------------

  /** The slot of issue number `n`, or -1 when the graph knows nothing about it. */
  slotOf(n: number): number {
    if (n >= 0 && n < DENSE_LIMIT) return n < this.dense.length ? this.dense[n]! : -1;
    return this.sparse.get(n) ?? -1;
  }

  /** The slot of an issue that has an issue row, or -1. */
  presentSlot(n: number): number {
    const slot = this.slotOf(n);
    return slot !== -1 && this.state[slot] !== STATE_NONE ? slot : -1;
  }

  private slotFor(n: number): number {
    const existing = this.slotOf(n);
    if (existing !== -1) return existing;
    let slot: number;
    if (this.free.length > 0) slot = this.free.pop()!;
    else {
      if (this.size === this.capacity) this.grow(this.capacity * 2);
      slot = this.size++;
    }
    this.number[slot] = n;
    this.state[slot] = STATE_NONE;
    this.closedMs[slot] = Number.NaN;
    this.labelSet[slot] = -1;
    this.requiresSet[slot] = 0;
    this.parent[slot] = 0;
    this.blockerStart[slot] = 0;
    this.blockerLen[slot] = 0;
    this.titles[slot] = "";
    for (let r = 0; r < ROLES; r++) {
      this.eventMs[slot * ROLES + r] = Number.NaN;
      this.eventLabeled[slot * ROLES + r] = 0;
      this.labeledMs[slot * ROLES + r] = Number.NaN;
    }
    if (n >= 0 && n < DENSE_LIMIT) {
      if (n >= this.dense.length) {
        const size = Math.max(n + 1, this.dense.length * 2, 1024);
        this.dense = growInt32(this.dense, Math.min(size, DENSE_LIMIT), -1);
      }
      this.dense[n] = slot;
    } else this.sparse.set(n, slot);
    return slot;
  }

  private grow(capacity: number): void {
    this.capacity = capacity;
    this.number = growInt32(this.number, capacity);
    this.state = growUint8(this.state, capacity);
    this.closedMs = growFloat64(this.closedMs, capacity);
    this.labelSet = growInt32(this.labelSet, capacity, -1);
    this.requiresSet = growInt32(this.requiresSet, capacity);
    this.parent = growInt32(this.parent, capacity);
    this.blockerStart = growInt32(this.blockerStart, capacity);
    this.blockerLen = growInt32(this.blockerLen, capacity);
    this.eventMs = growFloat64(this.eventMs, capacity * ROLES);
    this.eventLabeled = growUint8(this.eventLabeled, capacity * ROLES);
    this.labeledMs = growFloat64(this.labeledMs, capacity * ROLES);
  }

  /** Frees a slot nothing refers to any more (no issue row, parent, blockers or events). */
  private release(slot: number): void {
    if (this.state[slot] !== STATE_NONE || this.parent[slot] !== 0 || this.blockerLen[slot] !== 0)
      return;
    for (let r = 0; r < ROLES; r++) if (!Number.isNaN(this.eventMs[slot * ROLES + r]!)) return;
    const n = this.number[slot]!;
    if (n >= 0 && n < DENSE_LIMIT) this.dense[n] = -1;
    else this.sparse.delete(n);
    this.titles[slot] = "";
    this.free.push(slot);
  }

  // --- interning ------------------------------------------------------------------------

  private internLabels(labels: readonly string[] | string): number {
    // Most issues carry no label or one: their sets are found without writing the list's text.
    if (typeof labels !== "string" && labels.length <= 1) {
      if (labels.length === 0) {
        this.emptyLabelSetId ??= this.internLabels("[]");
        return this.emptyLabelSetId;
      }
      const label = labels[0]!;
      let id = this.oneLabelSetIds.get(label);
      if (id === undefined) {
        id = this.internLabels(JSON.stringify(labels));
        this.oneLabelSetIds.set(label, id);
      }
      return id;
    }
    const text = typeof labels === "string" ? labels : JSON.stringify(labels);
    let id = this.labelSetIds.get(text);
    if (id === undefined) {
      id = this.labelSets.length;
      const list = typeof labels === "string" ? (JSON.parse(labels) as string[]) : [...labels];
      this.labelSets.push({ labels: Object.freeze(list), uses: 0 });
      this.labelSetIds.set(text, id);
    }
    return id;
  }

  private internRequires(requires: readonly string[] | undefined): number {
    if (requires === undefined || requires.length === 0) return 0;
    const text = JSON.stringify(requires);
    let id = this.requiresIds.get(text);
    if (id === undefined) {
      id = this.requiresSets.length;
      this.requiresSets.push(Object.freeze([...requires]));
      this.requiresIds.set(text, id);
    }
    return id;
  }

  /** The id of a reference key (created on first use). */
  keyId(key: string): number {
    let id = this.keyIds.get(key);
    if (id === undefined) {
      id = this.keys.length;
      this.keys.push(key);
      this.keyIds.set(key, id);
      if (id >= this.externalState.length) {
        this.externalState = growUint8(this.externalState, id * 2);
        this.externalClosedMs = growFloat64(this.externalClosedMs, id * 2);
      }
    }
    return id;
  }

  /** The key id of `key` when known, else -1 (no lookup creates one). */
  knownKey(key: string): number {
    return this.keyIds.get(key) ?? -1;
  }

  /** The code of a canonical reference: the number, or `-(spelling id + 1)`. */
  private code(ref: IssueRef): number {
    if (typeof ref === "number") return ref;
    let id = this.spellingIds.get(ref);
    if (id === undefined) {
      id = this.spellings.length;
      this.spellings.push(ref);
      this.spellingIds.set(ref, id);
      if (id >= this.spellingKey.length) this.spellingKey = growInt32(this.spellingKey, id * 2);
      this.spellingKey[id] = this.keyId(refKey(ref));
    }
    return -(id + 1);
  }

  /**
   * The code of a reference as written (canonical first: this repository's issues spelled with
   * its name are numbers). A spelling seen before is not parsed again.
   */
  private codeOf(ref: IssueRef): number {
    if (typeof ref === "number") return ref;
    let code = this.writtenCodes.get(ref);
    if (code === undefined) {
      code = this.code(canonicalRef(ref, this.repo));
      this.writtenCodes.set(ref, code);
    }
    return code;
  }

  /** The reference a code stands for. */
  refOf(code: number): IssueRef {
    return code > 0 ? code : this.spellings[-code - 1]!;
  }

  // --- changes --------------------------------------------------------------------------

  /** An issue row written (inserted or replaced); its parent and blockers are rows of their own. */
  upsertIssue(issue: CompactIssue): void {
    const { number, title, state, closedAt, labels, requires } = issue;
    this.upsertIssueRow(number, title, state, closedAt, labels, requires);
  }

  /** `upsertIssue` from its fields: a bulk build (`compactFromSnapshot`) makes no row objects. */
  upsertIssueRow(
    number: number,
    title: string,
    issueState: CompactIssue["state"],
    closedAt: string | null,
    labels: CompactIssue["labels"],
    requires?: CompactIssue["requires"],
  ): void {
    const slot = this.slotFor(number);
    const state = issueState === "open" ? STATE_OPEN : STATE_CLOSED;
    const closedMs = closedAt ? instantMs(closedAt) : Number.NaN;
    const labelSet = this.internLabels(labels);
    const requiresSet = this.internRequires(requires);
    const retitledOnly =
      this.state[slot] === state &&
      Object.is(this.closedMs[slot], closedMs) &&
      this.labelSet[slot] === labelSet &&
      this.requiresSet[slot] === requiresSet;
    if (this.state[slot] === STATE_NONE) this.membership += 1;
    this.state[slot] = state;
    this.closedMs[slot] = closedMs;
    this.titles[slot] = title;
    this.setLabelSet(slot, labelSet);
    this.requiresSet[slot] = requiresSet;
    this.changes += 1;
    if (!retitledOnly) this.ruleChanges += 1;
  }

  private setLabelSet(slot: number, id: number): void {
    const before = this.labelSet[slot]!;
    if (before !== -1) this.labelSets[before]!.uses -= 1;
    this.labelSet[slot] = id;
    if (id !== -1) this.labelSets[id]!.uses += 1;
  }

  setLabels(number: number, labels: readonly string[] | string): void {
    const slot = this.presentSlot(number);
    if (slot === -1) return;
    this.setLabelSet(slot, this.internLabels(labels));
    this.changes += 1;
    this.ruleChanges += 1;
  }

  /** The issue row goes (its parent, blocker and event rows go by their own changes). */
  deleteIssue(number: number): void {
    const slot = this.presentSlot(number);
    if (slot === -1) return;
    this.state[slot] = STATE_NONE;
    this.closedMs[slot] = Number.NaN;
    this.setLabelSet(slot, -1);
    this.requiresSet[slot] = 0;
    this.membership += 1;
    this.changes += 1;
    this.ruleChanges += 1;
    this.release(slot);
  }

  /** The parent row of `child`: a reference, or null for none. */
  setParent(child: number, parent: IssueRef | null): void {
    const code = parent === null ? 0 : this.codeOf(parent);
    const slot = code === 0 ? this.slotOf(child) : this.slotFor(child);
    if (slot === -1) return;
    this.parent[slot] = code;
    this.changes += 1;
    this.ruleChanges += 1;
    if (code === 0) this.release(slot);
  }

  /** Every parent row naming `number`, as child or as (own) parent, goes. */
  deleteParentsInvolving(number: number): void {
    const own = this.slotOf(number);
    if (own !== -1) this.parent[own] = 0;
    for (let s = 0; s < this.size; s++) {
      if (this.parent[s] === number) {
        this.parent[s] = 0;
        this.release(s);
      }
    }
    if (own !== -1) this.release(own);
    this.changes += 1;
    this.ruleChanges += 1;
  }

  /** All the blocker rows of an issue at once (present ones). */
  setBlockers(issue: number, refs: readonly IssueRef[]): void {
    const slot = refs.length === 0 ? this.slotOf(issue) : this.slotFor(issue);
    if (slot === -1) return;
    // One blocker of this repository, the common case: the list is its own codes (no copy).
    if (refs.length === 1 && typeof refs[0] === "number") {
      this.storeBlockers(slot, refs as readonly number[]);
      return;
    }
    const raw: number[] = [];
    for (let i = 0; i < refs.length; i++) {
      const code = this.codeOf(refs[i]!);
      if (!raw.includes(code)) raw.push(code);
    }
    this.storeBlockers(slot, raw);
  }

  /** One blocker row of an issue became present or absent. */
  setBlocker(issue: number, blocker: IssueRef, present: boolean): void {
    const slot = present ? this.slotFor(issue) : this.slotOf(issue);
    if (slot === -1) return;
    const code = this.codeOf(blocker);
    const raw = this.rawBlockers.get(slot) ?? [...this.blockersOfSlot(slot)];
    const at = raw.indexOf(code);
    if (present === (at !== -1)) return;
    if (present) raw.push(code);
    else raw.splice(at, 1);
    this.storeBlockers(slot, raw);
  }

  /** Every blocker row naming `number`, as the blocked issue or as an own blocker, goes. */
  deleteBlockersInvolving(number: number): void {
    const own = this.slotOf(number);
    if (own !== -1) this.storeBlockers(own, []);
    for (let s = 0; s < this.size; s++) {
      // Own numbers are never merged away, so the canonical list names `number` iff a row does.
      if (this.blockerLen[s] === 0 || !this.slotNames(s, number)) continue;
      const raw = this.rawBlockers.get(s) ?? [...this.blockersOfSlot(s)];
      this.storeBlockers(
        s,
        raw.filter((c) => c !== number),
      );
    }
    this.changes += 1;
    this.ruleChanges += 1;
  }

  /**
   * Whether `slot`'s canonical blockers include `code`, read in place: a removal asks every slot,
   * and a view per slot (`blockersOfSlot`) made that four times slower.
   */
  private slotNames(slot: number, code: number): boolean {
    const start = this.blockerStart[slot]!;
    const end = start + this.blockerLen[slot]!;
    for (let k = start; k < end; k++) if (this.blockerPool[k] === code) return true;
    return false;
  }

  /** The canonical blocker codes of a slot (a view into the pool: do not keep it). */
  blockersOfSlot(slot: number): Int32Array {
    const start = this.blockerStart[slot]!;
    return this.blockerPool.subarray(start, start + this.blockerLen[slot]!);
  }

  /** `canonicalBlockers` over distinct codes, as codes. */
  private canonicalCodes(raw: readonly number[]): readonly number[] {
    // One code is canonical as it is (the common case: a single blocker).
    if (raw.length <= 1) return raw;
    let ownOnly = true;
    for (let i = 0; i < raw.length; i++) if (raw[i]! < 0) ownOnly = false;
    // Own numbers only: distinct already, so canonical is ascending order.
    if (ownOnly) return [...raw].sort((a, b) => a - b);
    const refs = raw.map((c) => this.refOf(c));
    return canonicalBlockers(refs, this.repo).map((r) => this.code(r));
  }

  private storeBlockers(slot: number, raw: readonly number[]): void {
    const canonical = this.canonicalCodes(raw);
    if (canonical.length === raw.length) this.rawBlockers.delete(slot);
    else this.rawBlockers.set(slot, [...raw]);
    const len = canonical.length;
    const old = this.blockerLen[slot]!;
    if (len <= old) {
      // Fits where it was.
      this.poolGarbage += old - len;
    } else {
      this.blockerLen[slot] = 0;
      this.poolGarbage += old;
      if (this.poolUsed + len > this.blockerPool.length) this.compactPool(len);
      this.blockerStart[slot] = this.poolUsed;
      this.poolUsed += len;
    }
    const start = this.blockerStart[slot]!;
    for (let k = 0; k < len; k++) this.blockerPool[start + k] = canonical[k]!;
    this.blockerLen[slot] = len;
    this.changes += 1;
    this.ruleChanges += 1;
    if (len === 0) this.release(slot);
  }

  /** Copies live rows to the front of a (maybe larger) pool, so room for `need` more is free. */
  private compactPool(need: number): void {
    const live = this.poolUsed - this.poolGarbage;
    const size = Math.max(256, (live + need) * 2);
    const pool = new Int32Array(size);
    let used = 0;
    for (let s = 0; s < this.size; s++) {
      const len = this.blockerLen[s]!;
      if (len === 0) continue;
      pool.set(this.blockersOfSlot(s), used);
      this.blockerStart[s] = used;
      used += len;
    }
    this.blockerPool = pool;
    this.poolUsed = used;
    this.poolGarbage = 0;
  }

  /** A cross-repository issue's state (or an own number the graph has no issue row for). */
  setExternal(ref: string, state: "open" | "closed", closedAt: string | null | undefined): void {
    const canonical = canonicalRef(ref, this.repo);
    const id = this.keyId(refKey(canonical));
    this.externalState[id] = state === "open" ? STATE_OPEN : STATE_CLOSED;
    this.externalClosedMs[id] = closedAt ? instantMs(closedAt) : Number.NaN;
    this.externalRef[id] = ref;
    this.changes += 1;
    this.ruleChanges += 1;
  }

  private role(label: string): number {
    const [ready, human, processing] = this.roleLabels;
    if (label === ready) return ROLE_READY;
    if (label === human) return ROLE_HUMAN;
    if (label === processing) return ROLE_PROCESSING;
    return -1;
  }

  /**
   * A label event. The latest event of a label wins (shared/graph/labels.ts); at equal times
   * the later one in list order: `listOrder` when events arrive in their list's order (a
   * snapshot, or rows read ordered by time and action), otherwise as the stored rows would list
   * them (by time, then `labeled` before `unlabeled`).
   */
  labelEvent(
    number: number,
    label: string,
    action: "labeled" | "unlabeled",
    createdMs: number,
    listOrder = false,
  ): void {
    const role = this.role(label);
    if (role === -1) return;
    const slot = this.slotFor(number);
    const k = slot * ROLES + role;
    const labeled = action === "labeled" ? 1 : 0;
    const latest = this.eventMs[k]!;
    if (
      Number.isNaN(latest) ||
      createdMs > latest ||
      (createdMs === latest && (listOrder || labeled === 0 || this.eventLabeled[k] === 1))
    ) {
      this.eventMs[k] = createdMs;
      this.eventLabeled[k] = labeled;
    }
    if (labeled === 1 && !(this.labeledMs[k]! >= createdMs)) this.labeledMs[k] = createdMs;
    this.changes += 1;
    this.ruleChanges += 1;
  }

  /** Every label event of an issue goes. */
  deleteLabelEvents(number: number): void {
    const slot = this.slotOf(number);
    if (slot === -1) return;
    for (let r = 0; r < ROLES; r++) {
      this.eventMs[slot * ROLES + r] = Number.NaN;
      this.eventLabeled[slot * ROLES + r] = 0;
      this.labeledMs[slot * ROLES + r] = Number.NaN;
    }
    this.changes += 1;
    this.ruleChanges += 1;
    this.release(slot);
  }

  // --- reading ----------------------------------------------------------------------------

  private orderCache: { membership: number; order: Int32Array } | null = null;

  /** Slots with an issue row, ascending by issue number (redone only when membership changed). */
  order(): Int32Array {
    if (this.orderCache?.membership === this.membership) return this.orderCache.order;
    let count = 0;
    for (let s = 0; s < this.size; s++) if (this.state[s] !== STATE_NONE) count += 1;
    const order = new Int32Array(count);
    if (this.sparse.size === 0) {
      // Dense numbers: walking the index is already ascending.
      let k = 0;
      for (let n = 0; n < this.dense.length && k < count; n++) {
        const s = this.dense[n]!;
        if (s !== -1 && this.state[s] !== STATE_NONE) order[k++] = s;
      }
    } else {
      const keyed = new Float64Array(count);
      let k = 0;
      for (let s = 0; s < this.size; s++)
        if (this.state[s] !== STATE_NONE) keyed[k++] = this.number[s]! * 2 ** 21 + s;
      keyed.sort();
      for (let i = 0; i < count; i++) order[i] = keyed[i]! % 2 ** 21;
    }
    this.orderCache = { membership: this.membership, order };
    return order;
  }

  /** How many issues (issue rows) the graph holds. */
  issueCount(): number {
    return this.order().length;
  }

  labelsOf(slot: number): readonly string[] {
    const id = this.labelSet[slot]!;
    return id === -1 ? (NONE as unknown as readonly string[]) : this.labelSets[id]!.labels;
  }

  requiresOf(slot: number): readonly string[] {
    return this.requiresSets[this.requiresSet[slot]!]!;
  }

  /** Issue rows of a given state, per slot: `STATE_OPEN`, `STATE_CLOSED` or `STATE_NONE`. */
  stateAt(slot: number): number {
    return this.state[slot]!;
  }
}

/** A compact graph holding what `snapshot` holds (the same rows, in the snapshot's order). */
export function compactFromSnapshot(
  snapshot: Snapshot,
  labels: Pick<LabelNames, "ready" | "needsHuman" | "processing">,
): CompactGraph {
  // Sized up front: growing the columns by doubling copied them over and over. Indexed loops,
  // no `?? []`: a fresh process runs this loop before it is optimized, and there every iterator
  // and empty list is an object, megabytes of garbage over 100k issues.
  const issues = snapshot.issues;
  let maxNumber = 0;
  let blockers = 0;
  for (let i = 0; i < issues.length; i++) {
    const issue = issues[i]!;
    if (issue.number > maxNumber) maxNumber = issue.number;
    if (issue.blockedBy) blockers += issue.blockedBy.length;
  }
  const graph = new CompactGraph(snapshot.repo, labels, {
    slots: issues.length,
    maxNumber,
    blockers,
  });
  for (let i = 0; i < issues.length; i++) {
    const issue = issues[i]!;
    graph.upsertIssueRow(issue.number, issue.title, issue.state, issue.closedAt, issue.labels);
    if (issue.parent !== undefined && issue.parent !== null)
      graph.setParent(issue.number, issue.parent);
    if (issue.blockedBy?.length) graph.setBlockers(issue.number, issue.blockedBy);
    const events = issue.labelEvents;
    if (events === undefined) continue;
    for (let k = 0; k < events.length; k++) {
      const event = events[k]!;
      graph.labelEvent(issue.number, event.label, event.action, instantMs(event.createdAt), true);
    }
  }
  for (const entry of snapshot.external ?? [])
    graph.setExternal(entry.ref, entry.state, entry.closedAt);
  return graph;
}
