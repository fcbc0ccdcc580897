import { findCycles } from "./cycles.ts";
import { type GraphIndex, indexGraph } from "./index.ts";
import { findKicks, type Kick } from "./kicks.ts";
import {
  hasFreshProcessingLock,
  isEpicManaged,
  isHeld,
  isStuck,
  labelStance,
  type Stance,
} from "./labels.ts";
import { type ResolvedScanOptions, resolveScanOptions, type ScanOptions } from "./options.ts";
import { compareRefs, type IssueRef } from "./refs.ts";
import type { Snapshot } from "./snapshot.ts";

/** What the graph says about one open issue of the snapshot's repository. */
export interface IssueFacts {
  number: number;
  openBlockers: readonly IssueRef[];
  /** How many children (own repository) the issue has, and how many are open. */
  childCount: number;
  openChildren: number;
  held: boolean;
  /** Carries the stuck label (the fleet API's dead letter): reserved like hold. */
  stuck: boolean;
  epicManaged: boolean;
  freshLock: boolean;
  stance: Stance;
  ready: boolean;
}

export type Diagnostic =
  | { kind: "cycle"; issues: number[] }
  | { kind: "unresolved-ref"; issue: number; ref: IssueRef };

export interface GraphAnalysis {
  graph: GraphIndex;
  options: ResolvedScanOptions;
  /** Facts for every open issue, ascending by number. */
  open: readonly IssueFacts[];
  /** The facts of open issue `n`, or undefined when it is closed or unknown. */
  factsOf(n: number): IssueFacts | undefined;
  /** The facts of the ready issues, ascending (the producer and the queue read only these). */
  readyFacts(): readonly IssueFacts[];
  kicks: Kick[];
  diagnostics: Diagnostic[];
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
