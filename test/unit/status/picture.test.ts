// The status page's graph picture: kinds, the node cap, the layout (no overlaps, blockers left,
// parents above) and byte-for-byte determinism, on the demo graph and on random graphs.
import { readFile } from "node:fs/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../shared/config/schema.ts";
import { parseSnapshot, type Snapshot } from "../../../shared/graph/snapshot.ts";
import {
  type Layout,
  layoutPicture,
  NODE_HEIGHT,
  NODE_WIDTH,
} from "../../../shared/status/layout.ts";
import { MAX_PICTURE_NODES, NODE_KINDS, type Picture } from "../../../shared/status/picture.ts";
import { pictureOf } from "../../../shared/status/picture-compact.ts";
import { renderGraphSvg, renderLegend } from "../../../shared/status/svg.ts";
import { snapshotArbitrary } from "../../support/graph-arbitraries.ts";

const demo = parseSnapshot(
  JSON.parse(await readFile(new URL("../../../infra/demo/snapshot.json", import.meta.url), "utf8")),
);
const issueUrl = (n: number) => `https://github.com/acme/rocket/issues/${n}`;

/** Pairs of drawn nodes whose boxes intersect (touching edges do not count). */
function overlaps(layout: Layout): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const p = layout.placed;
  for (let i = 0; i < p.length; i++) {
    for (let j = i + 1; j < p.length; j++) {
      const a = p[i]!;
      const b = p[j]!;
      if (
        a.x < b.x + NODE_WIDTH &&
        b.x < a.x + NODE_WIDTH &&
        a.y < b.y + NODE_HEIGHT &&
        b.y < a.y + NODE_HEIGHT
      )
        out.push([a.node.number, b.node.number]);
    }
  }
  return out;
}

/** Every drawn node inside the picture, every acyclic blocker left, every parent above. */
function checkLayout(picture: Picture) {
  const layout = layoutPicture(picture.nodes);
  expect(overlaps(layout)).toEqual([]);
  expect(layout.placed.map((p) => p.node.number)).toEqual(picture.nodes.map((n) => n.number));
  const at = new Map(layout.placed.map((p) => [p.node.number, p]));
  for (const p of layout.placed) {
    expect(p.x).toBeGreaterThanOrEqual(0);
    expect(p.y).toBeGreaterThanOrEqual(0);
    expect(p.x + NODE_WIDTH).toBeLessThanOrEqual(layout.width);
    expect(p.y + NODE_HEIGHT).toBeLessThanOrEqual(layout.height);
    // A parent is above its sub-issues, unless the two are on a cycle of parents.
    if (p.node.parent !== null && !onParentCycle(picture, p.node.number))
      expect(at.get(p.node.parent)!.y + NODE_HEIGHT).toBeLessThanOrEqual(p.y);
    for (const b of p.node.blockers) {
      // A blocker is left of what it blocks, unless the two are on one cycle.
      const blocker = at.get(b)!;
      if (blocker.column >= p.column) expect(onCycle(picture, b, p.node.number)).toBe(true);
      else expect(blocker.x + NODE_WIDTH).toBeLessThanOrEqual(p.x);
    }
  }
}

/** Whether following parents from `n` comes back to `n` (bad data: GitHub keeps a tree). */
function onParentCycle(picture: Picture, n: number): boolean {
  const parent = new Map(picture.nodes.map((x) => [x.number, x.parent]));
  const seen = new Set<number>();
  for (let at = parent.get(n); at != null; at = parent.get(at)) {
    if (at === n) return true;
    if (seen.has(at)) return false;
    seen.add(at);
  }
  return false;
}

/** Whether `from` is reachable from `to` along blocker links (so `from → to` closes a cycle). */
function onCycle(picture: Picture, from: number, to: number): boolean {
  const blockers = new Map(picture.nodes.map((n) => [n.number, n.blockers]));
  const seen = new Set<number>();
  const stack = [from];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n === to) return true;
    if (seen.has(n)) continue;
    seen.add(n);
    stack.push(...(blockers.get(n) ?? []));
  }
  return false;
}

