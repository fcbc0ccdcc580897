import type { Config } from "../config/schema.ts";

/**
 * The queue policy's grant rules (spec 6.4, issue 24), pure: per-label concurrency limits
 * (`claims.maxActiveByLabel`) and the circuit breaker's pause. They apply after the issue's own
 * rules (shared/claims/rules.ts `grantDecision`) allowed the grant; the queue filters by the same
 * functions, so claim-next skips what a direct claim would be refused.
 */

/** What a claim is for: ordinary work, or answering people (replies, once they exist). */
export type ClaimKind = "work" | "reply";

/** `claims.maxActiveByLabel` keyed by lower-cased label (GitHub compares names so). */
export type LabelLimits = ReadonlyMap<string, { label: string; limit: number }>;

export function labelLimits(claims: Config["claims"]): LabelLimits {
  return new Map(
    Object.entries(claims.maxActiveByLabel).map(
      ([label, limit]) => [label.toLowerCase(), { label, limit }] as const,
    ),
  );
}

/**
 * Live switchyard claims per limited label, counted on the claimed issues' labels now (a label
 * added to a claimed issue later counts from then on; it does not end the claim). IDD marker
 * claims are not counted: switchyard does not know what they work on.
 */
export function liveByLabel(
  limits: LabelLimits,
  liveIssueLabels: Iterable<readonly string[]>,
): Map<string, number> {
  const counts = new Map<string, number>();
  if (limits.size === 0) return counts;
  for (const labels of liveIssueLabels) {
    for (const key of new Set(labels.map((l) => l.toLowerCase()))) {
      if (limits.has(key)) counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}

/** The first of the issue's labels whose limit its live claims already reach, or null. */
export function labelAtLimit(
  labels: readonly string[],
  limits: LabelLimits,
  live: ReadonlyMap<string, number>,
): { label: string; limit: number; live: number } | null {
  if (limits.size === 0) return null;
  for (const name of labels) {
    const limit = limits.get(name.toLowerCase());
    if (limit === undefined) continue;
    const count = live.get(name.toLowerCase()) ?? 0;
    if (count >= limit.limit) return { label: limit.label, limit: limit.limit, live: count };
  }
  return null;
}

/** Repair work: an issue labelled `breaker.repairLabel`, handed out while the breaker is red. */
export function isRepairWork(labels: readonly string[], repairLabel: string): boolean {
  const wanted = repairLabel.toLowerCase();
  return labels.some((l) => l.toLowerCase() === wanted);
}

/**
 * Whether the breaker holds this claim back: while red, ordinary work is paused; repair issues
 * and replies (answering people is how a red build gets discussed) go on.
 */
export function pausedFor(
  paused: boolean,
  claim: { kind: ClaimKind; labels: readonly string[]; repairLabel: string },
): boolean {
  return paused && claim.kind === "work" && !isRepairWork(claim.labels, claim.repairLabel);
}

export type PolicyDenial =
  | { reason: "paused"; message: string }
  | { reason: "label-limit"; label: string; message: string };

/** The queue policy's verdict on a grant the issue's own rules allow: null grants it. */
export function policyDenial(input: {
  kind: ClaimKind;
  labels: readonly string[];
  /** The breaker is red: the failing checks' names, for the message. */
  paused: { failing: readonly string[] } | null;
  repairLabel: string;
  limits: LabelLimits;
  live: ReadonlyMap<string, number>;
}): PolicyDenial | null {
  if (
    input.paused !== null &&
    pausedFor(true, { kind: input.kind, labels: input.labels, repairLabel: input.repairLabel })
  ) {
    const failing = input.paused.failing.length > 0 ? `: ${input.paused.failing.join(", ")}` : "";
    return {
      reason: "paused",
      message: `the default branch is red${failing}; only issues labelled ${input.repairLabel} are handed out`,
    };
  }
  const full = labelAtLimit(input.labels, input.limits, input.live);
  if (full !== null) {
    return {
      reason: "label-limit",
      label: full.label,
      message: `${full.live} live claims already work on issues labelled ${full.label} (limit ${full.limit})`,
    };
  }
  return null;
}
