import { z } from "zod";
import type { Config } from "../config/schema.ts";

/**
 * The circuit breaker's verdict (spec 6.4, config `breaker`), pure: is the default branch's head
 * commit red? Its state is the latest run of each check (per App and name), the latest status
 * per context and the latest run of each workflow; a red conclusion of a required one is red.
 * While a new head's checks are pending, the previous head's verdict stands for at most
 * `breaker.pendingMinutes`; after that, pending counts as not red.
 */

/** Where a check's state comes from: the Checks API, the Statuses API or GitHub Actions. */
export const CHECK_SOURCES = ["check", "status", "workflow"] as const;
export type CheckSource = (typeof CHECK_SOURCES)[number];

/** One report of a check on a commit: a check run, a commit status or a workflow run attempt. */
export const CheckRecordSchema = z.object({
  source: z.enum(CHECK_SOURCES),
  /** What "the same check" means: `<app id>:<name>` for check runs, the context, the workflow id. */
  key: z.string().min(1),
  /** What people call it (the check run's or workflow's name, the status context). */
  name: z.string(),
  /** GitHub's id of the run or status; a later report of the check has a larger one. */
  runId: z.number().int().nonnegative(),
  /** A workflow run's attempt (a re-run keeps the run's id); 1 otherwise. */
  attempt: z.number().int().positive(),
  status: z.enum(["queued", "in_progress", "completed"]),
  /** Set when completed: GitHub's conclusion, or a status's `success`/`failure`/`error`. */
  conclusion: z.string().nullable(),
  url: z.string().nullable(),
});
export type CheckRecord = z.infer<typeof CheckRecordSchema>;

/** Conclusions that make a check red; every other completed one is not. */
export const RED_CONCLUSIONS: ReadonlySet<string> = new Set([
  "failure",
  "timed_out",
  "startup_failure",
  "action_required",
  // a commit status's states
  "error",
]);

const STATUS_RANK = { queued: 0, in_progress: 1, completed: 2 } as const;

/**
 * Orders two reports of the same check: the later run (or attempt) wins; within one run the
 * status only moves forward, so a late `created` never undoes a `completed` (webhooks arrive in
 * any order, and a re-read may be older than a webhook).
 */
export function newerReport(a: CheckRecord, b: CheckRecord): CheckRecord {
  if (a.runId !== b.runId) return a.runId > b.runId ? a : b;
  if (a.attempt !== b.attempt) return a.attempt > b.attempt ? a : b;
  return STATUS_RANK[b.status] >= STATUS_RANK[a.status] ? b : a;
}

/** The latest report of each check among `records` (one commit's). */
export function latestPerCheck(records: readonly CheckRecord[]): CheckRecord[] {
  const latest = new Map<string, CheckRecord>();
  for (const r of records) {
    const id = `${r.source}\u0000${r.key}`;
    const before = latest.get(id);
    latest.set(id, before === undefined ? r : newerReport(before, r));
  }
  return [...latest.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export interface Failing {
  name: string;
  url: string | null;
}

/** One commit's own state: red (with what fails), pending (a required check runs) or green. */
export type CommitState =
  | { state: "red"; failing: Failing[] }
  | { state: "pending"; pending: string[] }
  | { state: "green" };

/**
 * A commit's state from its checks. Only required checks count (`breaker.checks`; absent: all);
 * a required check that never reported is absent, and absent checks never pause.
 */
export function commitState(
  records: readonly CheckRecord[],
  required: readonly string[] | null,
): CommitState {
  const wanted = required === null ? null : new Set(required.map((n) => n.toLowerCase()));
  const failing: Failing[] = [];
  const pending: string[] = [];
  for (const r of latestPerCheck(records)) {
    if (wanted !== null && !wanted.has(r.name.toLowerCase())) continue;
    if (r.status !== "completed") pending.push(r.name);
    else if (r.conclusion !== null && RED_CONCLUSIONS.has(r.conclusion)) {
      failing.push({ name: r.name, url: r.url });
    }
  }
  if (failing.length > 0) return { state: "red", failing };
  if (pending.length > 0) return { state: "pending", pending };
  return { state: "green" };
}

export interface BreakerInput {
  breaker: NonNullable<Config["breaker"]>;
  /** The default branch's head and when switchyard learned it became the head. */
  head: { sha: string; sinceMs: number } | null;
  headChecks: readonly CheckRecord[];
  /** The head before it (its verdict stands while the head's checks are pending). */
  previous: { sha: string } | null;
  previousChecks: readonly CheckRecord[];
  nowMs: number;
}

export type Verdict =
  /** Nothing known about the head yet. */
  | { state: "unknown" }
  | { state: "green"; sha: string }
  /** The head's required checks run; the previous head was not red (or the wait is over). */
  | { state: "pending"; sha: string; pending: string[] }
  /**
   * Red: `sha` is the commit whose checks fail: the head, or the previous head while the head's
   * checks are pending (`pendingHead`, until `untilMs`).
   */
  | {
      state: "red";
      sha: string;
      failing: Failing[];
      pendingHead?: string;
      untilMs?: number;
    };

/** The breaker's verdict now. */
export function breakerVerdict(input: BreakerInput): Verdict {
  const { head, breaker } = input;
  if (head === null) return { state: "unknown" };
  const own = commitState(input.headChecks, breaker.checks);
  if (own.state === "red") return { state: "red", sha: head.sha, failing: own.failing };
  if (own.state === "green") return { state: "green", sha: head.sha };
  const untilMs = head.sinceMs + breaker.pendingMinutes * 60_000;
  if (input.previous !== null && input.nowMs < untilMs) {
    const before = commitState(input.previousChecks, breaker.checks);
    if (before.state === "red") {
      return {
        state: "red",
        sha: input.previous.sha,
        failing: before.failing,
        pendingHead: head.sha,
        untilMs,
      };
    }
  }
  return { state: "pending", sha: head.sha, pending: own.pending };
}

/** When red began: kept while the verdict stays red, now when it turns red, null otherwise. */
export function redSince(before: number | null, verdict: Verdict, nowMs: number): number | null {
  if (verdict.state !== "red") return null;
  return before ?? nowMs;
}

/**
 * Which of two head reports is the head now: a push that moves on from the stored head
 * (`before`), else the later one (GitHub's `pushed_at`, whole seconds, or the time a re-read
 * asked GitHub). A late push of an older head loses to the one that replaced it.
 */
export function laterHead(
  stored: { sha: string; atMs: number } | null,
  incoming: { sha: string; atMs: number; before: string | null },
): boolean {
  if (stored === null) return true;
  if (incoming.sha === stored.sha) return false;
  if (incoming.before === stored.sha) return true;
  return incoming.atMs > stored.atMs;
}
