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

  const openBlockers = new Map<number, IssueRef[]>();
  for (const issue of graph.issues.values()) {
    if (issue.state !== "open") continue;
    const open: IssueRef[] = [];
    for (const ref of graph.blockers.get(issue.number) ?? []) {
      const state = graph.stateOf(ref);
      if (!state.known) {
        // Fail closed: an issue we cannot see might still be open.
        unresolved.push({ kind: "unresolved-ref", issue: issue.number, ref });
        open.push(ref);
      } else if (state.state === "open") {
        open.push(ref);
      }
    }
    openBlockers.set(issue.number, open);
  }

  const open = new Map<number, IssueFacts>();
  for (const issue of graph.issues.values()) {
    if (issue.state !== "open") continue;
    const blockers = openBlockers.get(issue.number) ?? [];
    const children = graph.children.get(issue.number) ?? [];
    let openChildren = 0;
    for (const child of children) if (graph.issues.get(child)?.state === "open") openChildren += 1;
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

  const kicks = findKicks(graph, openBlockers, options.windowFromMs, options.windowToMs);

  const openNumbers = [...open.keys()].sort((a, b) => a - b);
  const edges = new Map<number, number[]>();
  for (const n of openNumbers) {
    const own = (openBlockers.get(n) ?? []).filter(
      (ref): ref is number => typeof ref === "number" && open.has(ref),
    );
    if (own.length > 0) edges.set(n, own);
  }
  unresolved.sort((a, b) => a.issue - b.issue || compareRefs(a.ref, b.ref));
  const diagnostics: Diagnostic[] = [
    ...findCycles(openNumbers, edges).map((issues) => ({ kind: "cycle" as const, issues })),
    ...unresolved,
  ];
  return { graph, options, open, kicks, diagnostics };
}
