// The oracle's label rules (see ./analyze.ts), read from an issue's labels and label events.
import type { LabelNames } from "../../../shared/config/schema.ts";
import type { Stance } from "../../../shared/graph/labels.ts";
import type { LabelEvent, SnapshotIssue } from "../../../shared/graph/snapshot.ts";
import { instantMs } from "../../../shared/graph/time.ts";

/**
 * The latest event for `label`: by time, and for equal times the later one in the list
 * (GitHub lists an issue's events in the order they happened).
 */
function latestEvent(
  events: readonly LabelEvent[] | undefined,
  label: string,
  action?: LabelEvent["action"],
): LabelEvent | undefined {
  let latest: LabelEvent | undefined;
  let latestMs = Number.NEGATIVE_INFINITY;
  for (const event of events ?? []) {
    if (event.label !== label || (action !== undefined && event.action !== action)) continue;
    const ms = instantMs(event.createdAt);
    if (ms >= latestMs) {
      latest = event;
      latestMs = ms;
    }
  }
  return latest;
}

/** A label counts as present if its latest event is `labeled`, or with no events if listed. */
function labelPresence(
  issue: SnapshotIssue,
  label: string,
): { present: boolean; at: number | null } {
  const event = latestEvent(issue.labelEvents, label);
  if (event === undefined) return { present: issue.labels.includes(label), at: null };
  return { present: event.action === "labeled", at: instantMs(event.createdAt) };
}

/**
 * `agent:ready` against `needs-human-confirm`: the one labeled later wins; on a tie or without
 * timestamps the human gate wins, because waiting wrongly costs less than acting wrongly.
 */
export function labelStance(issue: SnapshotIssue, labels: LabelNames): Stance {
  const ready = labelPresence(issue, labels.ready);
  const human = labelPresence(issue, labels.needsHuman);
  if (ready.present && human.present) {
    if (ready.at !== null && human.at !== null && ready.at > human.at) return "ready";
    return "waiting";
  }
  if (human.present) return "waiting";
  if (ready.present) return "ready";
  return "none";
}

/**
 * A processing lock is fresh while its latest `labeled` event is younger than the TTL. With no
 * event known, the label's presence alone counts as fresh (fail closed: never double-process).
 */
export function hasFreshProcessingLock(
  issue: SnapshotIssue,
  labels: LabelNames,
  nowMs: number,
  ttlMs: number,
): boolean {
  if (!issue.labels.includes(labels.processing)) return false;
  const event = latestEvent(issue.labelEvents, labels.processing, "labeled");
  if (event === undefined) return true;
  return nowMs - instantMs(event.createdAt) < ttlMs;
}

export function isEpicManaged(issue: SnapshotIssue, labels: LabelNames): boolean {
  return issue.labels.some((l) => l === labels.epicManaged || l.startsWith("epic:"));
}

export function isHeld(issue: SnapshotIssue, labels: LabelNames): boolean {
  return issue.labels.includes(labels.hold);
}

/** Dead-lettered by the fleet API after repeated failed claims; reserved like hold until a human removes it. */
export function isStuck(issue: SnapshotIssue, labels: LabelNames): boolean {
  return issue.labels.includes(labels.stuck);
}
