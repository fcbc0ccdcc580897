// The bound on a fenced write (shared/claims/write-records.ts): its window, when its record
// closes, the 409 a grant gets meanwhile, and the hidden marker of fenced comments.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nextFence } from "../../../shared/claims/fence.ts";
import {
  appliedLate,
  closeAtFor,
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
