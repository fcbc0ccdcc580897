// The fencing token's rule. A fence must never be handed out twice, nor lower than one handed
// out before, or a stale holder's write would pass for the live one. A counter alone holds that
// only while storage does: a restored backup, or commits lost to a power cut under
// `--synchronous normal`, set it back. So each fence is at least the wall clock's second times
// 2^20: after any restore (which takes more than a second) the next fence is above every fence
// handed out before it, as long as the clock does not go back and fewer than 2^20 (1,048,576)
// fences are handed out in one second. Seconds × 2^20 stays below 2^53 (exact in JSON and
// JavaScript) until the year 2242.

/** Fences per second the time floor leaves room for (the low 20 bits). */
export const FENCE_SECOND_STEP = 2 ** 20;

/** The fence after `previous` at `nowMs`: above it, and at least the time floor. */
export function nextFence(previous: number, nowMs: number): number {
  return Math.max(previous + 1, Math.floor(nowMs / 1000) * FENCE_SECOND_STEP);
}
