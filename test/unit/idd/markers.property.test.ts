import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseCommentMarker } from "../../../shared/idd/comment-markers.ts";
import { type Marker, readMarkers, renderMarker } from "../../../shared/idd/markers.ts";
import { markerArbitraries } from "../../runtimes/idd-arbitraries.ts";

const COMMENT_KINDS = new Set<Marker["kind"]>([
  "claimed-by",
  "claimed-by-legacy",
  "unclaimed-by",
  "unclaimed-by-legacy",
  "activation-nonce",
  "forced-handoff",
]);

describe.each(Object.entries(markerArbitraries))("%s marker", (kind, arbitrary) => {
  it("parses back to the value it was rendered from", () => {
    fc.assert(
      fc.property(arbitrary, (marker) => {
        expect(readMarkers(renderMarker(marker))).toEqual({ markers: [marker], diagnostics: [] });
      }),
      { numRuns: 200 },
    );
  });

  it("renders its own parse byte-exactly", () => {
    fc.assert(
      fc.property(arbitrary, (marker) => {
        const text = renderMarker(marker);
        const [parsed] = readMarkers(text).markers;
        expect(renderMarker(parsed!)).toBe(text);
      }),
      { numRuns: 100 },
    );
  });

  if (COMMENT_KINDS.has(kind as Marker["kind"])) {
    it("is never live with prose after it", () => {
      fc.assert(
        fc.property(arbitrary, fc.constantFrom(" ok", "\n\nok", "\n\n_IDD_\nmore"), (m, tail) => {
          const read = parseCommentMarker(renderMarker({ ...m, note: null } as Marker) + tail);
          expect(read.status).toBe("malformed");
        }),
        { numRuns: 100 },
      );
    });
  }
});
