import { type Config, DEFAULT_CONFIG } from "../config/schema.ts";
import type { IssueFacts } from "../graph/analyze.ts";
import { renderBranchPattern } from "../idd/branch-name.ts";

/**
 * The fleet API's claim rules (spec 6.4), pure: who may claim an issue, whether a fence is
 * still the live one, how long a claim lives, and when failed attempts dead-letter an issue.
 */

/**
 * `preempted`: an IDD claim earlier than switchyard's mirrored marker holds the issue;
 * `mirror-failed`: never granted (its synchronous marker could not be posted).
 */
export type ClaimOutcome =
  | "done"
  | "abandoned"
  | "failed"
  | "expired"
  | "preempted"
  | "mirror-failed";

/** Why an issue cannot be claimed now (409 `reason`). */
export type DenyReason =
  | "held"
  | "closed"
  | "hold"
  | "epic"
  | "blocked"
  | "stuck"
  | "agent-limit"
  | "repo-limit"
  /** Queue policy (shared/claims/policy.ts): a label's live claims reached its limit. */
  | "label-limit"
  /** Queue policy: the circuit breaker is red and the issue is not repair work. */
  | "paused";

export interface Holder {
  agentId: string;
  source: "switchyard" | "idd";
  expiresAt: string;
}

/** A claim as the rules read it. */
export interface ClaimView {
  claimId: string;
  number: number;
  agentId: string;
  fence: number;
  expiresMs: number;
  endedMs: number | null;
}

export interface GrantInput {
  /** The issue's state, or undefined when switchyard does not know the issue. */
  state: "open" | "closed" | undefined;
  /** Graph facts of the open issue (with switchyard's own processing locks ignored). */
  facts: IssueFacts | undefined;
  /** Dead-lettered: attempts exhausted or the stuck label present. */
  stuck: boolean;
  /** The issue's live switchyard claim, if any. */
  live: { agentId: string; expiresAt: string } | null;
  /** A live, trusted IDD claim marker by someone else, if any. */
  idd: { agentId: string; staleAt: string } | null;
  /** Live claims held by the requesting agent, and in the whole repository. */
  agentLive: number;
  repoLive: number;
  limits: Pick<Config["claims"], "maxPerAgent" | "maxActive">;
}

export type GrantDecision =
  | { ok: true }
  | { ok: false; reason: "not-found" }
  | { ok: false; reason: DenyReason; holder?: Holder; message: string };

const deny = (reason: DenyReason, message: string, holder?: Holder): GrantDecision => ({
  ok: false,
  reason,
  message,
  ...(holder ? { holder } : {}),
});

/** May this agent claim this issue now? The first reason that applies wins. */
export function grantDecision(input: GrantInput): GrantDecision {
  if (input.state === undefined) return { ok: false, reason: "not-found" };
  if (input.state === "closed") return deny("closed", "the issue is closed");
  if (input.live) {
    return deny("held", `claimed by ${input.live.agentId}`, {
      agentId: input.live.agentId,
      source: "switchyard",
      expiresAt: input.live.expiresAt,
    });
  }
  if (input.idd) {
    return deny("held", `claimed by ${input.idd.agentId} through an IDD claimed-by marker`, {
      agentId: input.idd.agentId,
      source: "idd",
      expiresAt: input.idd.staleAt,
    });
  }
  const facts = input.facts;
  if (facts?.epicManaged) return deny("epic", "the issue is epic-managed");
  if (facts?.held) return deny("hold", "the issue carries the hold label");
  if (input.stuck || facts?.stuck) return deny("stuck", "the issue is stuck (dead-lettered)");
  if (facts && (facts.stance === "waiting" || facts.freshLock)) {
    return deny(
      "hold",
      facts.freshLock
        ? "another agent holds the processing label"
        : "the issue waits for human confirmation",
    );
  }
  if (facts && facts.openBlockers.length > 0) return deny("blocked", "the issue has open blockers");
  if (facts && facts.openChildren > 0) return deny("blocked", "the issue has open sub-issues");
  const { maxPerAgent, maxActive } = input.limits;
  if (maxPerAgent !== null && input.agentLive >= maxPerAgent) {
    return deny("agent-limit", `the agent already holds ${input.agentLive} live claims`);
  }
  if (maxActive !== null && input.repoLive >= maxActive) {
    return deny("repo-limit", `the repository already has ${input.repoLive} live claims`);
  }
  return { ok: true };
}

/** A claim is dead as soon as `now >= expiresAt`, whether or not the alarm has run. */
export function isLive(claim: Pick<ClaimView, "expiresMs" | "endedMs">, nowMs: number): boolean {
  return claim.endedMs === null && nowMs < claim.expiresMs;
}

/**
 * Does `{claimId, fence}` name the live claim of issue `number`? A stale, released, expired or
 * unknown fence is refused every time, and nothing changes.
 */
