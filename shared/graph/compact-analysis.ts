import type { Diagnostic, GraphAnalysis, GraphIndex, IssueFacts } from "./analyze.ts";
import { type CompactGraph, STATE_NONE, STATE_OPEN } from "./compact.ts";
import { findCyclesInRows } from "./cycles.ts";
import { rotateForMachine } from "./hash.ts";
import { findKicks, type Kick } from "./kicks.ts";
import {
  HAS_PROCESSING,
  labelSetBits,
  lockStaleAtMs,
  SET_EPIC,
  SET_HELD,
  SET_STUCK,
  STANCE_WAITING,
  STANCES,
  stanceAt,
} from "./labels.ts";
import {
  type ResolvedScanOptions,
  resolveScanOptions,
  type ScanOptions,
  windowOf,
} from "./options.ts";
import { canonicalRef, compareRefs, type IssueRef, refKey } from "./refs.ts";
import type { ScanResult } from "./scan.ts";
import { scratch } from "./scratch.ts";
import type { ExternalIssue, Snapshot, SnapshotIssue } from "./snapshot.ts";
import { formatInstant } from "./time.ts";

/** Facts bits per slot. */
const READY = 1;
const HELD = 2;
const STUCK = 4;
const EPIC = 8;
const LOCK = 16;
/** The stance code (shared/graph/labels.ts) sits above the other facts bits. */
const STANCE_SHIFT = 5;

const NONE: readonly never[] = Object.freeze([]);
/** `analyzeCompactSteps` yields after every this many issues of a pass, and between passes. */
const STEP = 1 << 15;

/**
 * The rules of the graph (spec 3.2) over a `CompactGraph`: facts per open issue, kicks, cycles
 * and diagnostics, held in typed arrays indexed by slot. Reverse edges (children, what each
 * issue blocks) are rebuilt per analysis as compressed rows, so the analysis allocates a
 * handful of arrays, not one object per issue. The label rules are in shared/graph/labels.ts,
 * the kicks in shared/graph/kicks.ts; readiness is decided here, in the facts pass.
 */
export interface CompactAnalysis {
  graph: CompactGraph;
  options: ResolvedScanOptions;
  /** Slots with an issue row, ascending by number; and the open ones. */
  order: Int32Array;
  openOrder: Int32Array;
  flags: Uint8Array;
  childCount: Int32Array;
  openChildren: Int32Array;
  /** Children of a slot: `childSlots[childStart[s] .. childStart[s + 1])`, ascending. */
  childStart: Int32Array;
  childSlots: Int32Array;
  /** Own issues a slot blocks: `blocksSlots[blocksStart[s] .. blocksStart[s + 1])`, ascending. */
  blocksStart: Int32Array;
  blocksSlots: Int32Array;
  /** Own issues blocked by a reference the graph has no issue row for, by `refKey`. */
  blocksElsewhere: Map<string, number[]>;
  /** Open (or unknown) blockers per open slot: codes `openPool[openStart[s] .. + openLen[s])`. */
  openStart: Int32Array;
  openLen: Int32Array;
  openPool: Int32Array;
  kicks: Kick[];
  diagnostics: Diagnostic[];
  stats: ScanResult["stats"];
  /** When the earliest fresh processing lock goes stale: the facts hold until then. */
  validUntilMs: number;
}

/**
 * Where one analysis gets its arrays (shared/graph/scratch.ts): `scratch` ones go back to the
 * pool when it ends; `owned` ones become the result's, and go back only if it is abandoned.
 */
interface Lender {
  scratch(length: number, fill?: number): Int32Array;
  owned(length: number): Int32Array;
  ownedBytes(length: number): Uint8Array;
}

/** Rows of a compressed adjacency from per-row counts; `fill` hands out positions in row order. */
function rowsFrom(
  counts: Int32Array,
  lend: Lender,
): { start: Int32Array; values: Int32Array; fill: Int32Array } {
  const start = lend.owned(counts.length + 1);
  for (let i = 0; i < counts.length; i++) start[i + 1] = start[i]! + counts[i]!;
  const fill = lend.scratch(counts.length);
  fill.set(start.subarray(0, counts.length));
  return { start, values: lend.owned(start[counts.length]!), fill };
}

