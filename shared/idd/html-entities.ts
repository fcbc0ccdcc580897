import { decodeHTML } from "entities";

/**
 * Decodes HTML character references until the text stops changing (at most four rounds), so a
 * marker that arrived escaped (`&lt;!--`) or double-escaped (`&amp;lt;!--`, the #1278 bug in
 * the sweep seed) reads as the marker it is.
 */
export function decodeEntitiesDeep(text: string): string {
  let current = text;
  for (let round = 0; round < 4 && current.includes("&"); round += 1) {
    const next = decodeHTML(current);
    if (next === current) break;
    current = next;
  }
  return current;
}
