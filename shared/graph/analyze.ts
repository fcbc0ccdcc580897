import { DEFAULT_CONFIG } from "../config/defaults.ts";
import { compactFromSnapshot } from "./compact.ts";
import { analyzeCompact, asGraphAnalysis, type CompactAnalysis } from "./compact-analysis.ts";
import type { Kick } from "./kicks.ts";
import type { Stance } from "./labels.ts";
import type { ResolvedScanOptions, ScanOptions } from "./options.ts";
import type { IssueRef } from "./refs.ts";
import type { ExternalIssue, Snapshot, SnapshotIssue } from "./snapshot.ts";

/*
 * What an analysis of the graph answers, in the shape the rules written over issues read (the
 * producer's plan, the queue, the claim rules). One implementation makes it: the compact
 * analysis (shared/graph/compact-analysis.ts) seen through `asGraphAnalysis`. The object-based
 * analysis in test/support/oracle/ answers the same questions from issue objects; property
 * tests hold the two equal.
 */

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

/** The graph's issues and relations, looked up by issue number. */
export interface GraphIndex {
  repo: string;
  /** The snapshot's issues, ascending by number. */
  sorted: readonly SnapshotIssue[];
  issue(n: number): SnapshotIssue | undefined;
  /** Position of issue `n` in `sorted`, or -1 when the snapshot lacks it. */
  slotOf(n: number): number;
  /** Canonical blockers of an issue, deduplicated and sorted. */
  blockersOf(n: number): readonly IssueRef[];
  /** Canonical parent of an issue, if it has one. */
  parentOf(n: number): IssueRef | undefined;
  /** Own-repository children of a parent, ascending. */
  childrenOf(n: number): readonly number[];
  /** How many own-repository children a parent has, and how many are open (no list allocated). */
  childCount(n: number): number;
  openChildCount(n: number): number;
  /** The own issues a reference blocks, ascending. */
  blockedBy(ref: IssueRef): readonly number[];
  /** `external` entries by refKey; own-repository entries only where `issues` lacks the number. */
  external: ReadonlyMap<string, ExternalIssue>;
  edgeCount: number;
  /** `open`/`closed`, or undefined when the snapshot does not know the issue. */
  stateOf(ref: IssueRef): "open" | "closed" | undefined;
  /** The issues carrying `label`, ascending (open or closed). */
  withLabel(label: string): readonly number[];
}

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

/**
 * The compact analysis of a snapshot: its compact graph, built for the configured label names,
 * analysed at `options.now`, else the snapshot's `now`, else `options.clock`.
 */
export function analyzeSnapshotCompact(
  snapshot: Snapshot,
  options: ScanOptions = {},
): CompactAnalysis {
  const graph = compactFromSnapshot(snapshot, (options.config ?? DEFAULT_CONFIG).labels);
  // The compact graph does not keep the snapshot's `now`: it is passed with the options.
  const now = options.now ?? snapshot.now;
  return analyzeCompact(graph, now === undefined ? options : { ...options, now });
}

/** Every decision about a snapshot's graph, computed once; the producer's plan reads it. */
export function analyzeSnapshot(snapshot: Snapshot, options: ScanOptions = {}): GraphAnalysis {
  return asGraphAnalysis(analyzeSnapshotCompact(snapshot, options));
}
