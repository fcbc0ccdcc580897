import { type BodyMarker, renderBodyMarker, scanBodyMarkers } from "./body-markers.ts";
import { type CommentMarker, parseCommentMarker, renderCommentMarker } from "./comment-markers.ts";
import { type LiveStatusMarker, parseLiveStatus, renderLiveStatus } from "./live-status.ts";
import {
  parseSuitabilityRejection,
  renderSuitabilityRejection,
  type SuitabilityRejectionMarker,
} from "./suitability-rejection.ts";

/** Every IDD marker switchyard reads or writes, discriminated by `kind`. */
export type Marker = CommentMarker | LiveStatusMarker | SuitabilityRejectionMarker | BodyMarker;
export type MarkerKind = Marker["kind"];

export interface MarkerDiagnostic {
  kind: "malformed-marker" | "missing-outcome";
  /** The marker name as written (e.g. `claimed-by`, `idd-skill-effort`). */
  marker: string;
  /** Offset in the body where the marker starts. */
  offset: number;
  reason: string;
}

export interface MarkerReading {
  markers: Marker[];
  diagnostics: MarkerDiagnostic[];
}

export interface ReadMarkersOptions {
  /** The repository's IDD marker prefix for prefixed body markers; absent: any prefix. */
  prefix?: string | null;
}

/**
 * All markers of one comment or issue body: the leading comment marker (claim protocol), the
 * digest first line, the A4.5 rejection, then body markers in document order.
 */
export function readMarkers(body: string, options: ReadMarkersOptions = {}): MarkerReading {
  const markers: Marker[] = [];
  const diagnostics: MarkerDiagnostic[] = [];
  const comment = parseCommentMarker(body);
  if (comment.status === "ok") markers.push(comment.marker);
  else if (comment.status === "malformed") {
    diagnostics.push({
      kind: "malformed-marker",
      marker: comment.token,
      offset: Math.max(0, body.indexOf("<!--")),
      reason: comment.reason,
    });
  }
  const digest = parseLiveStatus(body);
  if (digest) markers.push(digest);
  const rejection = parseSuitabilityRejection(body);
  if (rejection) {
    markers.push(rejection);
    if (rejection.outcome === null) {
      diagnostics.push({
        kind: "missing-outcome",
        marker: "suitability-rejection",
        offset: body.length - body.trimStart().length,
        reason: "the rejection names no `outcome:` among the six A4.5 outcomes",
      });
    }
  }
  const scan = scanBodyMarkers(body, options);
  markers.push(...scan.markers);
  diagnostics.push(...scan.diagnostics);
  return { markers, diagnostics };
}

/** Canonical text of any marker; `readMarkers(renderMarker(m)).markers` is `[m]`. */
export function renderMarker(marker: Marker): string {
  switch (marker.kind) {
    case "claimed-by":
    case "claimed-by-legacy":
    case "unclaimed-by":
    case "unclaimed-by-legacy":
    case "activation-nonce":
    case "forced-handoff":
      return renderCommentMarker(marker);
    case "live-status":
      return renderLiveStatus(marker);
    case "suitability-rejection":
      if (marker.outcome === null) {
        throw new RangeError("a suitability rejection is rendered with an outcome");
      }
      return renderSuitabilityRejection({ outcome: marker.outcome, check: marker.check });
    default:
      return renderBodyMarker(marker);
  }
}
