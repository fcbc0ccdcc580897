// The quiet index (replies-store.ts): a byte per issue number saying how quiet its stored reply
// history is (`replyQuiet`), so a reader reads only the histories that can give it something.
import { type ReplyQuiet, replyQuiet } from "../../../shared/queue/reply-state.ts";
import type { StoredReplyHistory } from "./reply-rows.ts";

/** What the quiet index says of an issue number (`ReplyQuiet`, and two states of its own). */
export const UNKNOWN = 0; // written since it was read (or never read): read it
const LOUD = 1; // `replyQuiet` null: read it
const SILENT = 2;
const NO_AGENT = 3;
export const NO_OPENING = 4; // no opening row: nothing to read

/**
 * Issue numbers the quiet index covers (a byte each): past this (an absurd number, never a real
 * repository's) the index is dropped and every read reads every history, as before.
 */
export const QUIET_INDEX_MAX = 1 << 22;

/** The quiet index's code of a history (`replyQuiet`). */
export function quietCode(history: StoredReplyHistory): number {
  const quiet = replyQuiet(history);
  return quiet === "silent" ? SILENT : quiet === "no-agent" ? NO_AGENT : LOUD;
}

/**
 * Sets issue `number`'s code in a quiet index, grown (numbers beyond it have no opening) when
 * the number is past its end; returns the index to keep.
 */
export function mark(index: Uint8Array, number: number, code: number): Uint8Array {
  let out = index;
  if (number >= out.length) {
    out = new Uint8Array(Math.max(number + 1, out.length * 2)).fill(NO_OPENING);
    out.set(index);
  }
  out[number] = code;
  return out;
}

/** What a code says of its history (UNKNOWN and LOUD: it must be read). */
export function quietOf(code: number): ReplyQuiet {
  return code === SILENT ? "silent" : code === NO_AGENT ? "no-agent" : null;
}
