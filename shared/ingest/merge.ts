/**
 * The one merge rule for everything a repository stores: a fact stamped `incomingMs` replaces
 * the stored one only if it is not older. Webhooks arrive out of order and more than once;
 * with this rule a late, stale delivery never regresses state, and replaying is harmless.
 * Equal stamps take the later arrival (GitHub stamps to the second); reconciliation settles
 * whatever a same-second race leaves behind.
 */
export function supersedes(incomingMs: number, storedMs: number | null | undefined): boolean {
  return storedMs === null || storedMs === undefined || incomingMs >= storedMs;
}

/** Stored form of a reference: numbers as decimal text, cross-repo references as written. */
export function encodeRef(ref: number | string): string {
  return typeof ref === "number" ? String(ref) : ref;
}

export function decodeRef(text: string): number | string {
  return /^\d+$/.test(text) ? Number(text) : text;
}
