// The oracle's scan output (see ./analyze.ts): spec 3.3 rendered from the object-based analysis.
import type { GraphAnalysis } from "../../../shared/graph/analyze.ts";
import { rotateForMachine } from "../../../shared/graph/hash.ts";
import { type ScanOptions, windowOf } from "../../../shared/graph/options.ts";
import type { IssueRef } from "../../../shared/graph/refs.ts";
import type { ScanResult } from "../../../shared/graph/scan.ts";
import type { Snapshot } from "../../../shared/graph/snapshot.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import { analyzeGraph } from "./analyze.ts";

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
      blocked.push({ number: n, blockers: [...facts.openBlockers] as IssueRef[] });
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

/** The oracle's `scan`. */
export function oracleScan(snapshot: Snapshot, options: ScanOptions = {}): ScanResult {
  return renderScan(analyzeGraph(snapshot, options));
}
