// Which issues the status page's picture draws, chosen from a compact analysis (the one the graph
// API keeps, shared/graph/compact-analysis.ts) in typed arrays, so only the chosen issues need
// reading as objects: each issue's kind (`kindOf`), then the `max` nearest the queue. Pure.

import type { Config } from "../config/schema.ts";
import { analyzeSnapshotCompact } from "../graph/analyze.ts";
import { STATE_OPEN } from "../graph/compact.ts";
import { type CompactAnalysis, factsAt } from "../graph/compact-analysis.ts";
import type { Snapshot } from "../graph/snapshot.ts";
import {
  drawPicture,
  type FleetMarks,
  kindOf,
  MAX_PICTURE_NODES,
  NO_FLEET_MARKS,
  NODE_KINDS,
  type NodeKind,
  type Picture,
} from "./picture.ts";

export interface PictureChoice {
  /** The issues to draw, each with its kind (at most `max`). */
  kinds: Map<number, NodeKind>;
  /** Issues of the graph (drawn or not): the picture's `leftOut` is this less the drawn. */
  total: number;
}

const READY = NODE_KINDS.indexOf("ready");
const CLAIMED = NODE_KINDS.indexOf("claimed");
const CLOSED = NODE_KINDS.indexOf("closed");

/**
 * The `max` issues nearest the queue: distance from a ready or claimed issue over parent and
 * blocker links of this repository (either direction), open issues before closed ones, then by
 * number.
 */
export function choosePicture(
  a: CompactAnalysis,
  marks: FleetMarks,
  max = MAX_PICTURE_NODES,
): PictureChoice {
  const { graph, order } = a;
  const kind = new Uint8Array(graph.size);
  for (let i = 0; i < order.length; i++) {
    const s = order[i]!;
    const open = graph.state[s] === STATE_OPEN;
    const k = kindOf(graph.number[s]!, !open, open ? factsAt(a, s) : undefined, marks);
    kind[s] = NODE_KINDS.indexOf(k);
  }
  const pick = (slots: ArrayLike<number>, count: number): PictureChoice => {
    const kinds = new Map<number, NodeKind>();
    for (let i = 0; i < count; i++) {
      const s = slots[i]!;
      kinds.set(graph.number[s]!, NODE_KINDS[kind[s]!]!);
    }
    return { kinds, total: order.length };
  };
  if (order.length <= max) return pick(order, order.length);

  // Undirected links between issues that have rows, as compressed rows over slots.
  const eachLink = (visit: (s: number, t: number) => void) => {
    for (let i = 0; i < order.length; i++) {
      const s = order[i]!;
      const p = graph.parent[s]!;
      if (p > 0) {
        const t = graph.presentSlot(p);
        if (t !== -1 && t !== s) visit(s, t);
      }
      for (const code of graph.blockersOfSlot(s)) {
        if (code <= 0) continue;
        const t = graph.presentSlot(code);
        if (t !== -1 && t !== s) visit(s, t);
      }
    }
  };
  const start = new Int32Array(graph.size + 1);
  eachLink((s, t) => {
    start[s + 1]! += 1;
    start[t + 1]! += 1;
  });
  for (let s = 0; s < graph.size; s++) start[s + 1]! += start[s]!;
  const fill = start.slice(0, -1);
  const links = new Int32Array(start[graph.size]!);
  eachLink((s, t) => {
    links[fill[s]!++] = t;
    links[fill[t]!++] = s;
  });

  // Breadth first from the queue: every slot's hop count, -1 when no queue issue reaches it.
  const distance = new Int32Array(graph.size).fill(-1);
  const queue = new Int32Array(order.length);
  let tail = 0;
  for (let i = 0; i < order.length; i++) {
    const s = order[i]!;
    if (kind[s] === READY || kind[s] === CLAIMED) {
      distance[s] = 0;
      queue[tail++] = s;
    }
  }
  for (let head = 0; head < tail; head++) {
    const s = queue[head]!;
    for (let k = start[s]!; k < start[s + 1]!; k++) {
      const t = links[k]!;
      if (distance[t] !== -1) continue;
      distance[t] = distance[s]! + 1;
      queue[tail++] = t;
    }
  }
  const far = (s: number) => (distance[s] === -1 ? Number.MAX_SAFE_INTEGER : distance[s]!);
  const ranked = Int32Array.from(order).sort(
    (s, t) =>
      (kind[s] === CLOSED ? 1 : 0) - (kind[t] === CLOSED ? 1 : 0) ||
      far(s) - far(t) ||
      graph.number[s]! - graph.number[t]!,
  );
  return pick(ranked, max);
}

/** The picture of a whole snapshot: each issue's kind, the `max` nearest the queue drawn. */
export function pictureOf(
  snapshot: Snapshot,
  config: Config,
  marks: FleetMarks = NO_FLEET_MARKS,
  max = MAX_PICTURE_NODES,
): Picture {
  const { kinds, total } = choosePicture(analyzeSnapshotCompact(snapshot, { config }), marks, max);
  const chosen = snapshot.issues.filter((issue) => kinds.has(issue.number));
  return drawPicture(snapshot.repo, chosen, kinds, total);
}
