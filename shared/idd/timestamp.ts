/**
 * IDD timestamps: marker fields are second-precision UTC (`YYYY-MM-DDTHH:MM:SSZ`), and claim
 * resolution compares GitHub `createdAt` values truncated to the second. Built on the one time
 * module, shared/graph/time.ts.
 */
import { formatInstant, instantMs } from "../graph/time.ts";

const MARKER_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** True for a real calendar instant written exactly as `YYYY-MM-DDTHH:MM:SSZ` (upper-case T and Z). */
export function isMarkerTimestamp(value: string): boolean {
  if (!MARKER_TIMESTAMP.test(value)) return false;
  const ms = instantMs(value);
  // Date.parse rolls 2026-02-30 over to March; re-formatting catches every such impossible date.
  return !Number.isNaN(ms) && formatSecond(Math.floor(ms / 1000)) === value;
}

/** Whole seconds since the epoch of any ISO-8601 instant, truncated (never rounded). */
export function epochSecond(iso: string): number {
  const ms = instantMs(iso);
  if (Number.isNaN(ms)) throw new RangeError(`not an ISO-8601 timestamp: ${iso}`);
  return Math.floor(ms / 1000);
}

/** `YYYY-MM-DDTHH:MM:SSZ` for a whole number of seconds since the epoch. */
export function formatSecond(second: number): string {
  // A whole second has no milliseconds: formatInstant writes it to the second.
  return formatInstant(second * 1000);
}

/** An ISO-8601 instant truncated to the second, in marker form. */
export function truncateToSecond(iso: string): string {
  return formatSecond(epochSecond(iso));
}
