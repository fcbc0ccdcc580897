import { describe, expect, it } from "vitest";
import { CreateKeyRequestSchema, KeySummarySchema } from "../../../shared/auth/schemas.ts";

describe("CreateKeyRequestSchema", () => {
  it("a name of 1 to 100 characters and an optional whole number of days, 1 to 3650", () => {
    for (const body of [
      { name: "c" },
      { name: "x".repeat(100) },
      { name: "ci", expiresInDays: 1 },
      { name: "ci runner ✓", expiresInDays: 3650 },
    ]) {
      expect(CreateKeyRequestSchema.safeParse(body).success, JSON.stringify(body)).toBe(true);
    }
    for (const body of [
      {},
      { name: "" },
      { name: "   " },
      { name: "x".repeat(101) },
      { name: "tab\there" },
      { name: 5 },
      { name: "ci", expiresInDays: 0 },
      { name: "ci", expiresInDays: 3651 },
      { name: "ci", expiresInDays: 2.5 },
      { name: "ci", expiresInDays: "7" },
      { name: "ci", scope: "all" },
      null,
    ]) {
      expect(CreateKeyRequestSchema.safeParse(body).success, JSON.stringify(body)).toBe(false);
    }
  });
});

describe("KeySummarySchema", () => {
  it("has no field for a secret or a hash", () => {
    expect(Object.keys(KeySummarySchema.shape).sort()).toEqual([
      "createdAt",
      "expiresAt",
      "id",
      "lastUsedAt",
      "name",
      "revokedAt",
    ]);
  });
});
