// The analyses' scratch arrays (shared/graph/scratch.ts): a lent array reads exactly like a new
// one, a buffer is never lent to two borrowers at once, an abandoned analysis gives its arrays
// back, and analyses that borrow at the same time (the scan and the queue view interleave in
// the RepoObject) agree with analyses made one at a time.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { syntheticSnapshot } from "../../../bench/synthetic.ts";
import { DEFAULT_CONFIG } from "../../../shared/config/schema.ts";
import { compactFromSnapshot } from "../../../shared/graph/compact.ts";
import {
  analyzeCompact,
  analyzeCompactSteps,
  asGraphAnalysis,
  releaseAnalysis,
  renderCompactScan,
} from "../../../shared/graph/compact-analysis.ts";
import { ScratchArrays, scratch } from "../../../shared/graph/scratch.ts";
import { parseSnapshot } from "../../../shared/graph/snapshot.ts";
import { impactScores } from "../../../shared/queue/impact.ts";
import { oracleImpact } from "../../support/oracle/impact.ts";

const NOW = "2026-11-29T12:00:00Z";

describe("scratch arrays", () => {
  it("lend arrays that read as new ones (zeros or the fill), whatever the last borrower wrote", () => {
    const kinds = fc.constantFrom("int32", "uint8", "float64");
    const op = fc.record({
      kind: kinds,
      length: fc.integer({ min: 0, max: 5_000 }),
      fill: fc.integer({ min: -3, max: 3 }),
      scribble: fc.integer({ min: 1, max: 200 }),
      keep: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const pool = new ScratchArrays({ minBytes: 64 });
        const out: Array<{ array: Int32Array | Uint8Array | Float64Array; scribble: number }> = [];
        for (const o of ops) {
          const array =
            o.kind === "int32"
              ? pool.int32(o.length, o.fill)
              : o.kind === "uint8"
                ? pool.uint8(o.length)
                : pool.float64(o.length);
          const expected = o.kind === "int32" ? o.fill : 0;
          expect(array.length).toBe(o.length);
          expect((array as Int32Array).every((v) => v === expected)).toBe(true);
          array.fill(o.scribble);
          if (o.keep) out.push({ array, scribble: o.scribble });
          else pool.release(array);
        }
        // Arrays still out were never handed to anyone else: nobody overwrote their scribbles.
        for (const { array, scribble } of out)
          expect(array.every((v) => v === scribble)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it("lend a returned buffer again, and a buffer released twice to one borrower only", () => {
    const pool = new ScratchArrays({ minBytes: 64 });
    const first = pool.int32(1_000);
    pool.release(first);
    pool.release(first);
    const again = pool.int32(1_000);
    const other = pool.int32(1_000);
    expect(again.buffer).toBe(first.buffer);
    expect(other.buffer).not.toBe(first.buffer);
  });

  it("ignore arrays they did not lend, and keep no more than their bound", () => {
    const pool = new ScratchArrays({ minBytes: 64, maxFreeBytes: 8_192 });
    pool.release(new Int32Array(1_000), new Uint8Array(4_096).subarray(0, 10), null);
    expect(pool.keptBytes).toBe(0);
    const lent = [pool.int32(1_000), pool.int32(1_000), pool.int32(1_000)];
    pool.release(...lent);
    // Each is lent from a 4 KiB buffer: two fit under 8 KiB, the third is left to the collector.
    expect(pool.keptBytes).toBe(8_192);
    // Too small to lend: made new each time, never kept.
    const tiny = pool.int32(4);
    pool.release(tiny);
    expect(pool.keptBytes).toBe(8_192);
  });
});

describe("analyses borrowing scratch arrays", () => {
  const big = (n: number, seed: number) =>
    parseSnapshot({ ...syntheticSnapshot(n, seed), now: NOW });

  it("give their arrays back when abandoned half-way", () => {
    const graph = compactFromSnapshot(big(4_000, 1), DEFAULT_CONFIG.labels);
    const kept = scratch.keptBytes;
    const steps = analyzeCompactSteps(graph, { now: NOW });
    steps.next();
    steps.next();
    steps.next();
    steps.return(undefined as never);
    expect(scratch.keptBytes).toBeGreaterThan(kept);
  });

  it("keep a finished analysis's arrays until its owner releases it, then take them back once", () => {
    const graphs = [big(3_000, 3), big(3_000, 4)].map((s) =>
      compactFromSnapshot(s, DEFAULT_CONFIG.labels),
    );
    const first = analyzeCompact(graphs[0]!, { now: NOW });
    const shown = renderCompactScan(first);
    // Others borrow and give back around it: none of them is lent its arrays.
    for (let k = 0; k < 3; k++) releaseAnalysis(analyzeCompact(graphs[1]!, { now: NOW }));
    expect(renderCompactScan(first)).toEqual(shown);
    const kept = scratch.keptBytes;
    releaseAnalysis(first);
    expect(scratch.keptBytes).toBeGreaterThan(kept);
    // Released: it reads nothing (not another analysis's numbers), and a second release is a no-op.
    expect(first.flags.length).toBe(0);
    expect(first.openOrder.length).toBe(0);
    const after = scratch.keptBytes;
    releaseAnalysis(first);
    expect(scratch.keptBytes).toBe(after);
    // The next analysis reuses them and answers as a new one would.
    expect(renderCompactScan(analyzeCompact(graphs[0]!, { now: NOW }))).toEqual(shown);
  });

  it("agree with analyses made one at a time when they interleave", () => {
    const snapshots = [big(3_000, 7), big(5_000, 8)];
    const graphs = snapshots.map((s) => compactFromSnapshot(s, DEFAULT_CONFIG.labels));
    const alone = graphs.map((g) => renderCompactScan(analyzeCompact(g, { now: NOW })));
    // Both in flight at once, step by step, as the scan and the queue view can be.
    const steps = graphs.map((g) => analyzeCompactSteps(g, { now: NOW }));
    const done: Array<ReturnType<typeof renderCompactScan> | null> = [null, null];
    while (done.includes(null)) {
      steps.forEach((s, i) => {
        if (done[i] !== null) return;
        const step = s.next();
        if (step.done) done[i] = renderCompactScan(step.value);
      });
    }
    expect(done).toEqual(alone);
    // And impact, with the oracle's walk (test/support/oracle), for the same snapshots.
    snapshots.forEach((snapshot, i) => {
      expect(impactScores(asGraphAnalysis(analyzeCompact(graphs[i]!, { now: NOW })))).toEqual(
        oracleImpact(snapshot),
      );
    });
  });
});
