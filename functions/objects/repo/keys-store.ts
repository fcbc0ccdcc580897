// The repository's fleet keys in the RepoObject's SQLite (`fleet_keys`, migration step 3): the
// only code that reads or writes that table. Keys are stored as their SHA-256, never in clear;
// every decision about them is in shared/auth/keys.ts.
import {
  type KeyVerdict,
  keySummary,
  keyVerdict,
  type StoredKey,
  shouldRecordUse,
} from "../../../shared/auth/keys.ts";
import type { KeySummary } from "../../../shared/auth/schemas.ts";
import type { Sql } from "../sql.ts";

/** A key's row as stored (the owner's `owner_keys` adds its installation id). */
export type KeyRow = {
  id: string;
  name: string;
  created_by: string | null;
  created_ms: number;
  last_used_ms: number | null;
  expires_ms: number | null;
  revoked_ms: number | null;
};

export const stored = (r: KeyRow): StoredKey => ({
  id: r.id,
  name: r.name,
  createdBy: r.created_by,
  createdMs: r.created_ms,
  lastUsedMs: r.last_used_ms,
  expiresMs: r.expires_ms,
  revokedMs: r.revoked_ms,
});

export interface NewKey {
  id: string;
  name: string;
  /** SHA-256 (hex) of the whole key. */
  hash: string;
  createdBy: string | null;
  /** The kind of token that minted it (`ghp_`, `ghu_`, ...): audited, not stored with the key. */
  tokenKind?: string | null;
  createdMs: number;
  expiresMs: number | null;
}

export class KeysStore {
  private readonly sql: Sql;

  /** Expects the schema migrated (RepoStore's constructor runs the migrations). */
  constructor(sql: Sql) {
    this.sql = sql;
  }

  create(key: NewKey): KeySummary {
    this.sql`INSERT INTO fleet_keys (id, name, hash, created_by, created_ms, expires_ms)
      VALUES (${key.id}, ${key.name}, ${key.hash}, ${key.createdBy}, ${key.createdMs}, ${key.expiresMs})`;
    return keySummary({
      id: key.id,
      name: key.name,
      createdBy: key.createdBy,
      createdMs: key.createdMs,
      lastUsedMs: null,
      expiresMs: key.expiresMs,
      revokedMs: null,
    });
  }

  /** Every key, revoked and expired ones included, oldest first; never a hash. */
  list(): KeySummary[] {
    return this
      .sql<KeyRow>`SELECT id, name, created_by, created_ms, last_used_ms, expires_ms, revoked_ms
      FROM fleet_keys ORDER BY created_ms, id`.map((r) => keySummary(stored(r)));
  }

  /** Revokes a key (revoking it again keeps the first time); false for an unknown id. */
  revoke(id: string, nowMs: number): boolean {
    const rows = this.sql<{ id: string }>`SELECT id FROM fleet_keys WHERE id = ${id}`;
    if (rows.length === 0) return false;
    this.sql`UPDATE fleet_keys SET revoked_ms = ${nowMs} WHERE id = ${id} AND revoked_ms IS NULL`;
    return true;
  }

  /** The key with this hash, if it is valid now; records its use at most once a minute. */
  verify(hash: string, nowMs: number): KeyVerdict {
    const row = this
      .sql<KeyRow>`SELECT id, name, created_by, created_ms, last_used_ms, expires_ms, revoked_ms
      FROM fleet_keys WHERE hash = ${hash}`[0];
    const key = row ? stored(row) : null;
    const verdict = keyVerdict(key, nowMs);
    if (verdict.ok && key && shouldRecordUse(key.lastUsedMs, nowMs)) {
      this.sql`UPDATE fleet_keys SET last_used_ms = ${nowMs} WHERE id = ${key.id}`;
    }
    return verdict;
  }

  /** Keys revoked or expired before `cutoffMs` (FLEET_KEY_RETENTION_MS ago) are forgotten. */
  prune(cutoffMs: number): void {
    this.sql`DELETE FROM fleet_keys WHERE (revoked_ms IS NOT NULL AND revoked_ms < ${cutoffMs})
      OR (expires_ms IS NOT NULL AND expires_ms < ${cutoffMs})`;
  }

  /** An uninstall forgets the repository's keys with the rest of its data. */
  wipe(): void {
    this.sql`DELETE FROM fleet_keys`;
  }
}
