import { describe, expect, it } from "vitest";
import { CreateKeyRequestSchema, KeySummarySchema } from "../../../shared/auth/schemas.ts";

describe("CreateKeyRequestSchema", () => {
  it("a name of 1 to 100 characters and an optional whole number of days, 1 to 365", () => {
    for (const body of [
      { name: "c" },
      { name: "x".repeat(100) },
      { name: "ci", expiresInDays: 1 },
      { name: "ci runner ✓", expiresInDays: 365 },
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
      { name: "ci", expiresInDays: 366 },
      { name: "ci", expiresInDays: 3650 },
      { name: "ci", expiresInDays: 2.5 },
      { name: "ci", expiresInDays: "7" },
      { name: "ci", scope: "all" },
      null,
    ]) {
      expect(CreateKeyRequestSchema.safeParse(body).success, JSON.stringify(body)).toBe(false);
    }
  });

  it("every key expires: 90 days unless the request says otherwise", () => {
    expect(CreateKeyRequestSchema.parse({ name: "ci" })).toEqual({ name: "ci", expiresInDays: 90 });
    expect(CreateKeyRequestSchema.parse({ name: "ci", expiresInDays: 7 }).expiresInDays).toBe(7);
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
