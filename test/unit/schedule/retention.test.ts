import { describe, expect, it } from "vitest";
import { DAY_MS } from "../../../shared/graph/time.ts";
import {
  AUTHOR_TRUST_TTL_MS,
  CLAIM_HISTORY_RETENTION_MS,
  DELIVERY_RETENTION_MS,
  GITHUB_REDELIVERY_MS,
  IDEMPOTENCY_RETENTION_MS,
  retentionCutoffs,
  TOMBSTONE_RETENTION_MS,
} from "../../../shared/schedule/retention.ts";

describe("retention periods", () => {
  it("deliveries are remembered longer than GitHub redelivers them", () => {
    expect(DELIVERY_RETENTION_MS).toBeGreaterThan(GITHUB_REDELIVERY_MS);
  });

  it("tombstones outlive every delivery that could still bring a deleted row back", () => {
    expect(TOMBSTONE_RETENTION_MS).toBeGreaterThan(GITHUB_REDELIVERY_MS);
    expect(TOMBSTONE_RETENTION_MS).toBeGreaterThan(DELIVERY_RETENTION_MS);
  });

  it("cutoffs are the periods back from now", () => {
    const now = Date.parse("2027-06-01T00:00:00Z");
    const c = retentionCutoffs(now);
    expect(now - c.deliveriesMs).toBe(DELIVERY_RETENTION_MS);
    expect(now - c.tombstonesMs).toBe(TOMBSTONE_RETENTION_MS);
    expect(now - c.claimsMs).toBe(CLAIM_HISTORY_RETENTION_MS);
    expect(now - c.idempotencyMs).toBe(IDEMPOTENCY_RETENTION_MS);
    expect(now - c.authorTrustMs).toBe(AUTHOR_TRUST_TTL_MS);
    expect(now - c.fleetKeysMs).toBe(30 * DAY_MS);
    expect(c.auditLimit).toBeGreaterThan(0);
  });
});
