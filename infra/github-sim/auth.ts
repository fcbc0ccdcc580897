// Who is calling: a GitHub App (RS256 JWT verified against the configured public key), the
// App's OAuth client (Basic auth with its client id and secret), an installation (tokens the
// simulator minted), or a user token (registered through `POST /_sim/users`, or listed in
// `userTokens`, which stand for the unrestricted user `octocat`). Any other token is refused
// with 401 "Bad credentials", as GitHub refuses it.
import type { TokenKind } from "./model.ts";
import { SimHttpError } from "./state.ts";

export type Identity =
  | { kind: "app" }
  /** `POST /applications/{client_id}/token`: Basic auth with the App's client credentials. */
  | { kind: "client"; clientId: string }
  | { kind: "installation"; installationId: number; token: string }
  | {
      kind: "user";
      login: string;
      token: string;
      /** A user of `POST /_sim/users`, limited to the repositories it has a role on. */
      registered: boolean;
      tokenKind: TokenKind;
      /** Scopes of a classic or OAuth token (sent as `X-OAuth-Scopes`); `[]` for other kinds. */
      scopes: string[];
      /** A `ghu_` token's App (null: the simulated App). */
      clientId: string | null;
    };

/** GitHub's answer to a token it does not know (or no longer knows). */
export function badCredentials(): SimHttpError {
  return new SimHttpError(401, "Bad credentials");
}

/** `Basic base64(id:secret)` → `{id, secret}`, or null for anything else. */
export function parseBasicAuth(header: string): { id: string; secret: string } | null {
  const m = /^basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  if (!m) return null;
  let decoded: string;
  try {
    decoded = atob(m[1]!);
  } catch {
    return null;
  }
  const colon = decoded.indexOf(":");
  return colon < 0 ? null : { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

function base64UrlDecode(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text
    .replace(/-/g, "+")
    .replace(/_/g, "/")
    .padEnd(Math.ceil(text.length / 4) * 4, "=");
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function pemBody(pem: string, label: string): Uint8Array<ArrayBuffer> {
  const m = new RegExp(`-----BEGIN ${label}-----([\\s\\S]+?)-----END ${label}-----`).exec(pem);
  if (!m) throw new Error(`expected a PEM "${label}" block`);
  return base64UrlDecode(m[1]!.replace(/\s+/g, "").replace(/\+/g, "-").replace(/\//g, "_"));
}

export async function importAppPublicKey(pem: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "spki",
    pemBody(pem, "PUBLIC KEY"),
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    false,
    ["verify"],
  );
}

/** Verifies an App JWT the way GitHub does: RS256 signature, issuer = App id, live window. */
export async function verifyAppJwt(
  jwt: string,
  key: CryptoKey | null,
  appId: number,
  clientId: string,
  now: Date,
): Promise<void> {
  const fail = (why: string) =>
    new SimHttpError(401, `A JSON web token could not be decoded: ${why}`);
  if (!key) throw fail("the simulator has no App public key configured");
  const parts = jwt.split(".");
  if (parts.length !== 3) throw fail("not a JWT");
  let header: { alg?: string };
  let claims: { iss?: unknown; iat?: unknown; exp?: unknown };
  try {
    header = JSON.parse(new TextDecoder().decode(base64UrlDecode(parts[0]!)));
    claims = JSON.parse(new TextDecoder().decode(base64UrlDecode(parts[1]!)));
  } catch {
    throw fail("malformed JWT");
  }
  if (header.alg !== "RS256") throw fail(`unsupported alg ${String(header.alg)}`);
  const ok = await crypto.subtle.verify(
    "RSASSA-PKCS1-v1_5",
    key,
    base64UrlDecode(parts[2]!),
    new TextEncoder().encode(`${parts[0]}.${parts[1]}`),
  );
  if (!ok) throw fail("signature does not match the App's public key");
  if (String(claims.iss) !== String(appId) && claims.iss !== clientId)
    throw fail(`'Issuer' claim ('iss') must be the App id ${appId}`);
  const nowSec = Math.floor(now.getTime() / 1000);
  if (typeof claims.exp !== "number" || claims.exp <= nowSec)
    throw new SimHttpError(
      401,
      "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
    );
  if (typeof claims.iat !== "number" || claims.iat > nowSec + 60)
    throw new SimHttpError(
      401,
      "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
    );
  if (claims.exp - claims.iat > 600)
    throw new SimHttpError(401, "'Expiration time' claim ('exp') is too far in the future");
}

interface IssuedToken {
  installationId: number;
  expiresAt: number;
}

/** Installation tokens the simulator minted, valid for one hour of simulator time. */
export class TokenRegistry {
  private tokens = new Map<string, IssuedToken>();
  issued = 0;

  mint(installationId: number, now: Date): { token: string; expiresAt: Date } {
    const bytes = crypto.getRandomValues(new Uint8Array(18));
    const token = `ghs_${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
    const expiresAt = new Date(now.getTime() + 3600_000);
    this.tokens.set(token, { installationId, expiresAt: expiresAt.getTime() });
    this.issued += 1;
    return { token, expiresAt };
  }

  lookup(token: string, now: Date): IssuedToken | "expired" | undefined {
    const t = this.tokens.get(token);
    if (!t) return undefined;
    return t.expiresAt <= now.getTime() ? "expired" : t;
  }

  revokeInstallation(installationId: number): void {
    for (const [token, t] of this.tokens)
      if (t.installationId === installationId) this.tokens.delete(token);
  }

  reset(): void {
    this.tokens.clear();
    this.issued = 0;
  }
}
