// The status page's session cookie: who logged in through GitHub, until when, and the user's
// GitHub token so each repository's access is re-checked with GitHub as the API does. The
// payload is signed with HMAC-SHA-256; the token inside it is encrypted (AES-GCM), so the
// cookie never carries it readable. Both keys are derived (HKDF) from the SESSION_SECRET
// setting. Web Crypto only: runs on Workers, Node, Bun and Deno.
import { z } from "zod";

export const SESSION_COOKIE = "switchyard_session";
/** GitHub App user tokens live 8 hours; a session does not outlive its token. */
export const SESSION_TTL_MS = 8 * 60 * 60_000;
/** SESSION_SECRET must be at least this long (a random 32-byte hex string is 64). */
export const MIN_SECRET_LENGTH = 32;

export interface Session {
  login: string;
  userId: number;
  /** The user's GitHub token (only ever held in memory once the cookie is opened). */
  token: string;
  expiresMs: number;
}

const PayloadSchema = z.strictObject({
  v: z.literal(1),
  login: z.string().min(1).max(100),
  id: z.number().int().positive(),
  exp: z.number().int().positive(),
  /** base64url(iv ‖ AES-GCM(token)). */
  tok: z.string().min(1),
});

export type SessionRefusal = "malformed" | "bad-signature" | "expired" | "undecryptable";

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const bin = atob(
      text
        .replace(/-/g, "+")
        .replace(/_/g, "/")
        .padEnd(Math.ceil(text.length / 4) * 4, "="),
    );
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

interface Keys {
  sign: CryptoKey;
  seal: CryptoKey;
}

const keyCache = new Map<string, Promise<Keys>>();

/** The signing and sealing keys of a secret (derived once per isolate). */
function keysOf(secret: string): Promise<Keys> {
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new RangeError(`SESSION_SECRET must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  let keys = keyCache.get(secret);
  if (!keys) {
    keys = (async () => {
      const base = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, [
        "deriveKey",
      ]);
      const derive = (
        info: string,
        algorithm: Parameters<typeof crypto.subtle.deriveKey>[2],
        usages: Parameters<typeof crypto.subtle.deriveKey>[4],
      ) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode(info) },
          base,
          algorithm,
          false,
          usages,
        );
      return {
        sign: await derive(
          "switchyard session signature",
          { name: "HMAC", hash: "SHA-256", length: 256 },
          ["sign", "verify"],
        ),
        seal: await derive("switchyard session token", { name: "AES-GCM", length: 256 }, [
          "encrypt",
          "decrypt",
        ]),
      };
    })();
    keyCache.set(secret, keys);
  }
  return keys;
}

/** The cookie value: `base64url(payload JSON).base64url(HMAC-SHA-256 of the first part)`. */
export async function signSession(
  session: Omit<Session, "expiresMs">,
  secret: string,
  nowMs: number,
  ttlMs = SESSION_TTL_MS,
): Promise<{ value: string; expiresMs: number }> {
  const keys = await keysOf(secret);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv }, keys.seal, encoder.encode(session.token)),
  );
  const tok = new Uint8Array(iv.length + sealed.length);
  tok.set(iv);
  tok.set(sealed, iv.length);
  const expiresMs = nowMs + ttlMs;
  const payload = base64url(
    encoder.encode(
      JSON.stringify({
        v: 1,
        login: session.login,
        id: session.userId,
        exp: expiresMs,
        tok: base64url(tok),
      }),
    ),
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", keys.sign, encoder.encode(payload)));
  return { value: `${payload}.${base64url(mac)}`, expiresMs };
}

/**
 * The session a cookie value names, if its signature is the secret's and it has not expired;
 * otherwise why not. The signature is checked (in constant time, by `verify`) before anything
 * in the payload is read.
 */
export async function verifySession(
  value: string,
  secret: string,
  nowMs: number,
): Promise<{ ok: true; session: Session } | { ok: false; reason: SessionRefusal }> {
  const parts = value.split(".");
  if (parts.length !== 2) return { ok: false, reason: "malformed" };
  const [payload, mac] = parts as [string, string];
  const macBytes = fromBase64url(mac);
  const payloadBytes = fromBase64url(payload);
  if (!macBytes || !payloadBytes) return { ok: false, reason: "malformed" };
  const keys = await keysOf(secret);
  const valid = await crypto.subtle.verify("HMAC", keys.sign, macBytes, encoder.encode(payload));
  if (!valid) return { ok: false, reason: "bad-signature" };
  let parsed: z.infer<typeof PayloadSchema>;
  try {
    const checked = PayloadSchema.safeParse(JSON.parse(new TextDecoder().decode(payloadBytes)));
    if (!checked.success) return { ok: false, reason: "malformed" };
    parsed = checked.data;
  } catch {
    return { ok: false, reason: "malformed" };
  }
  if (parsed.exp <= nowMs) return { ok: false, reason: "expired" };
  const tok = fromBase64url(parsed.tok);
  if (!tok || tok.length <= 12) return { ok: false, reason: "malformed" };
  let token: string;
  try {
    token = new TextDecoder().decode(
      await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: tok.slice(0, 12) },
        keys.seal,
        tok.slice(12),
      ),
    );
  } catch {
    return { ok: false, reason: "undecryptable" };
  }
  return {
    ok: true,
    session: { login: parsed.login, userId: parsed.id, token, expiresMs: parsed.exp },
  };
}

/** `Set-Cookie` attributes of the session: never readable by scripts, never sent cross-site. */
export function sessionCookieHeader(value: string, expiresMs: number, nowMs: number): string {
  const maxAge = Math.max(0, Math.floor((expiresMs - nowMs) / 1000));
  return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; Secure; SameSite=Lax`;
}

/** Clears the session cookie (logout, or a cookie that no longer verifies). */
export function clearSessionCookieHeader(): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax`;
}
