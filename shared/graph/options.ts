import { DEFAULT_CONFIG } from "../config/defaults.ts";
import type { Config } from "../config/schema.ts";
import type { IssueRef } from "./refs.ts";
import type { Snapshot } from "./snapshot.ts";
import { formatInstant, HOUR_MS, instantMs } from "./time.ts";

export interface ScanOptions {
  /** The instant to evaluate at; wins over the snapshot's `now`. */
  now?: string;
  /** Used when neither `now` nor the snapshot's `now` is given (the caller's clock). */
  clock?: string;
  /** Kick window length ending at `now`; defaults to `config.kicks.windowHours`. */
  windowHours?: number;
  /**
   * An explicit kick window `(from, to]`, e.g. from the Worker's producer watermark to now.
   * Wins over `windowHours`.
   */
  window?: { from: string; to: string };
  /**
   * Kicks for exactly these closed issues instead of the closes inside the window: the Worker
   * passes the closes it learned since its producer watermark, so a close that reached it late
   * (a lost webhook found by reconciliation) still kicks, and none kicks twice.
   */
  causes?: readonly IssueRef[];
  /** Rotates `ready` so machines sharing a queue start at different issues. */
  machine?: string;
  config?: Config;
  /**
   * Issues whose processing label switchyard itself put on for its own claims: that label is
   * not someone else's lock (the fleet API tracks those claims itself).
   */
  ownLocks?: ReadonlySet<number>;
}

export interface ResolvedScanOptions {
  nowMs: number;
  windowFromMs: number;
  windowToMs: number;
  causes: readonly IssueRef[] | undefined;
  machine: string | undefined;
  config: Config;
  ownLocks: ReadonlySet<number> | undefined;
}

export function resolveScanOptions(snapshot: Snapshot, options: ScanOptions): ResolvedScanOptions {
  const nowIso = options.now ?? snapshot.now ?? options.clock;
  if (nowIso === undefined) {
    throw new TypeError("scan needs `now`: pass options.now, a snapshot `now`, or options.clock");
  }
  const nowMs = instantMs(nowIso);
  if (Number.isNaN(nowMs)) throw new RangeError(`invalid now: ${nowIso}`);
  const config = options.config ?? DEFAULT_CONFIG;
  let windowFromMs: number;
  let windowToMs: number;
  if (options.window) {
    windowFromMs = instantMs(options.window.from);
    windowToMs = instantMs(options.window.to);
    if (Number.isNaN(windowFromMs) || Number.isNaN(windowToMs) || windowFromMs > windowToMs) {
      throw new RangeError(
        `invalid window: from ${options.window.from} must be an instant not after to ${options.window.to}`,
      );
    }
  } else {
    const hours = options.windowHours ?? config.kicks.windowHours;
    if (!Number.isFinite(hours) || hours < 0)
      throw new RangeError(`invalid window hours: ${hours}`);
    windowToMs = nowMs;
    windowFromMs = nowMs - hours * HOUR_MS;
  }
  return {
    nowMs,
    windowFromMs,
    windowToMs,
    causes: options.causes,
    machine: options.machine,
    config,
    ownLocks: options.ownLocks,
  };
}

export function windowOf(resolved: ResolvedScanOptions) {
  return { from: formatInstant(resolved.windowFromMs), to: formatInstant(resolved.windowToMs) };
}
