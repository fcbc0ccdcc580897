import type { Config } from "../config/schema.ts";
import { type CompactAnalysis, factsAt } from "../graph/compact-analysis.ts";
import type { Snapshot } from "../graph/snapshot.ts";
import { type Reply, replyExclusion, replyState } from "./reply-state.ts";

/** One entry of the scan's `replies`: an open issue whose trusted human input waits for an agent. */
export interface ScanReply extends Reply {
  number: number;
}

/**
 * The replies of a snapshot (spec 3.1, 6.4), ascending by number: open issues whose comments
 * the snapshot carries (the others are not evaluated), decided as the Worker decides them, minus
 * the sweep's exclusions (open blockers, epic-managed, a fresh processing lock).
 */
export function scanReplies(
  snapshot: Snapshot,
  analysis: CompactAnalysis,
  config: Pick<Config, "queue" | "labels">,
): ScanReply[] {
  const { graph } = analysis;
  const base = `https://github.com/${snapshot.repo}/issues/`;
  const out: ScanReply[] = [];
  for (const issue of snapshot.issues) {
    if (issue.state !== "open" || issue.comments === undefined) continue;
    const slot = graph.slotOf(issue.number);
    if (slot < 0 || replyExclusion(factsAt(analysis, slot)) !== null) continue;
    const state = replyState(
      {
        url: `${base}${issue.number}`,
        createdAt: issue.createdAt,
        title: issue.title,
        body: issue.body ?? null,
        author: issue.author ?? null,
        comments: issue.comments,
      },
      issue.labels,
      config,
    );
    if (state.state === "unanswered") out.push({ number: issue.number, ...state.reply });
  }
  return out.sort((a, b) => a.number - b.number);
}
