import { z } from "zod";
import type { WebhookPayload } from "../github/webhooks.ts";
import { type CheckRecord, CheckRecordSchema } from "./verdict.ts";

/**
 * What the breaker learns from a webhook (`check_run`, `check_suite`, `status`, `workflow_run`,
 * `push`) about the default branch, in GitHub-independent form; the reconcile's re-read
 * (shared/github/ci.ts) speaks the same facts, so one merge rule serves both.
 */
export const CiFactSchema = z.discriminatedUnion("type", [
  /** A check's report on a commit. */
  z.object({ type: z.literal("report"), sha: z.string().min(1), record: CheckRecordSchema }),
  /** The default branch moved to `sha` at `atMs` (GitHub's push time, or when it was read). */
  z.object({
    type: z.literal("head"),
    sha: z.string().min(1),
    before: z.string().nullable(),
    atMs: z.number(),
    defaultBranch: z.string().min(1),
  }),
  /** A check suite completed with `runs` runs: a re-read confirms its runs' reports. */
  z.object({
    type: z.literal("suite"),
    sha: z.string().min(1),
    runs: z.number().int().nonnegative(),
    conclusion: z.string().nullable(),
  }),
]);
export type CiFact = z.infer<typeof CiFactSchema>;

export type CiRouting =
  | { kind: "fact"; fact: CiFact; defaultBranch: string | null }
  | { kind: "skip"; reason: string };

const NOT_DEFAULT = "not the default branch (the breaker reads only the default branch's CI)";

/** GitHub's run statuses as the breaker reads them: completed, or not yet (queued or running). */
function status(value: string | null | undefined): CheckRecord["status"] {
  if (value === "completed") return "completed";
  return value === "queued" || value === "waiting" || value === "requested" || value === "pending"
    ? "queued"
    : "in_progress";
}

/** A check run (webhook or REST) as the breaker keeps it: its key is the App and the name. */
export function checkRunRecord(run: {
  id: number;
  name: string;
  status: string | null | undefined;
  conclusion?: string | null | undefined;
  html_url?: string | null | undefined;
  details_url?: string | null | undefined;
  app?: { id: number } | null | undefined;
}): CheckRecord {
  return {
    source: "check",
    key: `${run.app?.id ?? 0}:${run.name}`,
    name: run.name,
    runId: run.id,
    attempt: 1,
    status: status(run.status),
    conclusion: run.status === "completed" ? (run.conclusion ?? null) : null,
    url: run.html_url ?? run.details_url ?? null,
  };
}

/** A commit status (webhook or REST): its key is the context. */
export function statusRecord(s: {
  id: number;
  context: string;
  state: "error" | "failure" | "pending" | "success";
  target_url?: string | null | undefined;
}): CheckRecord {
  return {
    source: "status",
    key: s.context,
    name: s.context,
    runId: s.id,
    attempt: 1,
    status: s.state === "pending" ? "in_progress" : "completed",
    conclusion: s.state === "pending" ? null : s.state,
    url: s.target_url ?? null,
  };
}

/** A workflow run attempt (webhook or REST): its key is the workflow. */
export function workflowRunRecord(run: {
  id: number;
  name?: string | null | undefined;
  workflow_id: number;
  status?: string | null | undefined;
  conclusion?: string | null | undefined;
  html_url?: string | undefined;
  run_attempt?: number | undefined;
}): CheckRecord {
  return {
    source: "workflow",
    key: String(run.workflow_id),
    name: run.name ?? `workflow ${run.workflow_id}`,
    runId: run.id,
    attempt: run.run_attempt ?? 1,
    status: status(run.status),
    conclusion: run.status === "completed" ? (run.conclusion ?? null) : null,
    url: run.html_url ?? null,
  };
}

/** `check_run.created` / `completed`. */
export function checkRunFact(p: WebhookPayload<"check_run", "completed">): CiRouting {
  const run = p.check_run;
  const branch = run.check_suite.head_branch ?? null;
  const defaultBranch = p.repository.default_branch ?? null;
  if (defaultBranch !== null && branch !== defaultBranch)
    return { kind: "skip", reason: NOT_DEFAULT };
  const record = checkRunRecord(run);
  return { kind: "fact", fact: { type: "report", sha: run.head_sha, record }, defaultBranch };
}

/** `check_suite.completed`: a suite without runs says nothing (GitHub makes empty ones). */
export function checkSuiteFact(p: WebhookPayload<"check_suite", "completed">): CiRouting {
  const suite = p.check_suite;
  const defaultBranch = p.repository.default_branch ?? null;
  if (defaultBranch !== null && suite.head_branch !== defaultBranch)
    return { kind: "skip", reason: NOT_DEFAULT };
  const runs = suite.latest_check_runs_count ?? 0;
  if (runs === 0) return { kind: "skip", reason: "a check suite without check runs" };
  return {
    kind: "fact",
    fact: { type: "suite", sha: suite.head_sha, runs, conclusion: suite.conclusion ?? null },
    defaultBranch,
  };
}

/** `status`: a commit status counts when its commit is on the default branch. */
export function statusFact(p: WebhookPayload<"status", "">): CiRouting {
  const defaultBranch = p.repository.default_branch ?? null;
  if (defaultBranch !== null && !p.branches.some((b) => b.name === defaultBranch))
    return { kind: "skip", reason: NOT_DEFAULT };
  return {
    kind: "fact",
    fact: { type: "report", sha: p.sha, record: statusRecord(p) },
    defaultBranch,
  };
}

/** `workflow_run.requested` / `in_progress` / `completed`. */
export function workflowRunFact(p: WebhookPayload<"workflow_run", "completed">): CiRouting {
  const run = p.workflow_run;
  const defaultBranch = p.repository.default_branch ?? null;
  if (defaultBranch !== null && run.head_branch !== defaultBranch)
    return { kind: "skip", reason: NOT_DEFAULT };
  const record = workflowRunRecord(run);
  return { kind: "fact", fact: { type: "report", sha: run.head_sha, record }, defaultBranch };
}

/** A push to the default branch: its new head. */
export function pushFact(p: WebhookPayload<"push", "">, receivedMs: number): CiRouting {
  if (/^0+$/.test(p.after)) return { kind: "skip", reason: "the default branch was deleted" };
  const pushed = p.repository.pushed_at;
  const atMs =
    typeof pushed === "number"
      ? pushed * 1000
      : typeof pushed === "string" && !Number.isNaN(Date.parse(pushed))
        ? Date.parse(pushed)
        : receivedMs;
  const defaultBranch = p.repository.default_branch;
  return {
    kind: "fact",
    fact: { type: "head", sha: p.after, before: p.before ?? null, atMs, defaultBranch },
    defaultBranch,
  };
}
