// The synchronous SHA-256 behind every key lookup (shared/auth/hash.ts, @noble/hashes) is WebCrypto's digest.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sha256, sha256Hex, sha256HexSync } from "../../../shared/auth/hash.ts";

const hex = (bytes: ArrayBuffer | Uint8Array) =>
  [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

describe("sha256", () => {
  it("gives FIPS 180-4's test vectors", () => {
    expect(sha256HexSync("")).toBe(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
    expect(sha256HexSync("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(sha256HexSync("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
  });

  it("equals WebCrypto's digest on any bytes, across every padding boundary", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
        expect(hex(sha256(bytes))).toBe(hex(await crypto.subtle.digest("SHA-256", bytes)));
      }),
      { numRuns: 500 },
    );
    for (let n = 0; n <= 200; n++) {
      const bytes = new Uint8Array(n).map((_, i) => (i * 31 + n) & 0xff);
      expect(hex(sha256(bytes))).toBe(hex(await crypto.subtle.digest("SHA-256", bytes)));
    }
  });

  it("hashes a string's UTF-8 bytes, as keys are hashed", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "grapheme", maxLength: 80 }), async (text) => {
        const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
        expect(await sha256Hex(text)).toBe(hex(digest));
      }),
      { numRuns: 300 },
    );
  });
});
