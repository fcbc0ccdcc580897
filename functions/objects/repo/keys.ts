import type { KeyVerdict } from "../../../shared/auth/keys.ts";
import type { KeySummary } from "../../../shared/auth/schemas.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import type { RepoContext } from "./context.ts";
import type { NewKey } from "./keys-store.ts";

/** Who created or revoked a key, for the audit log: a login and the kind of its token. */
export interface KeyActor {
  by: string | null;
  tokenKind: string | null;
}

// The repository's fleet keys (spec 6.4). Only hashes reach this object: the route mints a
// key, shows it once and passes its SHA-256; `fleet_keys` is read and written by keys-store.ts
// alone, and the rules about keys are shared/auth/keys.ts.

export function createKey(c: RepoContext, key: NewKey): KeySummary {
  return c.store.transaction(() => {
    const created = c.store.keys.create(key);
    c.store.audit(
      "key-created",
      {
        id: key.id,
        name: key.name,
        by: key.createdBy,
        tokenKind: key.tokenKind ?? null,
        expiresAt: key.expiresMs === null ? null : formatInstant(key.expiresMs),
      },
      key.createdMs,
    );
    return created;
  });
}

export function listKeys(c: RepoContext): KeySummary[] {
  return c.store.keys.list();
}

/** False for an unknown id; revoking twice keeps the first revocation. */
export function revokeKey(
  c: RepoContext,
  id: string,
  nowMs: number,
  who: KeyActor = { by: null, tokenKind: null },
): boolean {
  return c.store.transaction(() => {
    const revoked = c.store.keys.revoke(id, nowMs);
    if (revoked) c.store.audit("key-revoked", { id, by: who.by, tokenKind: who.tokenKind }, nowMs);
    return revoked;
  });
}

/** The key whose SHA-256 is `hash`, if valid at `nowMs` (its use recorded once a minute). */
export function verifyKey(c: RepoContext, hash: string, nowMs: number): KeyVerdict {
  return c.store.keys.verify(hash, nowMs);
}
