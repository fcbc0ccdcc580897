import type { Snapshot } from "../graph/snapshot.ts";
import type { LabelPlan } from "./plan.ts";

/**
 * The snapshot as it is after a plan's label writes succeeded at `at`: labels changed and a
 * label event recorded for each write, the way GitHub records them. Pure; the input is untouched.
 */
export function applyPlan(
  snapshot: Snapshot,
  plan: LabelPlan,
  at: string,
  actor = "switchyard",
): Snapshot {
  const adds = new Map<number, string[]>();
  const removes = new Map<number, string[]>();
  for (const c of plan.add) adds.set(c.number, [...(adds.get(c.number) ?? []), c.label]);
  for (const c of plan.remove) removes.set(c.number, [...(removes.get(c.number) ?? []), c.label]);
  return {
    ...snapshot,
    issues: snapshot.issues.map((issue) => {
      const added = (adds.get(issue.number) ?? []).filter((l) => !issue.labels.includes(l));
      const removed = (removes.get(issue.number) ?? []).filter((l) => issue.labels.includes(l));
      if (added.length === 0 && removed.length === 0) return issue;
      return {
        ...issue,
        labels: [...issue.labels.filter((l) => !removed.includes(l)), ...added],
        labelEvents: [
          ...(issue.labelEvents ?? []),
          ...added.map((label) => ({ label, action: "labeled" as const, actor, createdAt: at })),
          ...removed.map((label) => ({
            label,
            action: "unlabeled" as const,
            actor,
            createdAt: at,
          })),
        ],
      };
    }),
  };
}