describe("graph picture", () => {
  it("draws every issue of the demo graph with its kind", () => {
    const picture = pictureOf(demo, DEFAULT_CONFIG);
    expect(picture.nodes.map((n) => n.number)).toEqual(
      demo.issues.map((i) => i.number).sort((a, b) => a - b),
    );
    expect(picture.leftOut).toBe(0);
    const kind = new Map(picture.nodes.map((n) => [n.number, n.kind]));
    expect(kind.get(2)).toBe("closed");
    expect(kind.get(5)).toBe("ready");
    expect(kind.get(6)).toBe("blocked");
    expect(kind.get(8)).toBe("blocked"); // by acme/sdk#42
    expect(picture.nodes.find((n) => n.number === 8)!.otherBlockers).toEqual(["acme/sdk#42"]);
    expect(kind.get(1)).toBe("open"); // the epic: sub-issue #4 open
    expect([...new Set(kind.values())].every((k) => NODE_KINDS.includes(k))).toBe(true);
    const held = demo.issues.filter((i) => i.state === "open" && i.labels.includes("agent:hold"));
    expect(held.length).toBeGreaterThan(0);
    for (const i of held) expect(kind.get(i.number)).toBe("held");
  });

  it("marks the fleet's claims and dead letters", () => {
    const picture = pictureOf(demo, DEFAULT_CONFIG, {
      queued: new Set([5]),
      claimed: new Set([5]),
      stuck: new Set([11]),
    });
    const kind = new Map(picture.nodes.map((n) => [n.number, n.kind]));
    expect(kind.get(5)).toBe("claimed");
    expect(kind.get(11)).toBe("stuck");
  });

  it("lays out the demo graph without overlaps, blockers left, parents above", () => {
    checkLayout(pictureOf(demo, DEFAULT_CONFIG));
  });

  it("is deterministic: the same graph gives the same bytes, whatever the issue order", () => {
    const a = renderGraphSvg(pictureOf(demo, DEFAULT_CONFIG), { issueUrl });
    const shuffled: Snapshot = { ...demo, issues: [...demo.issues].reverse() };
    const b = renderGraphSvg(pictureOf(shuffled, DEFAULT_CONFIG), { issueUrl });
    expect(b).toBe(a);
    expect(a).toContain('viewBox="0 0 ');
    for (const i of demo.issues) {
      expect(a).toContain(`<a class="node" data-number="${i.number}"`);
      expect(a).toContain(`href="${issueUrl(i.number)}"`);
    }
    const legend = renderLegend();
    for (const k of NODE_KINDS) expect(legend).toContain(`class="legend-item" data-kind="${k}"`);
    expect(renderLegend()).toBe(legend);
  });

  it("escapes titles", () => {
    const snapshot: Snapshot = {
      ...demo,
      issues: demo.issues.map((i) => (i.number === 5 ? { ...i, title: `<script>"&'` } : i)),
    };
    const svg = renderGraphSvg(pictureOf(snapshot, DEFAULT_CONFIG), { issueUrl });
    expect(svg).not.toContain("<script>");
    expect(svg).toContain("&lt;script&gt;&quot;&amp;&#39;");
  });

  it("has no overlapping nodes on random graphs of 200 issues, and renders them the same twice", () => {
    fc.assert(
      fc.property(snapshotArbitrary(200, 200), (input) => {
        const snapshot = parseSnapshot(input);
        const picture = pictureOf(snapshot, DEFAULT_CONFIG);
        expect(picture.nodes).toHaveLength(200);
        checkLayout(picture);
        expect(renderGraphSvg(picture, { issueUrl })).toBe(
          renderGraphSvg(pictureOf(parseSnapshot(input), DEFAULT_CONFIG), { issueUrl }),
        );
      }),
      { numRuns: 40 },
    );
  }, 60_000);

  it("draws at most 300 issues, the open ones nearest the queue first, and counts the rest", () => {
    // 400 issues: 200 closed, a chain of 150 open issues blocked one by the next from a ready
    // #1, and 50 open issues unrelated to the queue.
    const at = "2026-11-20T00:00:00Z";
    const issues = Array.from({ length: 400 }, (_, k) => {
      const number = k + 1;
      const closed = number > 200;
      return {
        number,
        title: `Issue ${number}`,
        state: closed ? ("closed" as const) : ("open" as const),
        stateReason: closed ? ("completed" as const) : null,
        createdAt: at,
        updatedAt: at,
        closedAt: closed ? at : null,
        labels: number === 1 ? ["agent:ready"] : [],
        blockedBy: number >= 2 && number <= 150 ? [number - 1] : [],
      };
    });
    const snapshot = parseSnapshot({ repo: "acme/rocket", now: "2026-11-29T12:00:00Z", issues });
    const picture = pictureOf(snapshot, DEFAULT_CONFIG);
    expect(picture.nodes).toHaveLength(MAX_PICTURE_NODES);
    expect(picture.leftOut).toBe(100);
    const drawn = new Set(picture.nodes.map((n) => n.number));
    // Every open issue is drawn (200), then 100 closed ones; 100 closed ones are left out.
    for (let n = 1; n <= 200; n++) expect(drawn.has(n)).toBe(true);
    expect([...drawn].filter((n) => n > 200)).toHaveLength(100);
    checkLayout(picture);
    const svg = renderGraphSvg(picture, { issueUrl });
    expect(svg).toContain("100 more issues are not drawn");
    expect(svg.match(/<a class="node"/g)).toHaveLength(300);
  });

  it("prefers the open issues nearest the queue when open issues alone exceed the cap", () => {
    const at = "2026-11-20T00:00:00Z";
    // #1 ready; #2..#320 a chain blocked one by the next; #321..#400 held, unrelated.
    const issues = Array.from({ length: 400 }, (_, k) => ({
      number: k + 1,
      title: `Issue ${k + 1}`,
      state: "open" as const,
      stateReason: null,
      createdAt: at,
      updatedAt: at,
      closedAt: null,
      labels: k === 0 ? ["agent:ready"] : k >= 320 ? ["agent:hold"] : [],
      blockedBy: k >= 1 && k < 320 ? [k] : [],
    }));
    const picture = pictureOf(
      parseSnapshot({ repo: "acme/rocket", now: "2026-11-29T12:00:00Z", issues }),
      DEFAULT_CONFIG,
    );
    expect(picture.nodes.map((n) => n.number)).toEqual(
      Array.from({ length: 300 }, (_, k) => k + 1),
    );
    expect(picture.leftOut).toBe(100);
  });
});
