// Session cookies: a signed one opens to its user and token; tampered, foreign, expired and
// malformed ones are refused; the token is never readable in the cookie.
import { describe, expect, it } from "vitest";
import {
  clearSessionCookieHeader,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  sessionCookieHeader,
  signSession,
  verifySession,
} from "../../../shared/status/session.ts";

const SECRET = "a".repeat(16) + "b".repeat(16) + "c".repeat(32);
const NOW = Date.parse("2026-12-01T08:00:00Z");
const USER = { login: "octocat", userId: 583231, token: "ghu_SecretUserToken0123456789" };

const b64url = (text: string) =>
  btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const fromB64url = (text: string) => atob(text.replace(/-/g, "+").replace(/_/g, "/"));

describe("session cookie", () => {
  it("opens to the user, the token and the expiry it was signed with", async () => {
    const { value, expiresMs } = await signSession(USER, SECRET, NOW);
    expect(expiresMs).toBe(NOW + SESSION_TTL_MS);
    expect(await verifySession(value, SECRET, NOW + 1000)).toEqual({
      ok: true,
      session: { ...USER, expiresMs },
    });
  });

  it("never carries the token readable", async () => {
    const { value } = await signSession(USER, SECRET, NOW);
    const payload = fromB64url(value.split(".")[0]!);
    expect(value).not.toContain(USER.token);
    expect(payload).not.toContain(USER.token);
    expect(JSON.parse(payload)).toMatchObject({
      login: "octocat",
      id: 583231,
      exp: NOW + SESSION_TTL_MS,
    });
  });

  it("refuses a tampered payload (another login, a later expiry) and a tampered signature", async () => {
    const { value } = await signSession(USER, SECRET, NOW);
    const [payload, mac] = value.split(".") as [string, string];
    const claims = JSON.parse(fromB64url(payload));
    for (const changed of [
      { ...claims, login: "mallory" },
      { ...claims, id: 1 },
      { ...claims, exp: claims.exp + 86_400_000 },
    ]) {
      expect(await verifySession(`${b64url(JSON.stringify(changed))}.${mac}`, SECRET, NOW)).toEqual(
        {
          ok: false,
          reason: "bad-signature",
        },
      );
    }
    const flipped = `${mac.slice(0, -2)}${mac.endsWith("AA") ? "BA" : "AA"}`;
    expect(await verifySession(`${payload}.${flipped}`, SECRET, NOW)).toEqual({
      ok: false,
      reason: "bad-signature",
    });
  });

  it("refuses a cookie signed with another secret", async () => {
    const { value } = await signSession(USER, "z".repeat(64), NOW);
    expect(await verifySession(value, SECRET, NOW)).toEqual({ ok: false, reason: "bad-signature" });
  });

  it("refuses an expired cookie, at its expiry and after", async () => {
    const { value, expiresMs } = await signSession(USER, SECRET, NOW, 60_000);
    expect((await verifySession(value, SECRET, expiresMs - 1)).ok).toBe(true);
    expect(await verifySession(value, SECRET, expiresMs)).toEqual({ ok: false, reason: "expired" });
    expect(await verifySession(value, SECRET, expiresMs + 3_600_000)).toEqual({
      ok: false,
      reason: "expired",
    });
  });

  it("refuses malformed values", async () => {
    for (const value of ["", "abc", "a.b.c", "!!!.???", `${b64url("{}")}.`]) {
      expect((await verifySession(value, SECRET, NOW)).ok).toBe(false);
    }
  });

  it("refuses a secret shorter than 32 characters", async () => {
    await expect(signSession(USER, "short", NOW)).rejects.toThrow(/at least 32/);
  });

  it("is HttpOnly, Secure and SameSite=Lax, and lives as long as the session", () => {
    const header = sessionCookieHeader("v.m", NOW + SESSION_TTL_MS, NOW);
    expect(header).toBe(
      `${SESSION_COOKIE}=v.m; Path=/; Max-Age=28800; HttpOnly; Secure; SameSite=Lax`,
    );
    expect(clearSessionCookieHeader()).toContain("Max-Age=0; HttpOnly; Secure; SameSite=Lax");
  });
});
