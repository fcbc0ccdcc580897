// The audit log's lanes: keys and fenced writes stay on record apart from the high-volume kinds.
import { describe, expect, it } from "vitest";
import { auditLane } from "../../../shared/schedule/audit-lanes.ts";

describe("auditLane", () => {
  it("puts keys and fenced writes on record, and everything else in activity", () => {
    for (const kind of ["key-created", "key-revoked", "fenced-write", "fenced-write-late"]) {
      expect(auditLane(kind), kind).toBe("record");
    }
    for (const kind of ["claim", "release", "claim-expired", "webhook", "fleet-write", "keys"]) {
      expect(auditLane(kind), kind).toBe("activity");
    }
  });
});
