// Owner keys (spec 6.4): fleet keys scoped to one installation's repositories, minted by an
// active organization owner. The shape names the scope: `syk_o<installationId>_<secret>`, so a
// repository key (`syk_<repoId>_...`) is never taken for one and the owner's object can refuse
// a key of another installation without a lookup. Only the key's SHA-256 is stored; the stored
// key's rules (revoked, expired, last use) are the repository keys' (shared/auth/keys.ts).
import { z } from "zod";
import { sha256Hex } from "../auth/hash.ts";
import { KEY_SECRET_BYTES } from "../auth/keys.ts";
import { DAY_MS } from "../graph/time.ts";

export const OWNER_KEY_PREFIX = "syk_o";
const OWNER_KEY_PATTERN = /^syk_o([1-9][0-9]{0,15})_([A-Za-z0-9_-]{43})$/;

/** Owner keys expire: 90 days unless asked otherwise, at most 365. */
export const OWNER_KEY_DEFAULT_DAYS = 90;
export const OWNER_KEY_MAX_DAYS = 365;

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

export function ownerKeyExpiresMs(createdMs: number, expiresInDays: number): number {
  return createdMs + expiresInDays * DAY_MS;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are refused
const PRINTABLE = /^[^\u0000-\u001f\u007f]*$/;

export const CreateOwnerKeyRequestSchema = z
  .strictObject({
    name: z
      .string()
      .min(1, "name must be 1 to 100 characters")
      .max(100, "name must be 1 to 100 characters")
      .regex(PRINTABLE, "name must not contain control characters")
      .refine((s) => s.trim() !== "", "name must not be blank"),
    expiresInDays: z
      .number()
      .int("expiresInDays must be a whole number")
      .min(1, `expiresInDays must be 1 to ${OWNER_KEY_MAX_DAYS}`)
      .max(OWNER_KEY_MAX_DAYS, `expiresInDays must be 1 to ${OWNER_KEY_MAX_DAYS}`)
      .default(OWNER_KEY_DEFAULT_DAYS),
  })
  .meta({ id: "CreateOwnerKeyRequest" });
export type CreateOwnerKeyRequest = z.infer<typeof CreateOwnerKeyRequestSchema>;
