/*
 * Time: the one module for instants and durations. Instants are ISO-8601 text (as GitHub writes
 * them) or milliseconds since the epoch. shared/idd/timestamp.ts builds the IDD marker forms
 * (whole seconds) on these.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** Milliseconds since the epoch of an ISO-8601 instant already validated by a schema. */
export function instantMs(iso: string): number {
  return Date.parse(iso);
}

/** ISO-8601 UTC, second precision when the instant has no milliseconds (as GitHub writes them). */
export function formatInstant(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith(".000Z") ? `${iso.slice(0, -5)}Z` : iso;
}
