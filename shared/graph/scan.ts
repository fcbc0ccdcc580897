import { analyzeSnapshotCompact, type Diagnostic } from "./analyze.ts";
import { renderCompactScan } from "./compact-analysis.ts";
import type { Kick } from "./kicks.ts";
import type { ScanOptions } from "./options.ts";
import type { IssueRef } from "./refs.ts";
import type { Snapshot } from "./snapshot.ts";

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

/** Scans a validated snapshot (see `parseSnapshot`): kicks, rollups, blocked, ready, cycles. */
export function scan(snapshot: Snapshot, options: ScanOptions = {}): ScanResult {
  return renderCompactScan(analyzeSnapshotCompact(snapshot, options));
}
