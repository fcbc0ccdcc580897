import type { GraphAnalysis } from "../../../shared/graph/analyze.ts";
import type { CompactGraph } from "../../../shared/graph/compact.ts";
import {
  analyzeCompactSteps,
  asGraphAnalysis,
  type CompactAnalysis,
  releaseAnalysis,
  renderCompactScan,
} from "../../../shared/graph/compact-analysis.ts";
import {
  blockedPage,
  byNumberPage,
  DEFAULT_PAGE_LIMIT,
  type GraphList,
  kicksPage,
  type Page,
  type PageCursor,
  readyPage,
} from "../../../shared/graph/pages.ts";
import type { IssueRef } from "../../../shared/graph/refs.ts";
import type { ScanResult } from "../../../shared/graph/scan.ts";
import { formatInstant, HOUR_MS } from "../../../shared/graph/time.ts";
import type { ReplyListEntry } from "../../../shared/queue/reply-list.ts";
import type { RepoStore } from "./repo-store.ts";

/** One analysis of the stored graph, kept until the graph (or the producer watermark) moves. */
export interface GraphScan {
  /**
   * `RepoStore.rulesVersion`, the compact graph and its rule change count, and the producer
   * watermark it was made at (retitlings leave it standing: it shows no titles).
   */
  version: number;
  graph: CompactGraph;
  changes: number;
  producerSeq: number;
  /** The instant it was made at; it holds until `validUntilMs` (a processing lock goes stale). */
  atMs: number;
  validUntilMs: number;
  /** The closes learned since the producer watermark (the kicks' causes) and the last one's seq. */
  causes: IssueRef[];
  maxSeq: number;
  compact: CompactAnalysis;
  /**
   * The scan output with `ready` ascending (rotated per request), `now` as of `atMs`; rendered
   * on first read. Read it only while this is the kept scan (its arrays go back when replaced).
   */
  readonly result: ScanResult;
  /** Whether `result` was rendered already. */
  rendered(): boolean;
  /** The same analysis in the shape the producer's plan reads (made on demand). */
  analysis(): GraphAnalysis;
}

/**
 * The scan the producer plans with and the graph API shows (kicks from the closes learned since
 * the producer watermark, spec 3.2), made over the compact graph and kept until a change: graph
 * requests and producer plans in between read it instead of scanning again.
 */
export class GraphScans {
  private readonly store: RepoStore;
  private kept: GraphScan | null = null;

  constructor(store: RepoStore) {
    this.store = store;
  }

  /** The kept scan if it still holds at `nowMs`, else null. */
  private fresh(nowMs: number): GraphScan | null {
    const store = this.store;
    const graph = store.compactGraph();
    const kept = this.kept;
    return kept !== null &&
      kept.version === store.rulesVersion &&
      kept.graph === graph &&
      kept.changes === graph.ruleChanges &&
      kept.producerSeq === store.watermarks().producer.seq &&
      kept.atMs <= nowMs &&
      nowMs < kept.validUntilMs
      ? kept
      : null;
  }

  /**
   * The kept scan if it was made at most `maxAgeMs` before `nowMs`, whatever changed since (and
   * still inside its own validity): what readers may see while a full reconcile streams pages in,
   * when every page would otherwise void the scan and each read would make a new one. A scan
   * whose lists were not rendered before the change is not served: rendering reads issue numbers
   * by slot from the live graph, and a change may have given a slot to another issue.
   */
  recent(nowMs: number, maxAgeMs: number): GraphScan | null {
    const kept = this.kept;
    return kept !== null &&
      kept.graph === this.store.keptCompactGraph() &&
      kept.atMs <= nowMs &&
      nowMs - kept.atMs <= maxAgeMs &&
      nowMs < kept.validUntilMs &&
      (kept.rendered() || this.fresh(nowMs) === kept)
      ? kept
      : null;
  }

  /** The scan at `nowMs`: the kept one while it holds, else a new one made at once. */
  current(nowMs: number): GraphScan {
    const kept = this.fresh(nowMs);
    if (kept !== null) return kept;
    const steps = this.steps(nowMs);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
    }
  }

  /**
   * Makes the scan at `nowMs` ahead of a synchronous reader (the producer's plan), pausing
   * between the analysis's passes so webhook acknowledgements go first. A change landing during
   * a pause makes the work void: it starts again, and after three tries the reader makes it at once.
   */
  async prepare(nowMs: number, pause: () => Promise<void>): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.fresh(nowMs) !== null) return;
      const steps = this.steps(nowMs);
      const version = this.store.rulesVersion;
      const graph = this.store.compactGraph();
      const changes = graph.ruleChanges;
      for (;;) {
        const step = steps.next();
        if (step.done) break;
        await pause();
        if (
          this.store.rulesVersion !== version ||
          graph.ruleChanges !== changes ||
          this.store.compactGraph() !== graph
        ) {
          // Void: its scratch arrays go back for the next attempt (shared/graph/scratch.ts).
          steps.return(undefined as never);
          break;
        }
      }
    }
  }

  /** Makes a scan in steps (`analyzeCompactSteps`); the last step keeps it. */
  private *steps(nowMs: number): Generator<void, GraphScan, void> {
    const store = this.store;
    const graph = store.compactGraph();
    const producerSeq = store.watermarks().producer.seq;
    const { causes, maxSeq } = store.pendingCloses(producerSeq);
    const version = store.rulesVersion;
    const changes = graph.ruleChanges;
    const compact = yield* analyzeCompactSteps(graph, {
      now: formatInstant(nowMs),
      causes,
      config: store.config(),
    });
    let adapted: GraphAnalysis | undefined;
    // While a full reconcile streams pages, readers are served a scan made before the latest
    // pages (`recent`) only if it was rendered then: one made for the producer is rendered now.
    let rendered: ScanResult | undefined =
      store.reconcileProgress() !== null ? renderCompactScan(compact) : undefined;
    const scan: GraphScan = {
      version,
      graph,
      changes,
      producerSeq,
      atMs: nowMs,
      validUntilMs: compact.validUntilMs,
      causes,
      maxSeq,
      compact,
      // Rendered when a reader asks (the producer plans from the analysis and never does): the
      // lists are objects per blocked issue, megabytes of garbage per change at 100k issues.
      get result() {
        rendered ??= renderCompactScan(compact);
        return rendered;
      },
      rendered: () => rendered !== undefined,
      analysis: () => {
        adapted ??= asGraphAnalysis(compact);
        return adapted;
      },
    };
    this.keep(scan);
    return scan;
  }

  /** Drops the kept scan (the next read makes a new one). */
  clear(): void {
    this.keep(null);
  }

  /**
   * Keeps `scan` in place of the kept one, whose arrays go back to the pool: a scan is read only
   * synchronously after it is obtained, never across an await, so nobody still holds it.
   */
  private keep(scan: GraphScan | null): void {
    const before = this.kept;
    this.kept = scan;
    if (before !== null && before !== scan) releaseAnalysis(before.compact);
  }
}

