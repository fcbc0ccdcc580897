// What the status page's graph picture shows: each issue's kind and its drawn relations (which
// issues make the cut when the graph is large: picture-compact.ts). Pure: the same inputs give
// the same picture.
import type { IssueFacts } from "../graph/analyze.ts";
import { canonicalRef } from "../graph/refs.ts";
import type { SnapshotIssue } from "../graph/snapshot.ts";

/** The kinds the picture distinguishes (by colour and shape); `open` is everything else open. */
export const NODE_KINDS = [
  "ready",
  "claimed",
  "blocked",
  "held",
  "stuck",
  "open",
  "closed",
] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

/** One issue as drawn: relations name only issues of the same repository that are drawn too. */
export interface PictureNode {
  number: number;
  title: string;
  kind: NodeKind;
  /** The parent issue when it is drawn. */
  parent: number | null;
  /** Drawn blockers (open or closed) of this repository. */
  blockers: number[];
  /** Blockers in other repositories, or not drawn, as `owner/repo#n` or `#n` (for the tooltip). */
  otherBlockers: string[];
}

export interface Picture {
  repo: string;
  /** Ascending by number. */
  nodes: PictureNode[];
  /** Issues of the graph left out of the picture (beyond `MAX_PICTURE_NODES`). */
  leftOut: number;
}

/** A picture of more nodes would be unreadable and slow to draw; the rest are counted. */
export const MAX_PICTURE_NODES = 300;

/** What the RepoObject knows beyond the snapshot: the fleet's view of each issue. */
export interface FleetMarks {
  /** Claimable now (the queue), before per-caller filters. */
  queued: ReadonlySet<number>;
  /** A live claim (fleet API or IDD marker). */
  claimed: ReadonlySet<number>;
  /** Dead letters of the fleet API. */
  stuck: ReadonlySet<number>;
}

export const NO_FLEET_MARKS: FleetMarks = {
  queued: new Set(),
  claimed: new Set(),
  stuck: new Set(),
};

/** The facts `kindOf` reads (undefined for a closed issue). */
export type KindFacts = Pick<IssueFacts, "stuck" | "freshLock" | "held" | "stance" | "ready"> & {
  openBlockers: { readonly length: number };
};

/**
 * An issue's kind, by precedence: closed, stuck (dead letter or label), claimed (a live claim
 * or a fresh processing lock), held (hold label or waiting on a human), blocked (an open
 * blocker), ready (claimable, or ready by the graph), else open.
 */
export function kindOf(
  n: number,
  closed: boolean,
  facts: KindFacts | undefined,
  marks: FleetMarks,
): NodeKind {
  if (closed) return "closed";
  if (marks.stuck.has(n) || facts?.stuck) return "stuck";
  if (marks.claimed.has(n) || facts?.freshLock) return "claimed";
  if (facts?.held || facts?.stance === "waiting") return "held";
  if ((facts?.openBlockers.length ?? 0) > 0) return "blocked";
  if (marks.queued.has(n) || facts?.ready) return "ready";
  return "open";
}

/**
 * The picture of the chosen issues (`chosen`: exactly the issues drawn, each with its kind in
 * `kinds`) out of a graph of `total` issues: relations to issues not drawn go to the tooltip.
 * The status page reads only the chosen issues (functions/objects/repo/status-view.ts).
 */
export function drawPicture(
  repo: string,
  chosen: readonly SnapshotIssue[],
  kinds: ReadonlyMap<number, NodeKind>,
  total: number,
): Picture {
  const own = (ref: number | string) => canonicalRef(ref, repo);
  const drawn = new Set(chosen.map((issue) => issue.number));
  const nodes: PictureNode[] = [];
  for (const issue of chosen) {
    const parent = issue.parent == null ? null : own(issue.parent);
    const blockers: number[] = [];
    const otherBlockers: string[] = [];
    for (const ref of issue.blockedBy ?? []) {
      const r = own(ref);
      if (r === issue.number) continue;
      if (typeof r === "number" && drawn.has(r)) {
        if (!blockers.includes(r)) blockers.push(r);
      } else {
        otherBlockers.push(typeof r === "number" ? `#${r}` : r);
      }
    }
    nodes.push({
      number: issue.number,
      title: issue.title,
      kind: kinds.get(issue.number) ?? "open",
      parent:
        typeof parent === "number" && parent !== issue.number && drawn.has(parent) ? parent : null,
      blockers: blockers.sort((a, b) => a - b),
      otherBlockers: [...new Set(otherBlockers)].sort(),
    });
  }
  nodes.sort((a, b) => a.number - b.number);
  return { repo, nodes, leftOut: total - nodes.length };
}
