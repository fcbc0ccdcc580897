// The `Authorization` header and the three kinds of bearer token the fleet API accepts (spec
// 6.4). Pure and Web-standard: no token is ever stored or logged, only its SHA-256.
import { KEY_PREFIX } from "./keys.ts";

/** RFC 6750 `b64token`, bounded: GitHub's ID tokens are about 1.5 KB, user tokens under 100 B. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
export const MAX_TOKEN_LENGTH = 8_192;

export type BearerParse = { ok: true; token: string } | { ok: false; message: string };

/**
 * `Authorization: Bearer <token>` (the scheme is case-insensitive, one space or more, nothing
 * after the token). The message never repeats the header's value.
 */
export function parseAuthorization(header: string | null | undefined): BearerParse {
  if (header === null || header === undefined || header.trim() === "") {
    return {
      ok: false,
      message: "missing Authorization header: send Authorization: Bearer <token>",
    };
  }
  const match = /^([A-Za-z]+) +(\S+)$/.exec(header.trim());
  if (!match || match[1]!.toLowerCase() !== "bearer") {
    return { ok: false, message: "malformed Authorization header: expected Bearer <token>" };
  }
  const token = match[2]!;
  if (token.length > MAX_TOKEN_LENGTH || !B64TOKEN.test(token)) {
    return { ok: false, message: "malformed bearer token" };
  }
  return { ok: true, token };
}

export type TokenKind = "key" | "oidc" | "user";

/**
 * A fleet key starts with `syk_`; a JWT (three base64url segments) is a GitHub Actions OIDC
 * token; anything else is taken for a GitHub user token and checked with GitHub.
 */
export function tokenKind(token: string): TokenKind {
  if (token.startsWith(KEY_PREFIX)) return "key";
  if (/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) return "oidc";
  return "user";
}
