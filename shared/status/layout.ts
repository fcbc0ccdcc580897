// Where each node of the graph picture goes. Columns are dependency depth (a blocker is left of
// what it blocks), bands are sub-issue depth (a parent is above its children); the nodes of one
// (band, column) cell are stacked, wrapping into extra sub-columns when a cell is tall, so the
// picture stays compact and no two nodes overlap. Pure and deterministic: nodes are visited by
// number, so the same graph gives the same positions.
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

export function layoutPicture(nodes: readonly PictureNode[]): Layout {
  const sorted = [...nodes].sort((a, b) => a.number - b.number);
  const byNumber = new Map(sorted.map((n) => [n.number, n]));
  const numbers = sorted.map((n) => n.number);
  const column = depths(numbers, (n) => byNumber.get(n)?.blockers ?? []);
  const band = depths(numbers, (n) => {
    const parent = byNumber.get(n)?.parent;
    return parent == null ? [] : [parent];
  });

  // Cells: (band, column) → nodes, in number order.
  const cells = new Map<string, PictureNode[]>();
  let columns = 0;
  let bands = 0;
  for (const node of sorted) {
    const c = column.get(node.number)!;
    const b = band.get(node.number)!;
    columns = Math.max(columns, c + 1);
    bands = Math.max(bands, b + 1);
    const key = `${b}:${c}`;
    const list = cells.get(key);
    if (list) list.push(node);
    else cells.set(key, [node]);
  }
  // A column is as wide as its widest cell; a band as tall as its tallest cell.
  const subColumns = new Array<number>(columns).fill(1);
  const rows = new Array<number>(bands).fill(1);
  for (const [key, list] of cells) {
    const [b, c] = key.split(":").map(Number) as [number, number];
    subColumns[c] = Math.max(subColumns[c]!, Math.ceil(list.length / MAX_CELL_ROWS));
    rows[b] = Math.max(rows[b]!, Math.min(list.length, MAX_CELL_ROWS));
  }
  const columnX: number[] = [];
  let x = MARGIN;
  for (let c = 0; c < columns; c++) {
    columnX.push(x);
    x += subColumns[c]! * NODE_WIDTH + (subColumns[c]! - 1) * SUB_GAP + COLUMN_GAP;
  }
  const bandY: number[] = [];
  let y = MARGIN;
  for (let b = 0; b < bands; b++) {
    bandY.push(y);
    y += rows[b]! * NODE_HEIGHT + (rows[b]! - 1) * ROW_GAP + BAND_GAP;
  }

  const placed: Placed[] = [];
  for (const [key, list] of cells) {
    const [b, c] = key.split(":").map(Number) as [number, number];
    list.forEach((node, i) => {
      const sub = Math.floor(i / MAX_CELL_ROWS);
      const row = i % MAX_CELL_ROWS;
      placed.push({
        node,
        x: columnX[c]! + sub * (NODE_WIDTH + SUB_GAP),
        y: bandY[b]! + row * (NODE_HEIGHT + ROW_GAP),
        column: c,
        band: b,
      });
    });
  }
  placed.sort((a, b) => a.node.number - b.node.number);
  return {
    placed,
    width: placed.length === 0 ? 2 * MARGIN : x - COLUMN_GAP + MARGIN,
    height: placed.length === 0 ? 2 * MARGIN : y - BAND_GAP + MARGIN,
  };
}
