import { createLocalJWKSet, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { jwksUrl, trimUrl, verifyActionsToken } from "../../../shared/auth/oidc.ts";

const ISSUER = "https://issuer.test/oidc";
const AUD = "https://switchyard.test";
const NOW = new Date("2026-12-01T10:00:00Z");
const nowSec = Math.floor(NOW.getTime() / 1000);

let issuerKey: CryptoKey;
let foreignKey: CryptoKey;
let keys: ReturnType<typeof createLocalJWKSet>;

beforeAll(async () => {
  const pair = await generateKeyPair("RS256");
  const foreign = await generateKeyPair("RS256");
  issuerKey = pair.privateKey;
  foreignKey = foreign.privateKey;
  keys = createLocalJWKSet({
    keys: [{ ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" }],
  });
});

async function token(
  claims: JWTPayload = {},
  opts: { key?: CryptoKey; kid?: string; iat?: number; exp?: number } = {},
) {
  return new SignJWT({
    sub: "repo:acme/rocket:ref:refs/heads/main",
    repository: "acme/rocket",
    repository_id: "123",
    iss: ISSUER,
    aud: AUD,
    ...claims,
  })
    .setProtectedHeader({ alg: "RS256", kid: opts.kid ?? "k1" })
    .setIssuedAt(opts.iat ?? nowSec)
    .setExpirationTime(opts.exp ?? nowSec + 300)
    .sign(opts.key ?? issuerKey);
}

const verify = (t: string, extra: { audience?: string; issuer?: string } = {}) =>
  verifyActionsToken(t, {
    issuer: extra.issuer ?? ISSUER,
    audience: extra.audience ?? AUD,
    keys,
    now: NOW,
  });

describe("verifyActionsToken", () => {
  it("accepts a token of the issuer for PUBLIC_URL and reads its repository id", async () => {
    expect(await verify(await token())).toEqual({
      ok: true,
      repoId: 123,
      repository: "acme/rocket",
      subject: "repo:acme/rocket:ref:refs/heads/main",
    });
    // PUBLIC_URL and issuer written with a trailing slash name the same thing.
    expect(
      await verify(await token(), { audience: `${AUD}/`, issuer: `${ISSUER}/` }),
    ).toMatchObject({
      ok: true,
    });
    expect(await verify(await token({ aud: `${AUD}/` }))).toMatchObject({ ok: true });
  });

  it("refuses another audience or issuer", async () => {
    const aud = await verify(await token({ aud: "https://elsewhere.test" }));
    expect(aud).toMatchObject({ ok: false, status: 401, message: /audience/ });
    const iss = await verify(await token({ iss: "https://evil.test" }));
    expect(iss).toMatchObject({ ok: false, status: 401, message: /issuer/ });
  });

  it("refuses an expired token (beyond a few seconds of skew) and one not yet valid", async () => {
    const expired = await verify(await token({}, { iat: nowSec - 400, exp: nowSec - 60 }));
    expect(expired).toMatchObject({ ok: false, status: 401, message: /expired/ });
    expect(await verify(await token({}, { iat: nowSec - 300, exp: nowSec - 2 }))).toMatchObject({
      ok: true,
    });
    expect(await verify(await token({ nbf: nowSec + 120 }))).toMatchObject({
      ok: false,
      status: 401,
    });
  });

  it("refuses a token signed by another key, or tampered with", async () => {
    const foreign = await verify(await token({}, { key: foreignKey, kid: "other" }));
    expect(foreign).toMatchObject({ ok: false, status: 401, message: /signed/ });
    const sameKid = await verify(await token({}, { key: foreignKey }));
    expect(sameKid).toMatchObject({ ok: false, status: 401, message: /signed/ });
    const [h, , s] = (await token()).split(".");
    const payload = (await token({ repository_id: "999" })).split(".")[1];
    expect(await verify(`${h}.${payload}.${s}`)).toMatchObject({ ok: false, status: 401 });
  });

  it("refuses symmetric or unsigned tokens", async () => {
    const hs = await new SignJWT({ repository_id: "123", sub: "x" })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(ISSUER)
      .setAudience(AUD)
      .setIssuedAt(nowSec)
      .setExpirationTime(nowSec + 60)
      .sign(new TextEncoder().encode("a shared secret of at least 32 bytes!"));
    expect(await verify(hs)).toMatchObject({ ok: false, status: 401 });
    const none = `${btoa(JSON.stringify({ alg: "none" }))}.${btoa(JSON.stringify({ repository_id: "123" }))}.`;
    expect(await verify(none)).toMatchObject({ ok: false, status: 401 });
  });

  it("requires repository_id as GitHub sends it (a string of digits) and sub", async () => {
    expect(await verify(await token({ repository_id: undefined }))).toMatchObject({
      ok: false,
      status: 401,
      message: /repository_id/,
    });
    expect(await verify(await token({ repository_id: "12a" }))).toMatchObject({ ok: false });
    expect(await verify(await token({ repository_id: 123 }))).toMatchObject({ ok: false });
    expect(await verify(await token({ sub: undefined }))).toMatchObject({ ok: false });
  });

  it("an unreachable key set is the issuer's outage (503), not a bad token", async () => {
    const t = await token();
    const unreachable = await verifyActionsToken(t, {
      issuer: ISSUER,
      audience: AUD,
      keys: async () => {
        throw new TypeError("fetch failed");
      },
      now: NOW,
    });
    expect(unreachable).toMatchObject({ ok: false, status: 503 });
  });

  it("URL helpers", () => {
    expect(trimUrl("https://x.test/oidc//")).toBe("https://x.test/oidc");
    expect(jwksUrl("https://token.actions.githubusercontent.com/")).toBe(
      "https://token.actions.githubusercontent.com/.well-known/jwks",
    );
  });
});
