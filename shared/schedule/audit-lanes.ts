// The audit log's two lanes, each keeping its own latest AUDIT_LIMIT entries: `record` holds
// what must stay on record (fleet keys minted and revoked, fenced writes and their write
// records), `activity` everything else (claims, releases, webhooks, mirror and producer writes),
// which a busy fleet or a claim → release loop writes by the thousand and which would otherwise
// push the record out.

export type AuditLane = "record" | "activity";

/** Kinds (by prefix) of the `record` lane. */
const RECORD_PREFIXES = ["key-", "fenced-write", "write-record"] as const;

export function auditLane(kind: string): AuditLane {
  return RECORD_PREFIXES.some((p) => kind.startsWith(p)) ? "record" : "activity";
}

export const AUDIT_LANES: readonly AuditLane[] = ["record", "activity"];
