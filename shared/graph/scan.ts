import { analyzeSnapshotCompact, type Diagnostic } from "./analyze.ts";
import { type CompactAnalysis, renderCompactScan } from "./compact-analysis.ts";
import type { Kick } from "./kicks.ts";
import type { ScanOptions } from "./options.ts";
import type { IssueRef } from "./refs.ts";
import type { Snapshot } from "./snapshot.ts";

/** One entry of `replies` (shared/queue/scan-replies.ts): trusted human input no agent answered. */
export interface ScanReplyEntry {
  number: number;
  reason: string;
  url: string;
  author: string;
  at: string;
}

/** The scan output of spec 3.3. Every list is sorted; identical input gives identical output. */
export interface ScanResult {
  repo: string;
  now: string;
  window: { from: string; to: string };
  kicks: Kick[];
  rollupCandidates: Array<{ number: number; children: number[] }>;
  blocked: Array<{ number: number; blockers: IssueRef[] }>;
  ready: number[];
  /** Only when the snapshot carries comments (spec 3.1): without them the output is unchanged. */
  replies?: ScanReplyEntry[];
  diagnostics: Diagnostic[];
  stats: { issues: number; open: number; edges: number };
}

/** Scans a validated snapshot (see `parseSnapshot`): kicks, rollups, blocked, ready, cycles. */
export function scan(snapshot: Snapshot, options: ScanOptions = {}): ScanResult {
  return renderCompactScan(analyzeSnapshotCompact(snapshot, options));
}

/** Some issue of the snapshot carries `comments`: only then does a scan report `replies`. */
export function snapshotHasComments(snapshot: Snapshot): boolean {
  for (const issue of snapshot.issues) if (issue.comments !== undefined) return true;
  return false;
}

/**
 * A scan that also reports `replies`, placed after `ready`; `replies` decides them from the
 * analysis (shared/queue/scan-replies.ts, loaded by callers that need it: it reads comments
 * with the sweep's rules).
 */
export function scanWith(
  snapshot: Snapshot,
  options: ScanOptions,
  replies: (analysis: CompactAnalysis) => ScanReplyEntry[],
): ScanResult {
  const analysis = analyzeSnapshotCompact(snapshot, options);
  const { diagnostics, stats, ...head } = renderCompactScan(analysis);
  return { ...head, replies: replies(analysis), diagnostics, stats };
}
