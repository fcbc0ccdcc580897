import { findCycles } from "./cycles.ts";
import { type GraphIndex, indexGraph } from "./index.ts";
import { findKicks, type Kick } from "./kicks.ts";
import {
  hasFreshProcessingLock,
  isEpicManaged,
  isHeld,
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
  children: readonly number[];
  openChildren: number;
  held: boolean;
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
  /** Facts for every open issue, keyed by number. */
  open: ReadonlyMap<number, IssueFacts>;
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

  const open = new Map<number, IssueFacts>();
  for (const issue of graph.sorted) {
    if (issue.state !== "open") continue;
    let blockers: readonly IssueRef[] = graph.blockersOf(issue.number);
    if (blockers.length > 0) {
      const stillOpen: IssueRef[] = [];
      for (const ref of blockers) {
        const state = graph.stateOf(ref);
        if (state === undefined) {
          // Fail closed: an issue we cannot see might still be open.
          unresolved.push({ kind: "unresolved-ref", issue: issue.number, ref });
          stillOpen.push(ref);
        } else if (state === "open") {
          stillOpen.push(ref);
        }
      }
      blockers = stillOpen;
    }
    const children = graph.childrenOf(issue.number);
    let openChildren = 0;
    for (const child of children) if (graph.issue(child)?.state === "open") openChildren += 1;
    const held = isHeld(issue, labels);
    const epicManaged = isEpicManaged(issue, labels);
    const freshLock = hasFreshProcessingLock(issue, labels, options.nowMs, ttlMs);
    const stance = labelStance(issue, labels);
    const ready =
      blockers.length === 0 &&
      openChildren === 0 &&
      !held &&
      !epicManaged &&
      !freshLock &&
      stance !== "waiting";
    open.set(issue.number, {
      number: issue.number,
      openBlockers: blockers,
      children,
      openChildren,
      held,
      epicManaged,
      freshLock,
      stance,
      ready,
    });
  }

  const kicks = findKicks(
    graph,
    (n) => open.get(n)?.openBlockers.length ?? 0,
    options.windowFromMs,
    options.windowToMs,
    options.causes,
  );

  // Only issues blocked by another open issue of this repository can sit on a cycle.
  const edges = new Map<number, number[]>();
  for (const facts of open.values()) {
    const own = facts.openBlockers.filter(
      (ref): ref is number => typeof ref === "number" && open.has(ref),
    );
    if (own.length > 0) edges.set(facts.number, own);
  }
  const roots = [...edges.keys()].sort((a, b) => a - b);
  unresolved.sort((a, b) => a.issue - b.issue || compareRefs(a.ref, b.ref));
  const diagnostics: Diagnostic[] = [
    ...findCycles(roots, edges).map((issues) => ({ kind: "cycle" as const, issues })),
    ...unresolved,
  ];
  return { graph, options, open, kicks, diagnostics };
}
