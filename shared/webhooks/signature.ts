const encoder = new TextEncoder();
/** Imported HMAC keys by secret: importing costs more than verifying a small body. */
const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey(
      "raw",
      encoder.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
    // One secret in practice (two while rotating); never let the map grow without bound.
    if (keys.size >= 4) keys.clear();
    keys.set(secret, key);
  }
  return key;
}
const SIGNATURE = /^sha256=([0-9a-f]{64})$/;

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++)
    bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/**
 * Verifies GitHub's `X-Hub-Signature-256` over the raw body bytes. Only the exact form GitHub
 * sends (`sha256=` + 64 lowercase hex) is accepted; anything else is false, never an exception.
 * WebCrypto's HMAC verify compares in constant time. This works on bytes rather than a decoded
 * string (as `@octokit/webhooks-methods` does), so a body that is not valid UTF-8 is still
 * checked exactly as signed.
 */
export async function verifySignature(
  secret: string,
  body: Uint8Array<ArrayBuffer>,
  header: string | null | undefined,
): Promise<boolean> {
  if (!secret || typeof header !== "string") return false;
  const match = SIGNATURE.exec(header);
  if (!match) return false;
  return crypto.subtle.verify("HMAC", await hmacKey(secret), hexToBytes(match[1]!), body);
}

/** The header value GitHub would send for `body` signed with `secret` (tests, the simulator). */
export async function signBody(
  secret: string,
  body: Uint8Array<ArrayBuffer> | string,
): Promise<string> {
  const key = await hmacKey(secret);
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, bytes));
  return `sha256=${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
