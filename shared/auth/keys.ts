// Fleet keys (spec 6.4): the format, minting, parsing and every decision about a stored key.
// A key is `syk_<repoId>_<secret>`: the repository it belongs to is readable without a lookup
// (a key of another repository is refused at once), the secret is 32 random bytes in
// base64url. Only the key's SHA-256 is ever stored.
import { DAY_MS, formatInstant } from "../graph/time.ts";
import { sha256Hex } from "./hash.ts";
import type { KeySummary } from "./schemas.ts";

export const KEY_PREFIX = "syk_";
export const KEY_SECRET_BYTES = 32;
/** `last_used` is written at most once per this interval per key. */
export const KEY_USE_RESOLUTION_MS = 60_000;

const KEY_PATTERN = /^syk_([1-9][0-9]{0,15})_([A-Za-z0-9_-]{43})$/;

function base64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The repository a well-formed key belongs to, or null for anything that is not a key. */
export function parseKey(token: string): { repoId: number } | null {
  const match = KEY_PATTERN.exec(token);
  if (!match) return null;
  const repoId = Number(match[1]);
  return Number.isSafeInteger(repoId) ? { repoId } : null;
}

export function formatKey(repoId: number, secret: Uint8Array): string {
  if (!Number.isSafeInteger(repoId) || repoId <= 0) throw new RangeError("repoId must be > 0");
  if (secret.length !== KEY_SECRET_BYTES)
    throw new RangeError(`a key secret is ${KEY_SECRET_BYTES} bytes`);
  return `${KEY_PREFIX}${repoId}_${base64Url(secret)}`;
}

/** A new key for `repoId` and the hash to store; the key itself is shown once and forgotten. */
export async function mintKey(
  repoId: number,
  random: (bytes: Uint8Array<ArrayBuffer>) => Uint8Array<ArrayBuffer> = (b) =>
    crypto.getRandomValues(b),
): Promise<{ key: string; hash: string }> {
  const key = formatKey(repoId, random(new Uint8Array(KEY_SECRET_BYTES)));
  return { key, hash: await sha256Hex(key) };
}

/** Every key expires: after 90 days unless the request asks otherwise, after 365 at most. */
export const DEFAULT_KEY_LIFETIME_DAYS = 90;
export const MAX_KEY_LIFETIME_DAYS = 365;

/** When a key made at `createdMs` expires. */
export function keyExpiresMs(
  createdMs: number,
  expiresInDays: number = DEFAULT_KEY_LIFETIME_DAYS,
): number {
  return createdMs + expiresInDays * DAY_MS;
}

/**
 * Keys minted before keys expired have no expiry: the migration gives each one the default
 * lifetime from the moment it runs (not from its creation, which could end it at once).
 */
export function migratedKeyExpiresMs(migratedMs: number): number {
  return keyExpiresMs(migratedMs);
}

/** A stored key as the store reads it (times in epoch milliseconds). */
export interface StoredKey {
  id: string;
  name: string;
  createdBy: string | null;
  createdMs: number;
  lastUsedMs: number | null;
  expiresMs: number | null;
  revokedMs: number | null;
}

export type KeyState = "active" | "expired" | "revoked";

/** Revoked wins over expired; a key is expired from the instant `expiresMs` is reached. */
export function keyState(key: Pick<StoredKey, "expiresMs" | "revokedMs">, nowMs: number): KeyState {
  if (key.revokedMs !== null && key.revokedMs <= nowMs) return "revoked";
  if (key.expiresMs !== null && nowMs >= key.expiresMs) return "expired";
  return "active";
}

export type KeyVerdict =
  | { ok: true; id: string; name: string }
  | { ok: false; reason: "unknown" | "expired" | "revoked" };

/** Whether the key found by its hash (or none) lets its bearer in at `nowMs`. */
export function keyVerdict(key: StoredKey | null, nowMs: number): KeyVerdict {
  if (!key) return { ok: false, reason: "unknown" };
  const state = keyState(key, nowMs);
  return state === "active"
    ? { ok: true, id: key.id, name: key.name }
    : { ok: false, reason: state };
}

/** Coalesces `last_used` writes: at most one per key per minute. */
export function shouldRecordUse(lastUsedMs: number | null, nowMs: number): boolean {
  return lastUsedMs === null || nowMs - lastUsedMs >= KEY_USE_RESOLUTION_MS;
}

const instant = (ms: number | null) => (ms === null ? null : formatInstant(ms));

export function keySummary(key: StoredKey): KeySummary {
  return {
    id: key.id,
    name: key.name,
    createdAt: formatInstant(key.createdMs),
    lastUsedAt: instant(key.lastUsedMs),
    expiresAt: instant(key.expiresMs),
    revokedAt: instant(key.revokedMs),
  };
}

// --- a key request in one Durable Object call (issue 21 item 5) ------------------------------

/** What the Worker believed of the requested repository when it routed a key's call. */
export interface KeyCallExpectation {
  /** The requested `owner/name`. */
  fullName: string;
  /** The installation the Worker's (short-lived, in-memory) name entry names. */
  installationId: number;
}

/** The repository object's own identity, as it knows it. */
export interface KeyCallIdentity {
  fullName: string;
  installationId: number;
  status: "active" | "suspended" | "removed";
}

export type KeyCallVerdict =
  | { ok: true; id: string }
  | { ok: false; status: 401 | 403 | 503; message: string };

/**
 * A fleet key's request decided inside its repository's object, so a key request costs one
 * Durable Object call: the key first (a forged key learns nothing), then whether the requested
 * name is still this repository's (renamed away: 403, as a key of another repository), then
 * whether the Worker's remembered installation is still its own (moved: 503, ask again; the
 * Worker forgets the entry and looks the name up anew).
 */
export function keyCallVerdict(
  key: KeyVerdict,
  identity: KeyCallIdentity | null,
  expected: KeyCallExpectation,
): KeyCallVerdict {
  if (!key.ok) return { ok: false, status: 401, message: `${key.reason} fleet key` };
  if (identity === null || identity.status === "removed") {
    return { ok: false, status: 401, message: "unknown fleet key" };
  }
  if (identity.fullName.toLowerCase() !== expected.fullName.toLowerCase()) {
    return {
      ok: false,
      status: 403,
      message: `the key belongs to another repository than ${expected.fullName}`,
    };
  }
  if (identity.installationId !== expected.installationId) {
    return {
      ok: false,
      status: 503,
      message: `${expected.fullName} moved to another installation just now; try again`,
    };
  }
  return { ok: true, id: key.id };
}
