// One holder across protocols (shared/claims/preemption.ts): when switchyard re-reads an issue
// after its marker landed, and when that re-read ends its claim.
import { describe, expect, it } from "vitest";
import {
  IDD_VERIFY_SETTLE_MS,
  mirrorsSynchronously,
  PREEMPT_CHECK_MARGIN_MS,
  preemptCheckAt,
  preemptedBy,
} from "../../../shared/claims/preemption.ts";

describe("preemption", () => {
  it("re-reads after IDD's settle delay (5 s) plus a margin, so IDD agents have verified first", () => {
    expect(IDD_VERIFY_SETTLE_MS).toBe(5_000);
    expect(preemptCheckAt(100_000)).toBe(100_000 + 5_000 + PREEMPT_CHECK_MARGIN_MS);
    expect(PREEMPT_CHECK_MARGIN_MS).toBeGreaterThan(0);
  });

  it("a live claim meeting a live IDD holder is preempted by it; otherwise the claim stands", () => {
    const holder = { agentId: "idd-bot" };
    expect(preemptedBy({ claimLive: true, iddHolder: holder })).toBe(holder);
    expect(preemptedBy({ claimLive: true, iddHolder: null })).toBeNull();
    expect(preemptedBy({ claimLive: false, iddHolder: holder })).toBeNull();
  });
});

describe("synchronous mirroring", () => {
  const H = 3_600_000;
  it("only where a trusted IDD agent's marker was seen within idd.staleHours, and mirroring is on", () => {
    const base = { mirrorClaims: true, nowMs: 100 * H, staleHours: 24 };
    expect(mirrorsSynchronously({ ...base, iddSeenMs: 99 * H })).toBe(true);
    expect(mirrorsSynchronously({ ...base, iddSeenMs: 100 * H - 24 * H })).toBe(false);
    expect(mirrorsSynchronously({ ...base, iddSeenMs: null })).toBe(false);
    expect(mirrorsSynchronously({ ...base, mirrorClaims: false, iddSeenMs: 99 * H })).toBe(false);
  });
});
