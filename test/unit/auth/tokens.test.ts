import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../../shared/auth/hash.ts";
import { MAX_TOKEN_LENGTH, parseAuthorization, tokenKind } from "../../../shared/auth/tokens.ts";

describe("parseAuthorization", () => {
  it("takes Bearer <token>, the scheme in any case", () => {
    for (const header of [
      "Bearer abc.def-_~+/=",
      "bearer abc.def-_~+/=",
      "BEARER   abc.def-_~+/=",
      "  Bearer abc.def-_~+/=  ",
    ]) {
      expect(parseAuthorization(header)).toEqual({ ok: true, token: "abc.def-_~+/=" });
    }
  });

  it("refuses a missing, empty, other-scheme or malformed header without repeating it", () => {
    const secret = "ghp_SECRETSECRET";
    for (const header of [
      undefined,
      null,
      "",
      "   ",
      "Bearer",
      "Bearer ",
      `Basic ${secret}`,
      `Token ${secret}`,
      `Bearer ${secret} more`,
      `Bearer ${secret}<`,
      `Bearer ${secret},x`,
      `Bearer\t${secret}`,
      `Bearer ${"a".repeat(MAX_TOKEN_LENGTH + 1)}`,
      `Bearer ==${secret}`,
    ]) {
      const parsed = parseAuthorization(header);
      expect(parsed.ok, String(header)).toBe(false);
      if (!parsed.ok) expect(parsed.message).not.toContain("SECRET");
    }
  });

  it("says what is missing", () => {
    expect(parseAuthorization(undefined)).toMatchObject({ message: /missing Authorization/ });
    expect(parseAuthorization("Basic x")).toMatchObject({ message: /malformed/ });
  });
});

describe("tokenKind", () => {
  it("fleet keys by prefix, JWTs by shape, anything else is a GitHub user token", () => {
    expect(tokenKind(`syk_12_${"a".repeat(43)}`)).toBe("key");
    expect(tokenKind("syk_garbage")).toBe("key");
    expect(tokenKind("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")).toBe("oidc");
    expect(tokenKind("ghp_abc123")).toBe("user");
    expect(tokenKind("github_pat_11ABC_xyz")).toBe("user");
    expect(tokenKind("gho_abc")).toBe("user");
    expect(tokenKind("a.b")).toBe("user");
    expect(tokenKind("a.b.c.d")).toBe("user");
  });
});

describe("sha256Hex", () => {
  it("is the lower-case hex SHA-256 of the UTF-8 bytes", async () => {
    expect(await sha256Hex("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(await sha256Hex("")).toBe(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
  });
});
