// Owner keys' shape and who may mint them (shared/org/owner-keys.ts, owner-check.ts).
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../../shared/auth/hash.ts";
import { parseKey } from "../../../shared/auth/keys.ts";
import { tokenKind } from "../../../shared/auth/tokens.ts";
import { ownerVerdict } from "../../../shared/org/owner-check.ts";
import {
  CreateOwnerKeyRequestSchema,
  mintOwnerKey,
  parseOwnerKey,
} from "../../../shared/org/owner-keys.ts";

describe("owner keys", () => {
  it("name their installation, are never taken for repository keys, and are stored as a hash", async () => {
    const { key, hash } = await mintOwnerKey(42);
    expect(key).toMatch(/^syk_o42_[A-Za-z0-9_-]{43}$/);
    expect(parseOwnerKey(key)).toEqual({ installationId: 42 });
    expect(parseKey(key)).toBeNull();
    expect(tokenKind(key)).toBe("key");
    expect(hash).toBe(await sha256Hex(key));
    expect(parseOwnerKey("syk_42_" + "a".repeat(43))).toBeNull();
    expect(parseOwnerKey("syk_o0_" + "a".repeat(43))).toBeNull();
    expect(parseOwnerKey(`${key}x`)).toBeNull();
  });

  it("expire: 90 days by default, at most 365", () => {
    expect(CreateOwnerKeyRequestSchema.parse({ name: "fleet" })).toEqual({
      name: "fleet",
      expiresInDays: 90,
    });
    const tooLong = CreateOwnerKeyRequestSchema.safeParse({ name: "x", expiresInDays: 366 });
    expect(tooLong.success).toBe(false);
    expect(CreateOwnerKeyRequestSchema.safeParse({ name: "x", never: true }).success).toBe(false);
  });
});

describe("who may mint owner keys", () => {
  const ok = (body: unknown) => ({ kind: "ok" as const, body });
  it("an active owner, or the user account itself", () => {
    expect(ownerVerdict("alice", "acme", 7, ok({ role: "admin", state: "active" }))).toEqual({
      ok: true,
    });
    expect(ownerVerdict("Octo", "octo", 7, null)).toEqual({ ok: true });
  });

  it("refuses a pending owner, a member, a stranger, and names a missing permission", () => {
    const pending = ownerVerdict("bob", "acme", 7, ok({ role: "admin", state: "pending" }));
    expect(pending).toMatchObject({ ok: false, status: 403 });
    expect(pending.ok ? "" : pending.message).toMatch(/pending, not active/);
    const member = ownerVerdict("carol", "acme", 7, ok({ role: "member", state: "active" }));
    expect(member.ok ? "" : member.message).toMatch(/member of acme, not an owner/);
    const stranger = ownerVerdict("dan", "acme", 7, { kind: "error", status: 404 });
    expect(stranger).toMatchObject({ status: 403 });
    const noPermission = ownerVerdict("alice", "acme", 7, { kind: "error", status: 403 });
    expect(noPermission.ok ? "" : noPermission.message).toMatch(/"members: read"/);
    expect(ownerVerdict("alice", "acme", 7, { kind: "error", status: 502 })).toMatchObject({
      status: 503,
    });
  });
});
