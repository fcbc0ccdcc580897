// Owner keys (spec 6.4): fleet keys scoped to one installation's repositories, minted by an
// active organization owner. The shape names the scope: `syk_o<installationId>_<secret>`, so a
// repository key (`syk_<repoId>_...`) is never taken for one and the owner's object can refuse
// a key of another installation without a lookup. Only the key's SHA-256 is stored; the stored
// key's rules (revoked, expired, last use) are the repository keys' (shared/auth/keys.ts).
import type { z } from "zod";
import { sha256Hex } from "../auth/hash.ts";
import { KEY_SECRET_BYTES } from "../auth/keys.ts";
import { CreateKeyRequestSchema } from "../auth/schemas.ts";

export const OWNER_KEY_PREFIX = "syk_o";
const OWNER_KEY_PATTERN = /^syk_o([1-9][0-9]{0,15})_([A-Za-z0-9_-]{43})$/;

export function isOwnerKeyShape(token: string): boolean {
  return token.startsWith(OWNER_KEY_PREFIX);
}

/** The installation a well-formed owner key belongs to, or null. */
export function parseOwnerKey(token: string): { installationId: number } | null {
  const match = OWNER_KEY_PATTERN.exec(token);
  if (!match) return null;
  const installationId = Number(match[1]);
  return Number.isSafeInteger(installationId) ? { installationId } : null;
}

function base64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A new owner key for `installationId` and the hash to store; the key is shown once. */
export async function mintOwnerKey(
  installationId: number,
  random: (bytes: Uint8Array<ArrayBuffer>) => Uint8Array<ArrayBuffer> = (b) =>
    crypto.getRandomValues(b),
): Promise<{ key: string; hash: string }> {
  if (!Number.isSafeInteger(installationId) || installationId <= 0) {
    throw new RangeError("installationId must be > 0");
  }
  const secret = random(new Uint8Array(KEY_SECRET_BYTES));
  const key = `${OWNER_KEY_PREFIX}${installationId}_${base64Url(secret)}`;
  return { key, hash: await sha256Hex(key) };
}

/**
 * The same request as a repository key's (a name, and the same lifetime rule: `keyExpiresMs`),
 * under its own name in the OpenAPI description.
 */
export const CreateOwnerKeyRequestSchema = CreateKeyRequestSchema.meta({
  id: "CreateOwnerKeyRequest",
});
export type CreateOwnerKeyRequest = z.infer<typeof CreateOwnerKeyRequestSchema>;
