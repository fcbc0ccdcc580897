/** Milliseconds since the epoch of an ISO-8601 instant already validated by a schema. */
export function instantMs(iso: string): number {
  return Date.parse(iso);
}

/** ISO-8601 UTC, second precision when the instant has no milliseconds (as GitHub writes them). */
export function formatInstant(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith(".000Z") ? `${iso.slice(0, -5)}Z` : iso;
}
