// The status page's few figures, from the claims that ended recently. Pure.
import { DAY_MS, formatInstant } from "../graph/time.ts";

export interface EndedClaim {
  grantedMs: number;
  endedMs: number;
  outcome: string;
}

export interface Figures {
  /** Issues in the queue now (claimable by some agent). */
  queueLength: number;
  liveClaims: number;
  /** `done` releases per UTC day, the last `days` days (oldest first; today last). */
  donePerDay: Array<{ day: string; done: number }>;
  /** Mean of `donePerDay`. */
  doneDailyMean: number;
  /** Median time from grant to end of the claims that ended in the window (null: none ended). */
  medianClaimMs: number | null;
}

/** Figures over the last `days` UTC days, today included. */
export function figuresOf(
  input: { queueLength: number; liveClaims: number; ended: readonly EndedClaim[] },
  nowMs: number,
  days = 7,
): Figures {
  const today = Math.floor(nowMs / DAY_MS);
  const first = today - days + 1;
  const done = new Array<number>(days).fill(0);
  const durations: number[] = [];
  for (const c of input.ended) {
    const day = Math.floor(c.endedMs / DAY_MS);
    if (day < first || day > today) continue;
    durations.push(Math.max(0, c.endedMs - c.grantedMs));
    if (c.outcome === "done") done[day - first]! += 1;
  }
  durations.sort((a, b) => a - b);
  const mid = durations.length >> 1;
  const median =
    durations.length === 0
      ? null
      : durations.length % 2 === 1
        ? durations[mid]!
        : Math.round((durations[mid - 1]! + durations[mid]!) / 2);
  return {
    queueLength: input.queueLength,
    liveClaims: input.liveClaims,
    donePerDay: done.map((n, i) => ({
      day: formatInstant((first + i) * DAY_MS).slice(0, 10),
      done: n,
    })),
    doneDailyMean: Math.round((done.reduce((a, b) => a + b, 0) / days) * 10) / 10,
    medianClaimMs: median,
  };
}

/** `3 h 12 min`, `4 min 5 s`, `12 s`: a duration as a person reads it. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m} min` : `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}
