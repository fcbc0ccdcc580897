import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../../shared/auth/hash.ts";
import {
  DEFAULT_KEY_LIFETIME_DAYS,
  formatKey,
  KEY_SECRET_BYTES,
  KEY_USE_RESOLUTION_MS,
  keyCallVerdict,
  keyExpiresMs,
  keyState,
  keySummary,
  keyVerdict,
  MAX_KEY_LIFETIME_DAYS,
  migratedKeyExpiresMs,
  mintKey,
  parseKey,
  type StoredKey,
  shouldRecordUse,
} from "../../../shared/auth/keys.ts";
import { tokenKind } from "../../../shared/auth/tokens.ts";
import { DAY_MS } from "../../../shared/graph/time.ts";

const NOW = Date.parse("2026-12-01T10:00:00Z");
const key = (extra: Partial<StoredKey> = {}): StoredKey => ({
  id: "k1",
  name: "ci",
  createdBy: "alice",
  createdMs: NOW - DAY_MS,
  lastUsedMs: null,
  expiresMs: null,
  revokedMs: null,
  ...extra,
});

describe("the key format", () => {
  it("syk_<repoId>_<43 base64url characters>, parsed back to its repository", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        fc.uint8Array({ minLength: KEY_SECRET_BYTES, maxLength: KEY_SECRET_BYTES }),
        (repoId, secret) => {
          const k = formatKey(repoId, secret);
          expect(k).toMatch(/^syk_[1-9][0-9]*_[A-Za-z0-9_-]{43}$/);
          expect(parseKey(k)).toEqual({ repoId });
          expect(tokenKind(k)).toBe("key");
        },
      ),
      { numRuns: 200 },
    );
  });

  it("anything else is not a key", () => {
    const tail = "A".repeat(43);
    for (const token of [
      "",
      "syk_",
      `syk_0_${tail}`,
      `syk_01_${tail}`,
      `syk_-1_${tail}`,
      `syk_12_${tail}A`,
      `syk_12_${"A".repeat(42)}`,
      `syk_12_${"A".repeat(42)}=`,
      `syk_1234567890123456789_${tail}`,
      `SYK_12_${tail}`,
      `ghp_12_${tail}`,
    ]) {
      expect(parseKey(token), token).toBeNull();
    }
  });

  it("refuses to format a key for no repository or with a short secret", () => {
    expect(() => formatKey(0, new Uint8Array(32))).toThrow(RangeError);
    expect(() => formatKey(5, new Uint8Array(16))).toThrow(RangeError);
  });

  it("mintKey makes a fresh key each time and returns the SHA-256 to store", async () => {
    const a = await mintKey(42);
    const b = await mintKey(42);
    expect(a.key).not.toBe(b.key);
    expect(parseKey(a.key)).toEqual({ repoId: 42 });
    expect(a.hash).toBe(await sha256Hex(a.key));
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
    const fixed = await mintKey(7, (bytes) => bytes.fill(255));
    expect(fixed.key).toBe(`syk_7_${"_".repeat(42)}8`);
  });
});

describe("decisions about a stored key", () => {
  it("expires at exactly expiresMs; revoked wins over expired", () => {
    expect(keyState(key(), NOW)).toBe("active");
    expect(keyState(key({ expiresMs: NOW + 1 }), NOW)).toBe("active");
    expect(keyState(key({ expiresMs: NOW }), NOW)).toBe("expired");
    expect(keyState(key({ revokedMs: NOW - 5 }), NOW)).toBe("revoked");
    expect(keyState(key({ revokedMs: NOW - 5, expiresMs: NOW - 10 }), NOW)).toBe("revoked");
  });

  it("a verdict lets in active keys only, and says why not", () => {
    expect(keyVerdict(key(), NOW)).toEqual({ ok: true, id: "k1", name: "ci" });
    expect(keyVerdict(null, NOW)).toEqual({ ok: false, reason: "unknown" });
    expect(keyVerdict(key({ expiresMs: NOW - 1 }), NOW)).toEqual({ ok: false, reason: "expired" });
    expect(keyVerdict(key({ revokedMs: NOW }), NOW)).toEqual({ ok: false, reason: "revoked" });
  });

  it("records a use at most once a minute", () => {
    expect(shouldRecordUse(null, NOW)).toBe(true);
    expect(shouldRecordUse(NOW - KEY_USE_RESOLUTION_MS + 1, NOW)).toBe(false);
    expect(shouldRecordUse(NOW - KEY_USE_RESOLUTION_MS, NOW)).toBe(true);
  });

  it("expiry in days from creation, 90 by default; a key minted before expiry existed gets 90 days from its migration", () => {
    expect(keyExpiresMs(NOW)).toBe(NOW + 90 * DAY_MS);
    expect(keyExpiresMs(NOW, undefined)).toBe(NOW + DEFAULT_KEY_LIFETIME_DAYS * DAY_MS);
    expect(keyExpiresMs(NOW, 30)).toBe(NOW + 30 * DAY_MS);
    expect(MAX_KEY_LIFETIME_DAYS).toBe(365);
    expect(migratedKeyExpiresMs(NOW)).toBe(NOW + 90 * DAY_MS);
  });

  it("a summary has times as ISO instants and no secret", () => {
    const summary = keySummary(
      key({ lastUsedMs: NOW, expiresMs: NOW + DAY_MS, revokedMs: null, createdBy: "alice" }),
    );
    expect(summary).toEqual({
      id: "k1",
      name: "ci",
      createdAt: "2026-11-30T10:00:00Z",
      lastUsedAt: "2026-12-01T10:00:00Z",
      expiresAt: "2026-12-02T10:00:00Z",
      revokedAt: null,
    });
  });
});

describe("a key's request decided inside its repository's object", () => {
  const identity = { fullName: "acme/rocket", installationId: 3, status: "active" as const };
  const expected = { fullName: "ACME/Rocket", installationId: 3 };
  const good = { ok: true as const, id: "k1", name: "ci" };

  it("the key first: a bad key is 401 whatever the routing says", () => {
    for (const reason of ["unknown", "expired", "revoked"] as const) {
      expect(keyCallVerdict({ ok: false, reason }, null, expected)).toEqual({
        ok: false,
        status: 401,
        message: `${reason} fleet key`,
      });
    }
    expect(keyCallVerdict(good, null, expected)).toMatchObject({ status: 401 });
    expect(keyCallVerdict(good, { ...identity, status: "removed" }, expected)).toMatchObject({
      status: 401,
    });
  });

  it("then the name (renamed away: 403), then the installation (moved: 503, ask again)", () => {
    expect(keyCallVerdict(good, identity, expected)).toEqual({ ok: true, id: "k1" });
    expect(keyCallVerdict(good, { ...identity, status: "suspended" }, expected).ok).toBe(true);
    expect(keyCallVerdict(good, { ...identity, fullName: "acme/renamed" }, expected)).toMatchObject(
      { ok: false, status: 403 },
    );
    expect(keyCallVerdict(good, { ...identity, installationId: 4 }, expected)).toMatchObject({
      ok: false,
      status: 503,
    });
  });
});
