// Where each node of the graph picture goes. Columns are dependency depth (a blocker is left of
// what it blocks). Within a column nodes are stacked in the order of the sub-issue forest, each
// at least a gap below its parent (a parent is above its children, which sit right under it
// when they share its column); a column taller than the budget wraps into extra sub-columns,
// so the picture stays compact and no two nodes overlap. Pure and deterministic: nodes are
// visited by number, so the same graph gives the same positions.
import type { PictureNode } from "./picture.ts";

export const NODE_WIDTH = 176;
export const NODE_HEIGHT = 40;
/** Gaps between sub-columns of one cell, between columns, and between stacked nodes. */
const SUB_GAP = 16;
const COLUMN_GAP = 48;
const ROW_GAP = 14;
const BAND_GAP = 36;
/** A cell taller than this many nodes wraps into another sub-column. */
export const MAX_CELL_ROWS = 8;
export const MARGIN = 12;

export interface Placed {
  node: PictureNode;
  x: number;
  y: number;
  column: number;
  /** The sub-column within the column (a tall column wraps). */
  band: number;
}

export interface Layout {
  placed: Placed[];
  width: number;
  height: number;
}

/**
 * Longest path from a root along `edges(n)` (the nodes `n` hangs off): 0 without any. A link
 * that closes a cycle is ignored, so cycles still get a depth (their order by number).
 */
function depths(numbers: readonly number[], edges: (n: number) => readonly number[]) {
  const depth = new Map<number, number>();
  const onPath = new Set<number>();
  const visit = (root: number) => {
    // Iterative DFS: 300 nodes in a chain must not exhaust the stack of a small runtime.
    const stack: Array<{ n: number; i: number; best: number }> = [{ n: root, i: 0, best: 0 }];
    onPath.add(root);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const next = edges(top.n)[top.i++];
      if (next === undefined) {
        depth.set(top.n, top.best);
        onPath.delete(top.n);
        stack.pop();
        const below = stack[stack.length - 1];
        if (below) below.best = Math.max(below.best, top.best + 1);
        continue;
      }
      const known = depth.get(next);
      if (known !== undefined) top.best = Math.max(top.best, known + 1);
      else if (!onPath.has(next)) {
        onPath.add(next);
        stack.push({ n: next, i: 0, best: 0 });
      }
    }
  };
  for (const n of numbers) if (!depth.has(n)) visit(n);
  return depth;
}

/**
 * The parent forest in pre-order (roots and siblings by number), so a parent always comes
 * before its sub-issues; nodes on a cycle of parents (bad data) start where first met.
 */
function treeOrder(sorted: readonly PictureNode[], byNumber: Map<number, PictureNode>): number[] {
  const children = new Map<number, number[]>();
  for (const node of sorted) {
    if (node.parent === null || !byNumber.has(node.parent)) continue;
    const list = children.get(node.parent);
    if (list) list.push(node.number);
    else children.set(node.parent, [node.number]);
  }
  const order: number[] = [];
  const seen = new Set<number>();
  const walk = (root: number) => {
    const stack = [root];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (seen.has(n)) continue;
      seen.add(n);
      order.push(n);
      const kids = children.get(n) ?? [];
      for (let i = kids.length - 1; i >= 0; i--) if (!seen.has(kids[i]!)) stack.push(kids[i]!);
    }
  };
  for (const node of sorted) {
    if (node.parent === null || !byNumber.has(node.parent)) walk(node.number);
  }
  // What is left hangs off a cycle of parents: start each at the cycle, so every node that
  // is not on it still comes after its parent.
  for (const node of sorted) {
    if (seen.has(node.number)) continue;
    let at = node.number;
    const chain = new Set<number>();
    while (!chain.has(at)) {
      chain.add(at);
      const parent = byNumber.get(at)?.parent;
      if (parent == null || !byNumber.has(parent) || seen.has(parent)) break;
      at = parent;
    }
    walk(at);
  }
  return order;
}

export function layoutPicture(nodes: readonly PictureNode[]): Layout {
  const sorted = [...nodes].sort((a, b) => a.number - b.number);
  const byNumber = new Map(sorted.map((n) => [n.number, n]));
  const numbers = sorted.map((n) => n.number);
  const column = depths(numbers, (n) => byNumber.get(n)?.blockers ?? []);
  const columns = sorted.reduce((m, n) => Math.max(m, column.get(n.number)! + 1), 0);
  // A column taller than this wraps into another sub-column (a wide graph is easier to read
  // than a very tall one), unless a node must go lower anyway (below its parent).
  const budgetRows = Math.max(MAX_CELL_ROWS, Math.ceil(Math.sqrt(sorted.length)));
  const budget = budgetRows * (NODE_HEIGHT + ROW_GAP);

  // Each column's sub-columns, as the next free y in each.
  const free: number[][] = Array.from({ length: columns }, () => [0]);
  const slot = new Map<number, { column: number; sub: number; y: number }>();
  for (const n of treeOrder(sorted, byNumber)) {
    const node = byNumber.get(n)!;
    const c = column.get(n)!;
    const parent = node.parent === null ? undefined : slot.get(node.parent);
    const floor = parent ? parent.y + NODE_HEIGHT + BAND_GAP : 0;
    const subs = free[c]!;
    let best = 0;
    for (let i = 1; i < subs.length; i++) {
      if (Math.max(subs[i]!, floor) < Math.max(subs[best]!, floor)) best = i;
    }
    let y = Math.max(subs[best]!, floor);
    if (y > floor && y + NODE_HEIGHT > budget) {
      // Wrapping: a fresh sub-column takes the node as high as its parent allows.
      subs.push(0);
      best = subs.length - 1;
      y = floor;
    }
    subs[best] = y + NODE_HEIGHT + ROW_GAP;
    slot.set(n, { column: c, sub: best, y });
  }

  const columnX: number[] = [];
  let x = MARGIN;
  for (let c = 0; c < columns; c++) {
    columnX.push(x);
    const subs = free[c]!.length;
    x += subs * NODE_WIDTH + (subs - 1) * SUB_GAP + COLUMN_GAP;
  }
  let bottom = 0;
  const placed: Placed[] = sorted.map((node) => {
    const s = slot.get(node.number)!;
    bottom = Math.max(bottom, s.y + NODE_HEIGHT);
    return {
      node,
      x: columnX[s.column]! + s.sub * (NODE_WIDTH + SUB_GAP),
      y: MARGIN + s.y,
      column: s.column,
      band: s.sub,
    };
  });
  return {
    placed,
    width: placed.length === 0 ? 2 * MARGIN : x - COLUMN_GAP + MARGIN,
    height: placed.length === 0 ? 2 * MARGIN : MARGIN + bottom + MARGIN,
  };
}
