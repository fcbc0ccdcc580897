// The status page's picture from the compact analysis (the kept scan) and the issues it draws,
// against the oracle's picture over the whole snapshot (test/support/oracle): the same kinds,
// the same choice, the same picture.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../shared/config/schema.ts";
import { compactFromSnapshot } from "../../../shared/graph/compact.ts";
import { analyzeCompact } from "../../../shared/graph/compact-analysis.ts";
import { parseSnapshot } from "../../../shared/graph/snapshot.ts";
import { drawPicture, type FleetMarks } from "../../../shared/status/picture.ts";
import { choosePicture, pictureOf } from "../../../shared/status/picture-compact.ts";
import { snapshotArbitrary } from "../../support/graph-arbitraries.ts";
import { oraclePicture } from "../../support/oracle/picture.ts";

const numbers = (max: number) => fc.uniqueArray(fc.integer({ min: 1, max }), { maxLength: 6 });

describe("the picture from the compact analysis", () => {
  it("equals the oracle's picture of the whole snapshot, for every cut", () => {
    fc.assert(
      fc.property(
        snapshotArbitrary(60, 1),
        fc.integer({ min: 0, max: 70 }),
        numbers(62),
        numbers(62),
        numbers(62),
        (input, max, queued, claimed, stuck) => {
          const snapshot = parseSnapshot(input);
          const marks: FleetMarks = {
            queued: new Set(queued),
            claimed: new Set(claimed),
            stuck: new Set(stuck),
          };
          const whole = oraclePicture(snapshot, DEFAULT_CONFIG, marks, max);
          const analysis = analyzeCompact(compactFromSnapshot(snapshot, DEFAULT_CONFIG.labels), {
            config: DEFAULT_CONFIG,
            ...(snapshot.now !== undefined ? { now: snapshot.now } : {}),
          });
          const { kinds, total } = choosePicture(analysis, marks, max);
          expect(kinds.size).toBe(Math.min(max, snapshot.issues.length));
          expect(total).toBe(snapshot.issues.length);
          const drawn = snapshot.issues.filter((i) => kinds.has(i.number));
          expect(drawPicture(snapshot.repo, drawn, kinds, total)).toEqual(whole);
          expect(pictureOf(snapshot, DEFAULT_CONFIG, marks, max)).toEqual(whole);
        },
      ),
      { numRuns: 300 },
    );
  });
});
