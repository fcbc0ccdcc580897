import type { Nodes } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { decodeEntitiesDeep } from "./html-entities.ts";

/**
 * Blanks every code block (fenced, indented, unclosed fences running to the end) and inline
 * code span with spaces, keeping every other character and every line break at its offset.
 * A marker or keyword inside code is quoted text, never a signal; CommonMark decides what is
 * code, so `~~~` fences, longer backtick runs and HTML comments containing backticks behave as
 * GitHub renders them.
 */
export function maskCode(markdown: string): string {
  // Without a backtick, tilde, tab or four-space indent no code can exist: skip the parse.
  if (!/[`~\t]| {4}/.test(markdown)) return markdown;
  const ranges: Array<[number, number]> = [];
  const visit = (node: Nodes): void => {
    if (node.type === "code" || node.type === "inlineCode") {
      const start = node.position?.start.offset;
      const end = node.position?.end.offset;
      if (start !== undefined && end !== undefined) ranges.push([start, end]);
      return;
    }
    if ("children" in node) for (const child of node.children) visit(child);
  };
  visit(fromMarkdown(markdown));
  if (ranges.length === 0) return markdown;
  let out = "";
  let cursor = 0;
  for (const [start, end] of ranges) {
    out += markdown.slice(cursor, start) + markdown.slice(start, end).replace(/[^\r\n]/g, " ");
    cursor = end;
  }
  return out + markdown.slice(cursor);
}

/** Blanks HTML comments (`<!-- ... -->`), so prose rules never read a marker's fields. */
export function maskHtmlComments(text: string): string {
  return text.replace(/<!--[\s\S]*?(?:-->|$)/g, (comment) => comment.replace(/[^\r\n]/g, " "));
}

/**
 * The text a reader sees as prose: HTML entities decoded (escaped markers become markers), code
 * blanked, then HTML comments blanked. Offsets are those of the decoded text.
 */
export function visibleProse(markdown: string): string {
  return maskHtmlComments(maskCode(decodeEntitiesDeep(markdown)));
}
