// The graph picture as SVG text: nodes placed by layout.ts, each a link to its GitHub issue,
// kinds told apart by colour, shape and a glyph (so colour-blind readers and greyscale prints
// see them too), and a legend beside it. Plain string building with escaping: same picture,
// same bytes.
import { type Layout, layoutPicture, NODE_HEIGHT, NODE_WIDTH } from "./layout.ts";
import { NODE_KINDS, type NodeKind, type Picture } from "./picture.ts";

export interface KindStyle {
  label: string;
  /** What the kind means, for the legend's tooltip and the page's key. */
  meaning: string;
  fill: string;
  stroke: string;
  text: string;
  glyph: string;
  dashed?: boolean;
}

export const KIND_STYLES: Record<NodeKind, KindStyle> = {
  ready: {
    label: "ready",
    meaning: "in the queue: an agent may claim it",
    fill: "#dcfce7",
    stroke: "#15803d",
    text: "#14532d",
    glyph: "▶",
  },
  claimed: {
    label: "claimed",
    meaning: "an agent holds a live claim (or a processing lock)",
    fill: "#dbeafe",
    stroke: "#1d4ed8",
    text: "#1e3a8a",
    glyph: "●",
  },
  blocked: {
    label: "blocked",
    meaning: "waits for an open blocker",
    fill: "#ffedd5",
    stroke: "#c2410c",
    text: "#7c2d12",
    glyph: "■",
  },
  held: {
    label: "held",
    meaning: "on hold, or waiting for a human",
    fill: "#f3e8ff",
    stroke: "#7e22ce",
    text: "#581c87",
    glyph: "Ⅱ",
    dashed: true,
  },
  stuck: {
    label: "stuck",
    meaning: "dead letter: claims kept failing",
    fill: "#fee2e2",
    stroke: "#b91c1c",
    text: "#7f1d1d",
    glyph: "!",
  },
  open: {
    label: "open",
    meaning: "open, not queued (sub-issues open, or no kick yet)",
    fill: "#ffffff",
    stroke: "#64748b",
    text: "#1e293b",
    glyph: "○",
  },
  closed: {
    label: "closed",
    meaning: "closed",
    fill: "#f1f5f9",
    stroke: "#94a3b8",
    text: "#64748b",
    glyph: "✓",
  },
};

/** Escapes text for SVG/HTML content and attribute values. */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** The outline of a kind's shape in a `w` × `h` box at (x, y). */
export function shapeOf(kind: NodeKind, x: number, y: number, w: number, h: number): string {
  const style = KIND_STYLES[kind];
  const paint = `fill="${style.fill}" stroke="${style.stroke}" stroke-width="2"${style.dashed ? ' stroke-dasharray="5 3"' : ""}`;
  const poly = (points: Array<[number, number]>) =>
    `<polygon points="${points.map(([px, py]) => `${x + px},${y + py}`).join(" ")}" ${paint}/>`;
  const s = Math.round(h / 3);
  switch (kind) {
    case "ready": // a pill
      return `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="${h / 2}" ${paint}/>`;
    case "claimed": // a hexagon
      return poly([
        [s, 0],
        [w - s, 0],
        [w, h / 2],
        [w - s, h],
        [s, h],
        [0, h / 2],
      ]);
    case "blocked": // an octagon, like a stop sign
      return poly([
        [8, 0],
        [w - 8, 0],
        [w, 8],
        [w, h - 8],
        [w - 8, h],
        [8, h],
        [0, h - 8],
        [0, 8],
      ]);
    case "held": // a square-cornered box, dashed
      return `<rect x="${x}" y="${y}" width="${w}" height="${h}" ${paint}/>`;
    case "stuck": // a parallelogram
      return poly([
        [s, 0],
        [w, 0],
        [w - s, h],
        [0, h],
      ]);
    case "open": // a banner notched on the right
      return poly([
        [0, 0],
        [w, 0],
        [w - s, h / 2],
        [w, h],
        [0, h],
      ]);
    case "closed": // a rounded box
      return `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="8" ${paint}/>`;
  }
}

/** At most `max` characters, cut at a character boundary (an ellipsis marks the cut). */
export function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

export interface SvgOptions {
  /** The issue's page, e.g. `https://github.com/acme/rocket/issues/12`. */
  issueUrl: (number: number) => string;
}

/**
 * The picture shrinks with the page down to this share of its size, no further: below it the
 * text would be too small to read on a phone, so the picture scrolls sideways instead.
 */
const MIN_SCALE = 0.85;

/**
 * The legend, one small shape per kind, as HTML beside the picture (not inside it), so it
 * wraps to the page's width and stays in view when a wide picture scrolls.
 */
