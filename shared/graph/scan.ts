import { analyzeGraph, type Diagnostic, type GraphAnalysis } from "./analyze.ts";
import { rotateForMachine } from "./hash.ts";
import type { Kick } from "./kicks.ts";
import { type ScanOptions, windowOf } from "./options.ts";
import type { IssueRef } from "./refs.ts";
import type { Snapshot } from "./snapshot.ts";
import { formatInstant } from "./time.ts";

/** The scan output of spec 3.3. Every list is sorted; identical input gives identical output. */
export interface ScanResult {
  repo: string;
  now: string;
  window: { from: string; to: string };
  kicks: Kick[];
  rollupCandidates: Array<{ number: number; children: number[] }>;
  blocked: Array<{ number: number; blockers: IssueRef[] }>;
  ready: number[];
  diagnostics: Diagnostic[];
  stats: { issues: number; open: number; edges: number };
}

export function renderScan(analysis: GraphAnalysis): ScanResult {
  const { graph, options, open } = analysis;

  const rollupCandidates: ScanResult["rollupCandidates"] = [];
  const blocked: ScanResult["blocked"] = [];
  const ready: number[] = [];
  for (const facts of open) {
    const n = facts.number;
    if (facts.childCount > 0 && facts.openChildren === 0) {
      rollupCandidates.push({ number: n, children: [...graph.childrenOf(n)] });
    }
    if (facts.openBlockers.length > 0)
      // The analysis made this list for this scan alone: no copy needed.
      blocked.push({ number: n, blockers: facts.openBlockers as IssueRef[] });
    if (facts.ready) ready.push(n);
  }
  return {
    repo: graph.repo,
    now: formatInstant(options.nowMs),
    window: windowOf(options),
    kicks: analysis.kicks,
    rollupCandidates,
    blocked,
    ready: rotateForMachine(ready, options.machine),
    diagnostics: analysis.diagnostics,
    stats: { issues: graph.sorted.length, open: open.length, edges: graph.edgeCount },
  };
}

/** Scans a validated snapshot (see `parseSnapshot`): kicks, rollups, blocked, ready, cycles. */
export function scan(snapshot: Snapshot, options: ScanOptions = {}): ScanResult {
  return renderScan(analyzeGraph(snapshot, options));
}