export function fenceIsCurrent(
  claim: ClaimView | undefined,
  request: { claimId: string; fence: number },
  number: number,
  nowMs: number,
): claim is ClaimView {
  return (
    claim !== undefined &&
    claim.claimId === request.claimId &&
    claim.fence === request.fence &&
    claim.number === number &&
    isLive(claim, nowMs)
  );
}

export const MIN_TTL_SECONDS = 60;
export const MAX_TTL_SECONDS = 86_400;

/** The claim's lifetime: the request's (60 s to 24 h) or `claims.ttlMinutes`. */
export function claimTtlMs(requestedSeconds: number | undefined, config: Config): number {
  const seconds = requestedSeconds ?? config.claims.ttlMinutes * 60;
  return Math.min(MAX_TTL_SECONDS, Math.max(MIN_TTL_SECONDS, seconds)) * 1000;
}

/**
 * The branch a claim works on, from `claims.branchPattern` (`{phase}` is 1: a claim is one
 * phase); a pattern the IDD rules refuse falls back to the default rather than failing a grant.
 */
export function claimBranch(config: Config, number: number, title: string): string {
  const pattern = config.claims.branchPattern;
  try {
    return renderBranchPattern({
      pattern,
      number,
      title,
      phase: pattern.includes("{phase}") ? 1 : null,
    });
  } catch {
    return renderBranchPattern({ pattern: DEFAULT_CONFIG.claims.branchPattern, number, title });
  }
}

/** The web address of GitHub for an API URL: api.github.com → github.com, GHE `/api/v3` → the host. */
export function htmlBaseFor(apiUrl: string): string {
  const url = new URL(apiUrl);
  if (url.hostname === "api.github.com") return "https://github.com";
  const path = url.pathname.replace(/\/+$/, "").replace(/\/api\/v3$/, "");
  return `${url.origin}${path}`;
}

/**
 * Was the stuck label taken off by a person after switchyard put it on? Either GitHub recorded
 * an `unlabeled` event for it after switchyard's write, or the stored issue (without the label)
 * is a state GitHub reported well after that write. The margin keeps switchyard's own writes of
 * the same moment (webhooks of the ready and processing labels it removed, which still list the
 * issue without the stuck label and carry a timestamp of the same second) from counting.
 */
export const STUCK_ECHO_MARGIN_MS = 10_000;

export function stuckLabelRemovedByHand(input: {
  labels: readonly string[];
  stuckLabel: string;
  /** When switchyard's write of the stuck label succeeded. */
  labeledMs: number;
  /** The stored issue state's time (GitHub's `updated_at`). */
  updatedMs: number;
  /** The latest recorded `unlabeled` event for the stuck label, if any. */
  unlabeledMs: number | null;
}): boolean {
  if (input.labels.includes(input.stuckLabel)) return false;
  // GitHub's event times have whole seconds; switchyard never takes the stuck label off itself.
  const labeledSecondMs = Math.floor(input.labeledMs / 1000) * 1000;
  if (input.unlabeledMs !== null && input.unlabeledMs >= labeledSecondMs) return true;
  return input.updatedMs > input.labeledMs + STUCK_ECHO_MARGIN_MS;
}

/**
 * Outcomes that count towards `claims.maxAttempts`: every end but `done` and `preempted` (the
 * agent did not fail: another protocol's holder came first).
 */
export function countsAsAttempt(outcome: ClaimOutcome): boolean {
  return outcome !== "done" && outcome !== "preempted" && outcome !== "mirror-failed";
}

export function isStuckAfter(attempts: number, config: Config): boolean {
  return attempts >= config.claims.maxAttempts;
}

/** An opaque claim-id that is one IDD marker token: `sy-` and 20 hex digits of randomness. */
export function claimIdFrom(random: Uint8Array): string {
  return `sy-${[...random.subarray(0, 10)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * The processing label must be renewed before sweep agents see it as stale: at 80% of the
 * lock TTL after it was last put on.
 */
export function processingRenewalDueMs(labeledMs: number, config: Config): number {
  return labeledMs + Math.floor(config.locks.processingTtlMinutes * 60_000 * 0.8);
}

export interface Attempt {
  agentId: string;
  outcome: ClaimOutcome;
  note: string | null;
  at: string;
}

/** The one comment a stuck issue gets: what was tried, by whom, and how to put it back. */
export function stuckComment(attempts: readonly Attempt[], stuckLabel: string): string {
  const rows = attempts.map(
    (a) =>
      `| ${a.at} | \`${a.agentId}\` | ${a.outcome} | ${(a.note ?? "")
        .replace(/[|\s]+/g, " ")
        .trim()
        .slice(0, 200)} |`,
  );
  return [
    `switchyard took this issue out of the agent queue after ${attempts.length} claims ended without \`done\`:`,
    "",
    "| when | agent | outcome | note |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
    `Remove the \`${stuckLabel}\` label to reset the attempts and return it to the queue.`,
  ].join("\n");
}
