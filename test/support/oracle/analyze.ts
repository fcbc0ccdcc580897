/*
 * The oracle: the graph's rules (spec 3.2) implemented a second time, over a snapshot's issue
 * objects, the plainest way they can be written. It was the first implementation; production
 * runs the compact analysis (shared/graph/compact-analysis.ts), and the property tests hold the
 * two equal (test/unit/graph/compact.test.ts, test/unit/graph/oracle.test.ts). Here only: no
 * production code imports test/support/.
 */
import type { Diagnostic, GraphAnalysis, IssueFacts } from "../../../shared/graph/analyze.ts";
import { findCyclesInRows } from "../../../shared/graph/cycles.ts";
import { resolveScanOptions, type ScanOptions } from "../../../shared/graph/options.ts";
import { compareRefs, type IssueRef } from "../../../shared/graph/refs.ts";
import type { Snapshot } from "../../../shared/graph/snapshot.ts";
import { indexGraph } from "./graph-index.ts";
import { findKicks } from "./kicks.ts";
import { hasFreshProcessingLock, isEpicManaged, isHeld, isStuck, labelStance } from "./labels.ts";

/** `findCyclesInRows` over per-node neighbour lists. */
function findCycles(
  size: number,
  adjacency: ReadonlyArray<readonly number[] | undefined>,
  roots: readonly number[],
): number[][] {
  if (roots.length === 0) return [];
  const adjStart = new Int32Array(size);
  const adjLen = new Int32Array(size);
  let total = 0;
  for (let n = 0; n < size; n++) {
    adjStart[n] = total;
    adjLen[n] = adjacency[n]?.length ?? 0;
    total += adjLen[n]!;
  }
  const adjPool = new Int32Array(total);
  for (let n = 0; n < size; n++) {
    const row = adjacency[n];
    if (row) adjPool.set(row, adjStart[n]!);
  }
  return findCyclesInRows(size, adjStart, adjLen, adjPool, roots);
}

/** Every decision about the graph, computed once; `scan` and the producer render from it. */
export function analyzeGraph(snapshot: Snapshot, scanOptions: ScanOptions = {}): GraphAnalysis {
  const options = resolveScanOptions(snapshot, scanOptions);
  const graph = indexGraph(snapshot);
  const { labels } = options.config;
  const ttlMs = options.config.locks.processingTtlMinutes * 60_000;
  const unresolved: Array<Extract<Diagnostic, { kind: "unresolved-ref" }>> = [];

  const open: IssueFacts[] = [];
  const bySlot: Array<IssueFacts | undefined> = new Array(graph.sorted.length);
  const factsOf = (n: number) => {
    const slot = graph.slotOf(n);
    return slot === -1 ? undefined : bySlot[slot];
  };
  // Only issues blocked by another open issue of this repository can sit on a cycle; the
  // search runs over slots (dense ids), so it needs no map of its own.
  const adjacency: Array<number[] | undefined> = new Array(graph.sorted.length);
  const cycleRoots: number[] = [];
  for (let slot = 0; slot < graph.sorted.length; slot++) {
    const issue = graph.sorted[slot]!;
    if (issue.state !== "open") continue;
    let blockers: readonly IssueRef[] = graph.blockersOf(issue.number);
    if (blockers.length > 0) {
      const stillOpen: IssueRef[] = [];
      let ownOpen: number[] | undefined;
      for (const ref of blockers) {
        const state = graph.stateOf(ref);
        if (state === undefined) {
          // Fail closed: an issue we cannot see might still be open.
          unresolved.push({ kind: "unresolved-ref", issue: issue.number, ref });
          stillOpen.push(ref);
        } else if (state === "open") {
          stillOpen.push(ref);
          // An open blocker of this repository: an edge a cycle could run along.
          const blockerSlot = typeof ref === "number" ? graph.slotOf(ref) : -1;
          if (blockerSlot !== -1) {
            if (ownOpen === undefined) ownOpen = [];
            ownOpen.push(blockerSlot);
          }
        }
      }
      blockers = stillOpen;
      if (ownOpen !== undefined) {
        adjacency[slot] = ownOpen;
        cycleRoots.push(slot);
      }
    }
    const childCount = graph.childCount(issue.number);
    const openChildren = childCount === 0 ? 0 : graph.openChildCount(issue.number);
    const held = isHeld(issue, labels);
    const stuck = isStuck(issue, labels);
    const epicManaged = isEpicManaged(issue, labels);
    const freshLock =
      options.ownLocks?.has(issue.number) !== true &&
      hasFreshProcessingLock(issue, labels, options.nowMs, ttlMs);
    const stance = labelStance(issue, labels);
    const ready =
      blockers.length === 0 &&
      openChildren === 0 &&
      !held &&
      !stuck &&
      !epicManaged &&
      !freshLock &&
      stance !== "waiting";
    const facts: IssueFacts = {
      number: issue.number,
      openBlockers: blockers,
      childCount,
      openChildren,
      held,
      stuck,
      epicManaged,
      freshLock,
      stance,
      ready,
    };
    open.push(facts);
    bySlot[slot] = facts;
  }

  const kicks = findKicks(
    graph,
    (n) => factsOf(n)?.openBlockers.length ?? 0,
    options.windowFromMs,
    options.windowToMs,
    options.causes,
  );

  const cycles = findCycles(graph.sorted.length, adjacency, cycleRoots)
    .map((slots) => slots.map((slot) => graph.sorted[slot]!.number).sort((a, b) => a - b))
    .sort((a, b) => a[0]! - b[0]!);
  unresolved.sort((a, b) => a.issue - b.issue || compareRefs(a.ref, b.ref));
  const diagnostics: Diagnostic[] = [
    ...cycles.map((issues) => ({ kind: "cycle" as const, issues })),
    ...unresolved,
  ];
  let ready: IssueFacts[] | undefined;
  const readyFacts = () => {
    ready ??= open.filter((f) => f.ready);
    return ready;
  };
  return { graph, options, open, factsOf, readyFacts, kicks, diagnostics };
}
