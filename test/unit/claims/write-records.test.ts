// The bound on a fenced write (shared/claims/write-records.ts): its window, when its record
// closes, the 409 a grant gets meanwhile, and the hidden marker of fenced comments.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nextFence } from "../../../shared/claims/fence.ts";
import {
  appliedLate,
  closeAtFor,
  lateChangeRecord,
  MAX_WRITE_MS,
  parseWriteMarker,
  renderWriteMarker,
  WRITE_MARKER_ROOM,
  WRITE_SETTLE_MARGIN_MS,
  withWriteMarker,
  writeInFlightDenial,
  writeWindow,
} from "../../../shared/claims/write-records.ts";

const M = WRITE_SETTLE_MARGIN_MS;

describe("write window", () => {
  it("a write near its claim's expiry may run a margin past it; the record closes a margin later", () => {
    // The case: TTL 60 s, the write starts at 55 s.
    expect(writeWindow({ startMs: 55_000, claimExpiresMs: 60_000 })).toEqual({
      deadlineMs: 60_000 + M,
      closeAtMs: 60_000 + 2 * M,
    });
  });

  it("a write early in a long claim is bounded by MAX_WRITE_MS, not by the claim", () => {
    const w = writeWindow({ startMs: 0, claimExpiresMs: 86_400_000 });
    expect(w.deadlineMs).toBe(MAX_WRITE_MS);
  });

  it("never later than the claim's expiry plus the margin, and the close always after the deadline", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e9 }),
        fc.integer({ min: 1, max: 86_400_000 }),
        fc.integer({ min: 0, max: 60_000 }),
        (start, life, margin) => {
          const w = writeWindow({ startMs: start, claimExpiresMs: start + life, marginMs: margin });
          expect(w.deadlineMs).toBeLessThanOrEqual(start + life + margin);
          expect(w.deadlineMs).toBeLessThanOrEqual(start + MAX_WRITE_MS);
          expect(w.closeAtMs).toBe(w.deadlineMs + margin);
        },
      ),
    );
  });
});

describe("closing a record", () => {
  const window = { deadlineMs: 70_000, closeAtMs: 80_000 };
  it("closes at once when GitHub answered or nothing more was sent", () => {
    expect(closeAtFor("answered", 61_000, window)).toBe(61_000);
    expect(closeAtFor("not-sent", 61_000, window)).toBe(61_000);
  });
  it("stays open a margin after a request got no answer, never past the window's close", () => {
    expect(closeAtFor("no-answer", 56_500, window)).toBe(56_500 + M);
    expect(closeAtFor("no-answer", 70_000, window)).toBe(80_000);
    expect(closeAtFor("no-answer", 75_000, window)).toBe(80_000);
  });
});

describe("a grant while a write is in flight", () => {
  it("says when to ask again, at least a second", () => {
    expect(writeInFlightDenial(80_000, 60_500).retryAfterSeconds).toBe(20);
    expect(writeInFlightDenial(80_000, 79_999).retryAfterSeconds).toBe(1);
    expect(writeInFlightDenial(80_000, 60_500).message).toMatch(/previous claim/);
  });
});

