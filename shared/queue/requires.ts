import { scanBodyMarkers } from "../idd/body-markers.ts";

/**
 * The capabilities an issue body asks for (`<!-- requires: a,b -->`, outside code), lower-cased
 * and deduplicated: the one thing the queue's rules read from a body. Extracted when the body is
 * stored, so the graph never holds bodies.
 */
export function requiresOf(body: string | null | undefined): string[] {
  if (!body?.includes("requires")) return [];
  const out: string[] = [];
  for (const marker of scanBodyMarkers(body).markers) {
    if (marker.kind === "requires") out.push(...marker.capabilities.map((c) => c.toLowerCase()));
  }
  return [...new Set(out)];
}

/** The stored form of a `requires` list: JSON text, or null for none. */
export function encodeRequires(requires: readonly string[]): string | null {
  return requires.length === 0 ? null : JSON.stringify(requires);
}

export function decodeRequires(text: string | null | undefined): string[] {
  return text ? (JSON.parse(text) as string[]) : [];
}