/** The scan's `now` and kick window as of `nowMs` (the lists hold until the next change). */
export function scanTimes(nowMs: number, windowHours: number) {
  return {
    now: formatInstant(nowMs),
    window: { from: formatInstant(nowMs - windowHours * HOUR_MS), to: formatInstant(nowMs) },
  };
}

/** What a graph request asks for: the first page of every long list, or one page of one list. */
export interface GraphPageRequest {
  limit?: number;
  list?: GraphList;
  cursor?: PageCursor;
}

/**
 * An item of one of the long lists: a blocked issue, a ready issue's number, a kick, a rollup
 * candidate, or an issue waiting for an agent's answer.
 */
export type GraphListItem =
  | ScanResult["blocked"][number]
  | number
  | ScanResult["kicks"][number]
  | ScanResult["rollupCandidates"][number]
  | ReplyListEntry;

/**
 * `replies` comes from the queue view (who trusted people wait for), not the scan: the graph
 * API reads both and pages each list alike.
 */
function pageOf(
  scan: GraphScan,
  replies: readonly ReplyListEntry[],
  list: GraphList,
  machine: string | undefined,
  cursor: PageCursor | undefined,
  limit: number,
): Page<GraphListItem> {
  switch (list) {
    case "replies":
      return byNumberPage("replies", replies, cursor?.l === "replies" ? cursor : null, limit);
    case "blocked":
      return blockedPage(scan.result.blocked, cursor?.l === "blocked" ? cursor : null, limit);
    case "kicks":
      return kicksPage(scan.result.kicks, cursor?.l === "kicks" ? cursor : null, limit);
    case "ready":
      return readyPage(scan.result.ready, machine, cursor?.l === "ready" ? cursor : null, limit);
    case "rollupCandidates":
      return byNumberPage(
        "rollupCandidates",
        scan.result.rollupCandidates,
        cursor?.l === "rollupCandidates" ? cursor : null,
        limit,
      );
  }
}

/**
 * The scan output with its long lists cut to their first page (`pages` says how many each has
 * and where the next page starts); the other lists are short and come whole.
 */
export function scanOverview(
  scan: GraphScan,
  replyList: readonly ReplyListEntry[],
  nowMs: number,
  windowHours: number,
  machine: string | undefined,
  limit = DEFAULT_PAGE_LIMIT,
) {
  const page = (list: GraphList) => pageOf(scan, replyList, list, machine, undefined, limit);
  const blocked = page("blocked");
  const ready = page("ready");
  const kicks = page("kicks");
  const rollups = page("rollupCandidates");
  const replies = page("replies");
  const { result } = scan;
  return {
    repo: result.repo,
    ...scanTimes(nowMs, windowHours),
    kicks: kicks.items as ScanResult["kicks"],
    rollupCandidates: rollups.items as ScanResult["rollupCandidates"],
    blocked: blocked.items as ScanResult["blocked"],
    ready: ready.items as ScanResult["ready"],
    replies: replies.items as ReplyListEntry[],
    diagnostics: result.diagnostics,
    stats: result.stats,
    pages: {
      kicks: { total: kicks.total, next: kicks.next },
      blocked: { total: blocked.total, next: blocked.next },
      ready: { total: ready.total, next: ready.next },
      rollupCandidates: { total: rollups.total, next: rollups.next },
      replies: { total: replies.total, next: replies.next },
    },
  };
}

/** One page of one long list of the scan. */
export function scanPage(
  scan: GraphScan,
  replies: readonly ReplyListEntry[],
  nowMs: number,
  machine: string | undefined,
  list: GraphList,
  cursor: PageCursor | undefined,
  limit = DEFAULT_PAGE_LIMIT,
) {
  const page = pageOf(scan, replies, list, machine, cursor, limit);
  return {
    list,
    now: formatInstant(nowMs),
    items: page.items,
    next: page.next,
    total: page.total,
    stats: scan.result.stats,
  };
}
