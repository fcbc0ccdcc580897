// The oracle's status picture (see ./analyze.ts and shared/status/picture-compact.ts): each
// issue's kind from the object-based analysis, and the choice of the issues nearest the queue
// over Maps of issue numbers.
import type { Config } from "../../../shared/config/schema.ts";
import { canonicalRef } from "../../../shared/graph/refs.ts";
import type { Snapshot } from "../../../shared/graph/snapshot.ts";
import {
  drawPicture,
  type FleetMarks,
  kindOf,
  MAX_PICTURE_NODES,
  NO_FLEET_MARKS,
  type NodeKind,
  type Picture,
} from "../../../shared/status/picture.ts";
import { analyzeGraph } from "./analyze.ts";

/** The picture of a whole snapshot: each issue's kind (`kindOf`), the `max` drawn (`chooseNodes`). */
export function oraclePicture(
  snapshot: Snapshot,
  config: Config,
  marks: FleetMarks = NO_FLEET_MARKS,
  max = MAX_PICTURE_NODES,
): Picture {
  const analysis = analyzeGraph(snapshot, { config });
  const own = (ref: number | string) => canonicalRef(ref, snapshot.repo);
  const kinds = new Map<number, NodeKind>();
  for (const issue of snapshot.issues)
    kinds.set(
      issue.number,
      kindOf(issue.number, issue.state === "closed", analysis.factsOf(issue.number), marks),
    );
  const chosen = chooseNodes(
    snapshot.issues.map((issue) => ({
      number: issue.number,
      kind: kinds.get(issue.number)!,
      neighbours: [
        ...(issue.parent == null ? [] : [own(issue.parent)]),
        ...(issue.blockedBy ?? []).map(own),
      ].filter((r): r is number => typeof r === "number"),
    })),
    max,
  );
  return drawPicture(
    snapshot.repo,
    snapshot.issues.filter((issue) => chosen.has(issue.number)),
    kinds,
    snapshot.issues.length,
  );
}

const IN_QUEUE: ReadonlySet<NodeKind> = new Set(["ready", "claimed"]);

/**
 * The `max` issues nearest the queue: distance from a ready or claimed issue over blocker and
 * parent links (either direction), open issues before closed ones, then by number.
 */
function chooseNodes(
  issues: ReadonlyArray<{ number: number; kind: NodeKind; neighbours: readonly number[] }>,
  max: number,
): Set<number> {
  if (issues.length <= max) return new Set(issues.map((i) => i.number));
  const adjacent = new Map<number, number[]>();
  const link = (a: number, b: number) => {
    const list = adjacent.get(a);
    if (list) list.push(b);
    else adjacent.set(a, [b]);
  };
  const known = new Set(issues.map((i) => i.number));
  for (const i of issues) {
    for (const n of i.neighbours) {
      if (!known.has(n) || n === i.number) continue;
      link(i.number, n);
      link(n, i.number);
    }
  }
  const distance = new Map<number, number>();
  let frontier = issues
    .filter((i) => IN_QUEUE.has(i.kind))
    .map((i) => i.number)
    .sort((a, b) => a - b);
  for (const n of frontier) distance.set(n, 0);
  for (let d = 1; frontier.length > 0; d++) {
    const next: number[] = [];
    for (const n of frontier) {
      for (const m of adjacent.get(n) ?? []) {
        if (distance.has(m)) continue;
        distance.set(m, d);
        next.push(m);
      }
    }
    frontier = next;
  }
  const rank = (i: { number: number; kind: NodeKind }) => [
    i.kind === "closed" ? 1 : 0,
    distance.get(i.number) ?? Number.MAX_SAFE_INTEGER,
    i.number,
  ];
  const ranked = issues
    .map((i) => ({ number: i.number, key: rank(i) }))
    .sort((a, b) => a.key[0]! - b.key[0]! || a.key[1]! - b.key[1]! || a.key[2]! - b.key[2]!);
  return new Set(ranked.slice(0, max).map((r) => r.number));
}