export function analyzeCompact(
  graph: CompactGraph,
  scanOptions: ScanOptions = {},
): CompactAnalysis {
  const steps = analyzeCompactSteps(graph, scanOptions);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * `analyzeCompact` in steps: it yields between its passes over the graph, so a caller can let
 * other work in between (each pass is linear; at 100k issues a few tens of milliseconds). The
 * graph must not change until it returns; a caller that let changes in starts again.
 */
export function* analyzeCompactSteps(
  graph: CompactGraph,
  scanOptions: ScanOptions = {},
): Generator<void, CompactAnalysis, void> {
  // Every array is borrowed: scratch ones go back when the analysis ends, and the result's own
  // go back too when it never finishes (a caller abandoning a voided one calls `return()`).
  const lent: ArrayBufferView[] = [];
  const owned: ArrayBufferView[] = [];
  const lend: Lender = {
    scratch: (length, fill = 0) => keep(lent, scratch.int32(length, fill)),
    owned: (length) => keep(owned, scratch.int32(length)),
    ownedBytes: (length) => keep(owned, scratch.uint8(length)),
  };
  let finished = false;
  try {
    const analysis = yield* analysisPasses(graph, scanOptions, lend);
    finished = true;
    OWNED.set(analysis, owned);
    return analysis;
  } finally {
    scratch.release(...lent);
    if (!finished) scratch.release(...owned);
  }
}

/** The arrays each finished analysis borrowed for itself, until `releaseAnalysis`. */
const OWNED = new WeakMap<CompactAnalysis, ArrayBufferView[]>();
const NO_SLOTS = new Int32Array(0);

/**
 * Gives an analysis's own arrays back to the pool: for its owner, when it replaces the analysis
 * by a newer one (the kept scan, the queue view). Nothing may read the analysis afterwards (its
 * readers use it synchronously, never across an await): its arrays are swapped for empty ones, so
 * a reader that broke the rule reads nothing rather than another analysis's numbers. Analyses
 * not made by `analyzeCompactSteps`, or released already, are left as they are.
 */
export function releaseAnalysis(a: CompactAnalysis | undefined): void {
  const owned = a === undefined ? undefined : OWNED.get(a);
  if (a === undefined || owned === undefined) return;
  OWNED.delete(a);
  a.openOrder = NO_SLOTS;
  a.flags = new Uint8Array(0);
  a.childCount = NO_SLOTS;
  a.openChildren = NO_SLOTS;
  a.childStart = NO_SLOTS;
  a.childSlots = NO_SLOTS;
  a.blocksStart = NO_SLOTS;
  a.blocksSlots = NO_SLOTS;
  a.openStart = NO_SLOTS;
  a.openLen = NO_SLOTS;
  a.openPool = NO_SLOTS;
  scratch.release(...owned);
}

function keep<A extends ArrayBufferView>(list: ArrayBufferView[], array: A): A {
  list.push(array);
  return array;
}

function* analysisPasses(
  graph: CompactGraph,
  scanOptions: ScanOptions,
  lend: Lender,
): Generator<void, CompactAnalysis, void> {
  const options = resolveScanOptions({ repo: graph.repo, issues: [] } as Snapshot, scanOptions);
  const { labels } = options.config;
  if (!graph.fits(graph.repo, labels)) {
    throw new Error("the compact graph was built for other label names: rebuild it");
  }
  const size = graph.size;
  const order = graph.order();
  // Each pass is a function of its own over a range of `order`, called a chunk at a time: the
  // caller can pause between chunks, and a fresh process (the CLI) optimizes each small pass on
  // its own instead of one large function again for every loop in it.
  const edges: EdgePass = {
    open: 0,
    edges: 0,
    childCounts: lend.owned(size),
    blockCounts: lend.scratch(size),
    blocksElsewhere: new Map(),
    parentSlot: lend.scratch(size, -1),
    edgeSlot: lend.scratch(graph.blockerPool.length),
  };
  for (let from = 0; from < order.length; from += STEP) {
    resolveEdges(graph, order, from, Math.min(from + STEP, order.length), edges);
    yield;
  }
  const children = rowsFrom(edges.childCounts, lend);
  const blocks = rowsFrom(edges.blockCounts, lend);
  for (let from = 0; from < order.length; from += STEP) {
    fillReverseRows(
      graph,
      order,
      from,
      Math.min(from + STEP, order.length),
      edges,
      children,
      blocks,
    );
    yield;
  }

  const facts: FactsPass = {
    options,
    ttlMs: options.config.locks.processingTtlMinutes * 60_000,
    setBits: labelSetBits(graph, labels),
    edgeSlot: edges.edgeSlot,
    children,
    flags: lend.ownedBytes(size),
    openChildren: lend.owned(size),
    openStart: lend.owned(size),
    openLen: lend.owned(size),
    openPool: lend.owned(edges.edges),
    poolUsed: 0,
    openOrder: lend.owned(edges.open),
    openCount: 0,
    unresolved: [],
    adjStart: lend.scratch(size),
    adjLen: lend.scratch(size),
    adjPool: lend.scratch(edges.edges),
    adjUsed: 0,
    cycleRoots: [],
    validUntilMs: Number.POSITIVE_INFINITY,
    ownlessKey: new Map(),
  };
  for (let from = 0; from < order.length; from += STEP) {
    decideFacts(graph, order, from, Math.min(from + STEP, order.length), facts);
    yield;
  }

  const analysis: CompactAnalysis = {
    graph,
    options,
    order,
    openOrder: facts.openOrder,
    flags: facts.flags,
    childCount: edges.childCounts,
    openChildren: facts.openChildren,
    childStart: children.start,
    childSlots: children.values,
    blocksStart: blocks.start,
    blocksSlots: blocks.values,
    blocksElsewhere: edges.blocksElsewhere,
    openStart: facts.openStart,
    openLen: facts.openLen,
    openPool: facts.openPool,
    kicks: [],
    diagnostics: [],
    stats: { issues: order.length, open: edges.open, edges: edges.edges },
    validUntilMs: facts.validUntilMs,
  };
  analysis.kicks = findKicks(analysis);
  yield;

  const { number: numberAt } = graph;
  const cycles = findCyclesInRows(
    size,
    facts.adjStart,
    facts.adjLen,
    facts.adjPool,
    facts.cycleRoots,
  )
    .map((slots) => slots.map((s) => numberAt[s]!).sort((a, b) => a - b))
    .sort((a, b) => a[0]! - b[0]!);
  const { unresolved } = facts;
  unresolved.sort((a, b) => a.issue - b.issue || compareRefs(a.ref, b.ref));
  analysis.diagnostics = [
    ...cycles.map((issues) => ({ kind: "cycle" as const, issues })),
    ...unresolved,
  ];
  return analysis;
}

/** The first pass's results: counts, and each edge's target slot. */
interface EdgePass {
  open: number;
  edges: number;
  childCounts: Int32Array;
  blockCounts: Int32Array;
  /** Own issues blocked by a reference the graph has no issue row for, by `refKey`. */
  blocksElsewhere: Map<string, number[]>;
  /**
   * Each edge's target slot, resolved once (-1: no issue row): the later passes reuse it
   * instead of looking numbers up again (random reads are what a large graph's scan costs).
   */
  parentSlot: Int32Array;
  edgeSlot: Int32Array;
}

/** Counts open issues, edges, children and what each issue blocks; resolves edge targets. */
function resolveEdges(
  graph: CompactGraph,
  order: Int32Array,
  from: number,
  to: number,
  e: EdgePass,
): void {
  const { state, parent, blockerStart, blockerLen, blockerPool } = graph;
  const { childCounts, blockCounts, parentSlot, edgeSlot, blocksElsewhere } = e;
  let open = e.open;
  let edges = e.edges;
  for (let i = from; i < to; i++) {
    const s = order[i]!;
    if (state[s] === STATE_OPEN) open += 1;
    const p = parent[s]!;
    if (p !== 0) {
      edges += 1;
      if (p > 0) {
        const ps = graph.presentSlot(p);
        parentSlot[s] = ps;
        if (ps !== -1) childCounts[ps]! += 1;
      }
    }
    const start = blockerStart[s]!;
    const len = blockerLen[s]!;
    edges += len;
    for (let k = start; k < start + len; k++) {
      const code = blockerPool[k]!;
      const bs = code > 0 ? graph.presentSlot(code) : -1;
      edgeSlot[k] = bs;
      if (bs !== -1) blockCounts[bs]! += 1;
      else {
        const key = code > 0 ? `#${code}` : graph.keys[graph.spellingKey[-code - 1]!]!;
        const list = blocksElsewhere.get(key);
        if (list) list.push(s);
        else blocksElsewhere.set(key, [s]);
      }
    }
  }
  e.open = open;
  e.edges = edges;
}

type Rows = ReturnType<typeof rowsFrom>;

/** Children and what each issue blocks, filled in ascending order so rows come out sorted. */
function fillReverseRows(
  graph: CompactGraph,
  order: Int32Array,
  from: number,
  to: number,
  e: EdgePass,
  children: Rows,
  blocks: Rows,
): void {
  const { blockerStart, blockerLen } = graph;
  const { parentSlot, edgeSlot } = e;
  for (let i = from; i < to; i++) {
    const s = order[i]!;
    const ps = parentSlot[s]!;
    if (ps !== -1) children.values[children.fill[ps]!++] = s;
    const start = blockerStart[s]!;
    for (let k = start; k < start + blockerLen[s]!; k++) {
      const bs = edgeSlot[k]!;
      if (bs !== -1) blocks.values[blocks.fill[bs]!++] = s;
    }
  }
}

/** The facts pass's inputs, the arrays it fills and its running counts. */
interface FactsPass {
  options: ResolvedScanOptions;
  ttlMs: number;
  setBits: Uint8Array;
  edgeSlot: Int32Array;
  children: Rows;
  flags: Uint8Array;
  openChildren: Int32Array;
  openStart: Int32Array;
  openLen: Int32Array;
  openPool: Int32Array;
  poolUsed: number;
  openOrder: Int32Array;
  openCount: number;
  unresolved: Array<Extract<Diagnostic, { kind: "unresolved-ref" }>>;
  /** Own open → own open blocker edges, the only ones a cycle can run along. */
  adjStart: Int32Array;
  adjLen: Int32Array;
  adjPool: Int32Array;
  adjUsed: number;
  cycleRoots: number[];
  validUntilMs: number;
  /** Key ids of own numbers without an issue row, looked up once each. */
  ownlessKey: Map<number, number>;
}

/**
 * The facts of each open issue: its open blockers (unknown ones too, fail closed), open
 * children, reservations, processing lock and stance, and whether it is ready.
 */
function decideFacts(
  graph: CompactGraph,
  order: Int32Array,
  from: number,
  to: number,
  f: FactsPass,
): void {
  const { state, number: numberAt, blockerStart, blockerLen, blockerPool, labelSet } = graph;
  const { options, ttlMs, setBits, edgeSlot, children, flags, openChildren } = f;
  const { openStart, openLen, openPool, openOrder, adjStart, adjLen, adjPool } = f;
  let { poolUsed, openCount, adjUsed, validUntilMs } = f;
  for (let i = from; i < to; i++) {
    const s = order[i]!;
    if (state[s] !== STATE_OPEN) continue;
    openOrder[openCount++] = s;
    const n = numberAt[s]!;
    openStart[s] = poolUsed;
    adjStart[s] = adjUsed;
    const start = blockerStart[s]!;
    for (let k = start; k < start + blockerLen[s]!; k++) {
      const code = blockerPool[k]!;
      const bs = edgeSlot[k]!;
      const st = bs !== -1 ? state[bs]! : stateOfCode(graph, code, f.ownlessKey);
      if (st === STATE_NONE) {
        // Fail closed: an issue we cannot see might still be open.
        f.unresolved.push({ kind: "unresolved-ref", issue: n, ref: graph.refOf(code) });
        openPool[poolUsed++] = code;
      } else if (st === STATE_OPEN) {
        openPool[poolUsed++] = code;
        if (bs !== -1) adjPool[adjUsed++] = bs;
      }
    }
    openLen[s] = poolUsed - openStart[s]!;
    adjLen[s] = adjUsed - adjStart[s]!;
    if (adjLen[s]! > 0) f.cycleRoots.push(s);

    let open = 0;
    for (let k = children.start[s]!; k < children.start[s + 1]!; k++)
      if (state[children.values[k]!] === STATE_OPEN) open += 1;
    openChildren[s] = open;

    const set = labelSet[s]!;
    const b = set === -1 ? 0 : setBits[set]!;
    let bits = 0;
    if (b & SET_HELD) bits |= HELD;
    if (b & SET_STUCK) bits |= STUCK;
    if (b & SET_EPIC) bits |= EPIC;
    if (b & HAS_PROCESSING && options.ownLocks?.has(n) !== true) {
      const staleAt = lockStaleAtMs(graph, s, ttlMs);
      if (staleAt > options.nowMs) {
        bits |= LOCK;
        if (staleAt < validUntilMs) validUntilMs = staleAt;
      }
    }
    const stance = stanceAt(graph, s, b);
    bits |= stance << STANCE_SHIFT;
    // Ready: open, not blocked, no open children, not reserved, no fresh lock, not waiting.
    if (
      openLen[s] === 0 &&
      open === 0 &&
      (bits & (HELD | STUCK | EPIC | LOCK)) === 0 &&
      stance !== STANCE_WAITING
    )
      bits |= READY;
    flags[s] = bits;
  }
  f.poolUsed = poolUsed;
  f.openCount = openCount;
  f.adjUsed = adjUsed;
  f.validUntilMs = validUntilMs;
}

/**
 * State of a blocker code without an issue row: STATE_OPEN or STATE_CLOSED from `external`, or
 * STATE_NONE when nothing says.
 */
function stateOfCode(graph: CompactGraph, code: number, ownlessKey: Map<number, number>): number {
  if (code > 0) {
    const slot = graph.presentSlot(code);
    if (slot !== -1) return graph.state[slot]!;
    let key = ownlessKey.get(code);
    if (key === undefined) {
      key = graph.knownKey(`#${code}`);
      ownlessKey.set(code, key);
    }
    return key === -1 ? STATE_NONE : graph.externalState[key]!;
  }
  return graph.externalState[graph.spellingKey[-code - 1]!]!;
}

// --- reading the analysis --------------------------------------------------------------------

export function isReady(a: CompactAnalysis, slot: number): boolean {
  return (a.flags[slot]! & READY) !== 0;
}

/** The open blockers of an open slot, as references. */
export function openBlockersOf(a: CompactAnalysis, slot: number): IssueRef[] {
  const out = new Array<IssueRef>(a.openLen[slot]!);
  for (let k = 0; k < out.length; k++) out[k] = a.graph.refOf(a.openPool[a.openStart[slot]! + k]!);
  return out;
}

export function childrenOf(a: CompactAnalysis, slot: number): number[] {
  const from = a.childStart[slot]!;
  const to = a.childStart[slot + 1]!;
  const out = new Array<number>(to - from);
  for (let k = from; k < to; k++) out[k - from] = a.graph.number[a.childSlots[k]!]!;
  return out;
}

/** The facts object of an open slot. */
export function factsAt(a: CompactAnalysis, slot: number): IssueFacts {
  const f = a.flags[slot]!;
  return {
    number: a.graph.number[slot]!,
    openBlockers: a.openLen[slot] === 0 ? NONE : openBlockersOf(a, slot),
    childCount: a.childStart[slot + 1]! - a.childStart[slot]!,
    openChildren: a.openChildren[slot]!,
    held: (f & HELD) !== 0,
    stuck: (f & STUCK) !== 0,
    epicManaged: (f & EPIC) !== 0,
    freshLock: (f & LOCK) !== 0,
    stance: STANCES[(f >> STANCE_SHIFT) & 3]!,
    ready: (f & READY) !== 0,
  };
}

/** The ready issues, ascending (before any per-machine rotation). */
export function readyNumbers(a: CompactAnalysis): number[] {
  const out: number[] = [];
  for (let i = 0; i < a.openOrder.length; i++) {
    const s = a.openOrder[i]!;
    if ((a.flags[s]! & READY) !== 0) out.push(a.graph.number[s]!);
  }
  return out;
}

/** The scan output of spec 3.3. */
export function renderCompactScan(a: CompactAnalysis): ScanResult {
  const rollupCandidates: ScanResult["rollupCandidates"] = [];
  const blocked: ScanResult["blocked"] = [];
  for (let i = 0; i < a.openOrder.length; i++) {
    const s = a.openOrder[i]!;
    const n = a.graph.number[s]!;
    const childCount = a.childStart[s + 1]! - a.childStart[s]!;
    if (childCount > 0 && a.openChildren[s] === 0)
      rollupCandidates.push({ number: n, children: childrenOf(a, s) });
    if (a.openLen[s]! > 0) blocked.push({ number: n, blockers: openBlockersOf(a, s) });
  }
  return {
    repo: a.graph.repo,
    now: formatInstant(a.options.nowMs),
    window: windowOf(a.options),
    kicks: a.kicks,
    rollupCandidates,
    blocked,
    ready: rotateForMachine(readyNumbers(a), a.options.machine),
    diagnostics: a.diagnostics,
    stats: a.stats,
  };
}

/** `scan` over a compact graph. */
export function scanCompact(graph: CompactGraph, options: ScanOptions = {}): ScanResult {
  return renderCompactScan(analyzeCompact(graph, options));
}

const COMPACT = new WeakMap<GraphAnalysis, CompactAnalysis>();

/** The compact analysis a `GraphAnalysis` was made from (`asGraphAnalysis`), if any. */
export function compactOf(analysis: GraphAnalysis): CompactAnalysis | undefined {
  return COMPACT.get(analysis);
}

/**
 * The analysis in the shape of `GraphAnalysis`, for the rules written against it (the producer's
 * plan, the queue, impact): issues and facts are made on demand, one at a time; `open` and
 * `graph.sorted` only when read. Issues carry what the compact graph keeps (number, title,
 * state, close time, labels); their other fields are empty.
 */
export function asGraphAnalysis(a: CompactAnalysis): GraphAnalysis {
  const { graph } = a;
  const issueAt = (slot: number): SnapshotIssue => {
    const closedMs = graph.closedMs[slot]!;
    return {
      number: graph.number[slot]!,
      title: graph.titles[slot]!,
      state: graph.state[slot] === STATE_OPEN ? "open" : "closed",
      stateReason: null,
      createdAt: "",
      updatedAt: "",
      closedAt: Number.isNaN(closedMs) ? null : formatInstant(closedMs),
      // Shared and frozen (one list per distinct label set): read, never written.
      labels: graph.labelsOf(slot) as string[],
    };
  };
  let sorted: SnapshotIssue[] | undefined;
  let open: IssueFacts[] | undefined;
  let ready: IssueFacts[] | undefined;
  let positions: Int32Array | undefined;
  let external: Map<string, ExternalIssue> | undefined;
  const present = (n: number) => graph.presentSlot(n);
  const index: GraphIndex = {
    repo: graph.repo,
    get sorted() {
      sorted ??= Array.from(a.order, issueAt);
      return sorted;
    },
    issue: (n) => {
      const s = present(n);
      return s === -1 ? undefined : issueAt(s);
    },
    slotOf: (n) => {
      const s = present(n);
      if (s === -1) return -1;
      if (positions === undefined) {
        positions = new Int32Array(graph.size);
        for (let i = 0; i < a.order.length; i++) positions[a.order[i]!] = i;
      }
      return positions[s]!;
    },
    blockersOf: (n) => {
      const s = present(n);
      if (s === -1) return NONE;
      return Array.from(graph.blockersOfSlot(s), (c) => graph.refOf(c));
    },
    parentOf: (n) => {
      const s = present(n);
      return s === -1 || graph.parent[s] === 0 ? undefined : graph.refOf(graph.parent[s]!);
    },
    childrenOf: (n) => {
      const s = present(n);
      return s === -1 ? NONE : childrenOf(a, s);
    },
    childCount: (n) => {
      const s = present(n);
      return s === -1 ? 0 : a.childStart[s + 1]! - a.childStart[s]!;
    },
    openChildCount: (n) => {
      const s = present(n);
      if (s === -1) return 0;
      let count = 0;
      for (let k = a.childStart[s]!; k < a.childStart[s + 1]!; k++)
        if (graph.state[a.childSlots[k]!] === STATE_OPEN) count += 1;
      return count;
    },
    blockedBy: (ref) => {
      const s = typeof ref === "number" ? present(ref) : -1;
      if (s !== -1) {
        const out: number[] = [];
        for (let k = a.blocksStart[s]!; k < a.blocksStart[s + 1]!; k++)
          out.push(graph.number[a.blocksSlots[k]!]!);
        return out;
      }
      return (a.blocksElsewhere.get(refKey(ref)) ?? NONE).map((x) => graph.number[x]!);
    },
    get external() {
      if (external === undefined) {
        external = new Map();
        for (let id = 0; id < graph.keys.length; id++) {
          const ref = graph.externalRef[id];
          if (ref === undefined) continue;
          const key = graph.keys[id]!;
          if (key.startsWith("#") && present(Number(key.slice(1))) !== -1) continue;
          const ms = graph.externalClosedMs[id]!;
          external.set(key, {
            ref,
            state: graph.externalState[id] === STATE_OPEN ? "open" : "closed",
            closedAt: Number.isNaN(ms) ? null : formatInstant(ms),
          });
        }
      }
      return external;
    },
    edgeCount: a.stats.edges,
    stateOf: (ref) => {
      const canonical = canonicalRef(ref, graph.repo);
      if (typeof canonical === "number") {
        const s = present(canonical);
        if (s !== -1) return graph.state[s] === STATE_OPEN ? "open" : "closed";
      }
      const key = graph.knownKey(refKey(canonical));
      const st = key === -1 ? STATE_NONE : graph.externalState[key]!;
      return st === STATE_NONE ? undefined : st === STATE_OPEN ? "open" : "closed";
    },
    withLabel: (label) => {
      const out: number[] = [];
      for (let i = 0; i < a.order.length; i++) {
        const s = a.order[i]!;
        if (graph.labelsOf(s).includes(label)) out.push(graph.number[s]!);
      }
      return out;
    },
  };
  const adapted: GraphAnalysis = {
    graph: index,
    options: a.options,
    get open() {
      open ??= Array.from(a.openOrder, (s) => factsAt(a, s));
      return open;
    },
    factsOf: (n) => {
      const s = present(n);
      return s === -1 || graph.state[s] !== STATE_OPEN ? undefined : factsAt(a, s);
    },
    readyFacts: () => {
      if (ready === undefined) {
        ready = [];
        for (let i = 0; i < a.openOrder.length; i++) {
          const s = a.openOrder[i]!;
          if ((a.flags[s]! & READY) !== 0) ready.push(factsAt(a, s));
        }
      }
      return ready;
    },
    kicks: a.kicks,
    diagnostics: a.diagnostics,
  };
  COMPACT.set(adapted, a);
  return adapted;
}