describe("the fenced comment marker", () => {
  const ref = { claimId: "sy-0123456789abcdef0123", fence: 42 };
  it("is an HTML comment naming claim and fence, at the end of the body", () => {
    const body = withWriteMarker("progress: tests green", ref);
    expect(body).toBe(
      "progress: tests green\n\n<!-- switchyard-write: sy-0123456789abcdef0123 fence 42 -->",
    );
    expect(parseWriteMarker(body)).toEqual(ref);
    expect(renderWriteMarker(ref).length + 2).toBeLessThanOrEqual(WRITE_MARKER_ROOM);
  });
  it("is found only at the end, and only in its exact form", () => {
    expect(parseWriteMarker(`${renderWriteMarker(ref)}\nmore text`)).toBeNull();
    expect(parseWriteMarker("<!-- switchyard-write: sy-x fence 1 -->")).toBeNull();
    expect(parseWriteMarker("plain comment")).toBeNull();
    expect(parseWriteMarker(`${withWriteMarker("x", ref)}\n`)).toEqual(ref);
  });
  it("names a time-floored fence whole (16 digits) and keeps within its room", () => {
    const big = { claimId: ref.claimId, fence: nextFence(0, Date.parse("2026-12-02T15:00:00Z")) };
    expect(String(big.fence)).toHaveLength(16);
    expect(parseWriteMarker(withWriteMarker("x", big))).toEqual(big);
    const largest = { claimId: ref.claimId, fence: Number.MAX_SAFE_INTEGER };
    expect(parseWriteMarker(withWriteMarker("x", largest))).toEqual(largest);
    expect(renderWriteMarker(largest).length + 2).toBeLessThanOrEqual(WRITE_MARKER_ROOM);
  });
  it("a comment is late when GitHub created it in a second after its record closed", () => {
    expect(
      appliedLate(Date.parse("2026-12-02T10:00:05Z"), Date.parse("2026-12-02T10:00:05.400Z")),
    ).toBe(false);
    expect(
      appliedLate(Date.parse("2026-12-02T10:00:06Z"), Date.parse("2026-12-02T10:00:05.400Z")),
    ).toBe(true);
  });
});

describe("a label change or close applied late", () => {
  const closed = Date.parse("2026-12-01T10:00:00Z");
  const rec = (patch: Partial<Parameters<typeof lateChangeRecord>[1][number]> = {}) => ({
    id: 1,
    number: 1,
    kind: "labels",
    outcome: "no-answer",
    closeAtMs: closed,
    closedMs: closed as number | null,
    lateReported: false,
    ...patch,
  });
  const change = (patch: Partial<Parameters<typeof lateChangeRecord>[0]> = {}) => ({
    number: 1,
    kind: "labels" as const,
    at: "2026-12-01T10:00:05Z",
    actor: "switchyard[bot]",
    label: "bug",
    ...patch,
  });
  const owned = ["agent:ready", "agent:processing", "agent:stuck"];

  it("names the latest record of the kind that closed before the App's change", () => {
    const records = [
      rec({ id: 1 }),
      rec({ id: 2 }),
      rec({ id: 3, closedMs: null, closeAtMs: closed + 60_000 }),
    ];
    expect(lateChangeRecord(change(), records, owned)?.id).toBe(2);
    expect(
      lateChangeRecord(change({ kind: "close", label: null }), [rec({ kind: "close" })], owned)?.id,
    ).toBe(1);
    // A record past its close the alarm has not closed yet counts at its close time.
    expect(lateChangeRecord(change(), [rec({ closedMs: null })], owned)?.id).toBe(1);
  });

  it("not a person's or another's change, not switchyard's own labels, not inside the close's second", () => {
    expect(lateChangeRecord(change({ actor: "octocat" }), [rec()], owned)).toBeNull();
    expect(lateChangeRecord(change({ actor: null }), [rec()], owned)).toBeNull();
    expect(lateChangeRecord(change({ label: "Agent:Processing" }), [rec()], owned)).toBeNull();
    expect(lateChangeRecord(change({ at: "2026-12-01T10:00:00Z" }), [rec()], owned)).toBeNull();
  });

  it("not a write GitHub answered, one already reported, another issue's or another kind's", () => {
    expect(lateChangeRecord(change(), [rec({ outcome: "answered" })], owned)).toBeNull();
    expect(lateChangeRecord(change(), [rec({ outcome: "not-sent" })], owned)).toBeNull();
    expect(lateChangeRecord(change(), [rec({ lateReported: true })], owned)).toBeNull();
    expect(lateChangeRecord(change(), [rec({ number: 2 })], owned)).toBeNull();
    expect(lateChangeRecord(change(), [rec({ kind: "close" })], owned)).toBeNull();
    // A write that never reported back (evicted) may land late too.
    expect(lateChangeRecord(change(), [rec({ outcome: "unfinished" })], owned)?.id).toBe(1);
  });
});
