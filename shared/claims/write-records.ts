// The bound on a fenced write (spec 6.4, issue 21): GitHub writes carry no fence, so a write is
// recorded before it is sent with an absolute deadline, every retry and wait of it happens
// before that deadline, its requests are aborted at it, and while the record is open the issue
// is granted to nobody. Pure: the times come in, the decisions go out.

/**
 * The settle margin. A write may still be carried out this long after its claim's expiry (so a
 * write sent a moment before expiry is not cut off at once), and a write that ended without
 * GitHub's answer (aborted at its deadline, timed out, connection lost) keeps its record open
 * this long after it ended: GitHub applies a request it received within seconds, so once the
 * margin has passed a write it never answered is taken as applied or dropped for good.
 */
export const WRITE_SETTLE_MARGIN_MS = 10_000;

/**
 * The longest one fenced write may run, whatever is left of its claim: it bounds how long a
 * record left open by an eviction in the middle of a write keeps the issue from a new grant
 * after the claim ended (deadline plus margin).
 */
export const MAX_WRITE_MS = 60_000;

export interface WriteWindow {
  /** Every request of the write is sent, retried and waited for before this instant. */
  deadlineMs: number;
  /** The record closes by itself at this instant (an alarm closes it after an eviction too). */
  closeAtMs: number;
}

/**
 * The window of a write starting at `startMs` for a claim expiring at `claimExpiresMs`: the
 * deadline is the claim's expiry plus the margin, or `MAX_WRITE_MS` after the start if sooner;
 * the record closes a margin after the deadline.
 */
export function writeWindow(input: {
  startMs: number;
  claimExpiresMs: number;
  marginMs?: number;
}): WriteWindow {
  const margin = input.marginMs ?? WRITE_SETTLE_MARGIN_MS;
  const deadlineMs = Math.min(input.claimExpiresMs + margin, input.startMs + MAX_WRITE_MS);
  return { deadlineMs, closeAtMs: deadlineMs + margin };
}

/** How a write's record ends. */
export type WriteEnd =
  /** GitHub answered every request (success or a refusal): nothing more can land. */
  | "answered"
  /** A request got no answer (timeout, lost connection, aborted at the deadline). */
  | "no-answer"
  /** Stopped before sending anything more (stale fence, deadline passed between calls). */
  | "not-sent";

/**
 * When the record of a write that ended at `nowMs` closes: at once when nothing more can land
 * (GitHub answered, or nothing was sent after the last answer); a margin later when the last
 * request got no answer, never later than the window's own close.
 */
export function closeAtFor(
  end: WriteEnd,
  nowMs: number,
  window: WriteWindow,
  marginMs = WRITE_SETTLE_MARGIN_MS,
): number {
  if (end !== "no-answer") return nowMs;
  return Math.min(nowMs + marginMs, window.closeAtMs);
}

/** Is there still time before the deadline for a wait of `waitMs` and then a request? */
export function fitsBeforeDeadline(nowMs: number, waitMs: number, deadlineMs: number): boolean {
  return nowMs + waitMs < deadlineMs;
}

/**
 * The 409 a grant gets while a write of an earlier claim may still land: when to ask again
 * (seconds, at least 1) and a message saying why.
 */
export function writeInFlightDenial(
  closeAtMs: number,
  nowMs: number,
): { retryAfterSeconds: number; message: string } {
  const retryAfterSeconds = Math.max(1, Math.ceil((closeAtMs - nowMs) / 1000));
  return {
    retryAfterSeconds,
    message: `a write of the issue's previous claim may still reach GitHub; the issue is granted again once it settled (in at most ${retryAfterSeconds} s)`,
  };
}

// --- the hidden marker of fenced comments ---------------------------------------------------

/** Room a fenced comment keeps for its marker under GitHub's 65,536-character limit. */
export const WRITE_MARKER_ROOM = 96;

// Fences go up to 16 digits (Number.MAX_SAFE_INTEGER; time-floored fences are 16: fence.ts).
const MARKER = /<!-- switchyard-write: (sy-[0-9a-f]{20}) fence (\d{1,16}) -->\s*$/;

/** The marker naming the claim and fence a comment was written for (an HTML comment: hidden). */
export function renderWriteMarker(ref: { claimId: string; fence: number }): string {
  return `<!-- switchyard-write: ${ref.claimId} fence ${ref.fence} -->`;
}

/** A fenced comment's body as posted: the holder's text, then the marker on a line of its own. */
export function withWriteMarker(body: string, ref: { claimId: string; fence: number }): string {
  return `${body}\n\n${renderWriteMarker(ref)}`;
}

/** The claim and fence a comment's closing marker names, if it ends with one. */
export function parseWriteMarker(body: string): { claimId: string; fence: number } | null {
  const m = MARKER.exec(body);
  return m ? { claimId: m[1]!, fence: Number(m[2]) } : null;
}

/**
 * Was a comment that carries the marker of a write applied late, i.e. after the write's record
 * closed? `createdMs` is GitHub's `created_at` (whole seconds), so a comment of the same second
 * as the close is not counted late.
 */
export function appliedLate(createdMs: number, closedMs: number): boolean {
  return createdMs >= Math.floor(closedMs / 1000) * 1000 + 1000;
}

// --- label changes and closes GitHub applied late ------------------------------------------

/**
 * A label change or a close GitHub reported in an `issues` webhook (`labeled`, `unlabeled`:
 * the issue's `updated_at`; `closed`: its `closed_at`), with who made it.
 */
export interface ReportedChange {
  number: number;
  kind: "labels" | "close";
  /** GitHub's time of the change. */
  at: string;
  actor: string | null;
  /** The label added or removed (`labels` only). */
  label: string | null;
}

/** A write record as the late-change rule reads it. */
export interface RecordForChange {
  id: number;
  number: number;
  kind: string;
  outcome: string | null;
  closeAtMs: number;
  closedMs: number | null;
  lateReported: boolean;
}

/**
 * The fenced write a label change or close most likely came from when GitHub applied it after
 * the write's record closed (deadline plus margin), or null. Only a change made with the App's
 * identity counts (its actor is a bot: `slug[bot]`), and for labels only one switchyard does
 * not own (its own label writes, ready, processing and stuck, are never fenced writes, and a
 * holder cannot set them). Only a write whose last request got no answer (or that never
 * reported back) can land that late: an answered one was applied before its answer. Of the
 * issue's records of the same kind that had closed before the change, the latest is named.
 * Reported once per record.
 */
export function lateChangeRecord<R extends RecordForChange>(
  change: ReportedChange,
  records: readonly R[],
  ownedLabels: readonly string[],
): R | null {
  if (!change.actor?.endsWith("[bot]")) return null;
  if (change.kind === "labels") {
    const label = change.label?.toLowerCase();
    if (label === undefined || ownedLabels.some((l) => l.toLowerCase() === label)) return null;
  }
  const atMs = Date.parse(change.at);
  if (Number.isNaN(atMs)) return null;
  let found: R | null = null;
  for (const r of records) {
    if (r.number !== change.number || r.kind !== change.kind) continue;
    if (r.lateReported || r.outcome === "answered" || r.outcome === "not-sent") continue;
    const closedMs = r.closedMs ?? r.closeAtMs;
    if (!appliedLate(atMs, closedMs)) continue;
    if (found === null || r.id > found.id) found = r;
  }
  return found;
}
