import {
  appliedLate,
  closeAtFor,
  lateChangeRecord,
  parseWriteMarker,
  type ReportedChange,
  type WriteEnd,
} from "../../../shared/claims/write-records.ts";
import type { GraphEvent } from "../../../shared/ingest/events.ts";
import type { RepoStore } from "./repo-store.ts";
import type { Schedules } from "./schedules-store.ts";
import type { WriteRecord } from "./write-records-store.ts";

// Fenced write records after they are opened (Claims.openWrite opens them, with the fence check,
// in one transaction): the write's end, the alarm's close, and a comment GitHub applied after
// its record closed, found by its marker and reported. The rules are
// shared/claims/write-records.ts.

/**
 * The write of `record` ended at `nowMs`: its record closes now, or a margin later when its
 * last request got no answer (the alarm's `writes` schedule closes it then).
 */
export function finishWrite(
  store: RepoStore,
  schedules: Schedules,
  record: WriteRecord,
  end: WriteEnd,
  nowMs: number,
  marginMs: number,
): void {
  const window = { deadlineMs: record.deadlineMs, closeAtMs: record.closeAtMs };
  const closeAtMs = closeAtFor(end, nowMs, window, marginMs);
  store.transaction(() => {
    store.writes.finish(record.id, end, closeAtMs, nowMs);
    if (closeAtMs > nowMs) schedules.at("writes", closeAtMs);
  });
}

/**
 * The `writes` schedule: closes the records due (after an eviction or a restart too: the
 * schedule is a row), audited, then waits for the next one.
 */
export function closeDueWrites(store: RepoStore, schedules: Schedules, nowMs: number): void {
  store.transaction(() => {
    for (const r of store.writes.due(nowMs)) {
      store.writes.close(r.id);
      store.audit(
        "write-record-closed",
        {
          number: r.number,
          claimId: r.claimId,
          fence: r.fence,
          kind: r.kind,
          // `no-answer`: GitHub never answered; `unfinished`: the write never reported back.
          outcome: r.outcome ?? "unfinished",
          deadlineMs: r.deadlineMs,
        },
        nowMs,
      );
    }
    const next = store.writes.nextCloseMs();
    if (next !== null) schedules.at("writes", next);
  });
}

/**
 * Comments a delivery brings that carry a fenced write's marker: one whose write got no answer
 * and which GitHub applied after the write's record closed (a new grant may have come between)
 * is reported in the audit log, once. Runs inside the delivery's transaction.
 */
export function reportLateWrites(
  store: RepoStore,
  comments: ReadonlyArray<{ id: number; number: number; body: string; createdAt: string }>,
  nowMs: number,
): void {
  for (const comment of comments) {
    const ref = parseWriteMarker(comment.body);
    if (ref === null) continue;
    const createdMs = Date.parse(comment.createdAt);
    for (const r of store.writes.commentsOf(ref.claimId, ref.fence)) {
      if (r.number !== comment.number || r.lateReported || r.outcome === "answered") continue;
      if (r.closedMs === null || !appliedLate(createdMs, r.closedMs)) continue;
      reportLate(
        store,
        r,
        { commentId: comment.id, createdAt: comment.createdAt, recordClosedMs: r.closedMs },
        nowMs,
      );
      break;
    }
  }
}

/** The label changes and closes (with who made them) a delivery's events report. */
export function reportedChanges(events: readonly GraphEvent[]): ReportedChange[] {
  const out: ReportedChange[] = [];
  for (const e of events) {
    if (e.type === "label-event") {
      out.push({ number: e.number, kind: "labels", at: e.at, actor: e.actor, label: e.label });
    } else if (e.type === "issue" && e.closedBy !== undefined && e.issue.closedAt !== null) {
      out.push({
        number: e.issue.number,
        kind: "close",
        at: e.issue.closedAt,
        actor: e.closedBy,
        label: null,
      });
    }
  }
  return out;
}

/**
 * Label changes and closes a delivery reports that a fenced write made after its record closed
 * (GitHub applied it past deadline plus margin; shared/claims/write-records.ts,
 * `lateChangeRecord`): reported in the audit log like a late comment, once per record. Runs
 * inside the delivery's transaction.
 */
export function reportLateChanges(
  store: RepoStore,
  changes: readonly ReportedChange[],
  nowMs: number,
): void {
  if (changes.length === 0) return;
  const { ready, processing, stuck } = store.config().labels;
  for (const change of changes) {
    const r = lateChangeRecord(change, store.writes.ofIssue(change.number, change.kind), [
      ready,
      processing,
      stuck,
    ]);
    if (r === null) continue;
    reportLate(
      store,
      r,
      {
        kind: r.kind,
        change: change.kind === "close" ? "closed" : `label ${change.label}`,
        at: change.at,
        recordClosedMs: r.closedMs ?? r.closeAtMs,
      },
      nowMs,
    );
  }
}

/** Record `r`'s write was applied late: audited once, with what showed it. */
function reportLate(
  store: RepoStore,
  r: WriteRecord,
  evidence: Record<string, unknown>,
  nowMs: number,
): void {
  store.writes.markLateReported(r.id);
  store.audit(
    "fenced-write-late",
    { number: r.number, claimId: r.claimId, fence: r.fence, ...evidence },
    nowMs,
  );
}
