import { visibleProse } from "./markdown-code.ts";

/**
 * The suggestion-list gate: an audit's "suggested close" / "suggested merge" table is evidence,
 * never an instruction. An item it names becomes actionable only when a human removed that
 * item's hold, or a later, independent human comment explicitly confirms the action for that
 * specific issue (a generic "LGTM" names no issue and never counts).
 */

const SUGGESTION_HEADING =
  /suggested[\s_-]*(?:close|closure|closing|merge|batch)|建议(?:关闭|合并)/i;
const LIST_LINE = /^[ \t]*(?:\||[-*+][ \t]|\d+[.)][ \t])/;
const CONFIRMATION =
  /\b(?:close|closing|merge|merging|confirm(?:ed)?|approve(?:d)?|go ahead|proceed)\b|关闭|合并|确认|同意/i;

/** True when the markdown (outside code) carries a suggested-batch-action list. */
export function containsSuggestionList(markdown: string): boolean {
  return isSuggestionListProse(visibleProse(markdown));
}

/** containsSuggestionList over text already reduced to visible prose. */
export function isSuggestionListProse(prose: string): boolean {
  return SUGGESTION_HEADING.test(prose);
}

/** Issue numbers (`#N`) named on table rows or list items, ascending, without duplicates. */
export function suggestionListItems(markdown: string): number[] {
  const items = new Set<number>();
  for (const line of visibleProse(markdown).split("\n")) {
    if (!LIST_LINE.test(line)) continue;
    for (const match of line.matchAll(/(?<![\w/])#([1-9]\d{0,9})(?!\d)/g))
      items.add(Number(match[1]));
  }
  return [...items].sort((a, b) => a - b);
}

/**
 * True when the markdown explicitly confirms an action on issue `item`: it names `#item` and a
 * confirming verb (close, merge, confirm, approve, go ahead, proceed, or the Chinese 关闭 / 合并 /
 * 确认 / 同意), and is not itself a suggestion list.
 */
export function confirmsSuggestion(markdown: string, item: number): boolean {
  return confirmsSuggestionProse(visibleProse(markdown), item);
}

/** confirmsSuggestion over text already reduced to visible prose. */
export function confirmsSuggestionProse(prose: string, item: number): boolean {
  if (SUGGESTION_HEADING.test(prose)) return false;
  const named = new RegExp(`(?<![\\w/])#${item}(?!\\d)`).test(prose);
  return named && CONFIRMATION.test(prose);
}