export function renderLegend(): string {
  const items = NODE_KINDS.map((kind) => {
    const style = KIND_STYLES[kind];
    return `<li class="legend-item" data-kind="${kind}" title="${escapeXml(`${style.label}: ${style.meaning}`)}"><svg xmlns="http://www.w3.org/2000/svg" viewBox="-2 -2 48 28" width="48" height="28" aria-hidden="true">${shapeOf(kind, 0, 0, 44, 24)}<text x="22" y="16.5" text-anchor="middle" fill="${style.text}" font-size="12" font-family="system-ui, sans-serif">${style.glyph}</text></svg>${style.label}</li>`;
  });
  return `<ul class="legend" aria-label="Legend">${items.join("")}</ul>`;
}

function edges(layout: Layout): string {
  const at = new Map(layout.placed.map((p) => [p.node.number, p]));
  const out: string[] = [];
  for (const p of layout.placed) {
    for (const b of p.node.blockers) {
      const from = at.get(b);
      if (!from) continue;
      const x1 = from.x + NODE_WIDTH;
      const y1 = from.y + NODE_HEIGHT / 2;
      const x2 = p.x;
      const y2 = p.y + NODE_HEIGHT / 2;
      const bend = Math.max(24, Math.abs(x2 - x1) / 2);
      // A link back to the left (a cycle) loops below both nodes instead of cutting across.
      const d =
        x2 > x1
          ? `M${x1} ${y1} C${x1 + bend} ${y1} ${x2 - bend} ${y2} ${x2} ${y2}`
          : `M${x1} ${y1} C${x1 + 36} ${y1 + 44} ${x2 - 36} ${y2 + 44} ${x2} ${y2}`;
      out.push(
        `<path class="edge blocks" d="${d}" fill="none" stroke="#c2410c" stroke-width="1.5" marker-end="url(#arrow)"/>`,
      );
    }
    if (p.node.parent !== null) {
      const parent = at.get(p.node.parent);
      if (!parent) continue;
      const x1 = parent.x + NODE_WIDTH / 2;
      const y1 = parent.y + NODE_HEIGHT;
      const x2 = p.x + NODE_WIDTH / 2;
      const y2 = p.y;
      const bend = Math.max(16, Math.abs(y2 - y1) / 2);
      out.push(
        `<path class="edge parent" d="M${x1} ${y1} C${x1} ${y1 + bend} ${x2} ${y2 - bend} ${x2} ${y2}" fill="none" stroke="#64748b" stroke-width="1.5" stroke-dasharray="4 3"/>`,
      );
    }
  }
  return out.join("");
}

/**
 * The picture as an `<svg>` element: a `viewBox` and a fluid width that stops shrinking at a
 * readable size (the page's container then scrolls sideways, as on a phone).
 */
export function renderGraphSvg(picture: Picture, options: SvgOptions): string {
  const layout = layoutPicture(picture.nodes);
  const { width, height } = layout;
  const nodes = layout.placed.map(({ node, x, y }) => {
    const style = KIND_STYLES[node.kind];
    const tip = [
      `#${node.number} ${node.title}`,
      style.label,
      ...(node.blockers.length + node.otherBlockers.length > 0
        ? [`blocked by ${[...node.blockers.map((b) => `#${b}`), ...node.otherBlockers].join(", ")}`]
        : []),
    ].join(" · ");
    const textX = x + (node.kind === "claimed" || node.kind === "stuck" ? 16 : 10);
    return `<a class="node" data-number="${node.number}" data-kind="${node.kind}" href="${escapeXml(options.issueUrl(node.number))}" target="_top"><title>${escapeXml(tip)}</title>${shapeOf(node.kind, x, y, NODE_WIDTH, NODE_HEIGHT)}<text x="${textX}" y="${y + 17}" fill="${style.text}" font-size="12" font-weight="600">${style.glyph} #${node.number}</text><text x="${textX}" y="${y + 32}" fill="${style.text}" font-size="11">${escapeXml(clip(node.title, 24))}</text></a>`;
  });
  const leftOut =
    picture.leftOut > 0
      ? `<desc>${picture.leftOut} more issues are not drawn</desc>`
      : "<desc>every issue is drawn</desc>";
  return `<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" aria-label="${escapeXml(`Issue graph of ${picture.repo}: ${picture.nodes.length} issues drawn${picture.leftOut > 0 ? `, ${picture.leftOut} left out` : ""}`)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" style="width:100%;max-width:${width}px;min-width:${Math.round(width * MIN_SCALE)}px;height:auto" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif">${leftOut}<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#c2410c"/></marker></defs><g class="edges">${edges(layout)}</g><g class="nodes">${nodes.join("")}</g></svg>`;
}
