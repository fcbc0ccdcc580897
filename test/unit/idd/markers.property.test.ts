import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseCommentMarker } from "../../../shared/idd/comment-markers.ts";
import { type Marker, readMarkers, renderMarker } from "../../../shared/idd/markers.ts";
import { markerArbitraries } from "../../runtimes/idd-arbitraries.ts";

/** Comment markers that allow at most one IDD note line after them (not forced-handoff). */
const COMMENT_KINDS = new Set<Marker["kind"]>([
  "claimed-by",
  "claimed-by-legacy",
  "unclaimed-by",
  "unclaimed-by-legacy",
  "activation-nonce",
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

    it("is not a marker when whitespace precedes it", () => {
      fc.assert(
        fc.property(arbitrary, fc.constantFrom(" ", "\n", "\t", "\r\n"), (m, lead) => {
          expect(parseCommentMarker(lead + renderMarker(m)).status).toBe("none");
        }),
        { numRuns: 100 },
      );
    });
  }
});

describe("forced-handoff marker (read as IDD's parser reads it)", () => {
  const handoff = markerArbitraries["forced-handoff"];

  it("is a handoff with any visible text after it, whitespace around it ignored", () => {
    fc.assert(
      fc.property(
        handoff,
        fc.constantFrom("", " ", "\n\n", "\t"),
        fc.constantFrom("", "\n", " \n\n"),
        (m, lead, trail) => {
          expect(parseCommentMarker(lead + renderMarker(m) + trail)).toEqual({
            status: "ok",
            marker: m,
          });
        },
      ),
      { numRuns: 100 },
    );
  });

  it("is never a handoff without visible text after it", () => {
    fc.assert(
      fc.property(
        handoff,
        fc.constantFrom("", "\n\n", "\n\n<!-- hidden -->", "\n\n<!-- hidden"),
        (m, tail) => {
          const bare = renderMarker(m).slice(0, renderMarker(m).indexOf("-->") + 3);
          expect(parseCommentMarker(bare + tail).status).toBe("malformed");
        },
      ),
      { numRuns: 100 },
    );
  });
});
