import type { LabelNames } from "../config/schema.ts";

/** What a claim holder may not do through the fenced write routes, with the answer it gets. */
export interface WriteProblem {
  status: 400 | 409;
  body: { error: string; message: string; reason?: string };
}

type Op =
  | { kind: "comment" }
  | { kind: "labels"; add: readonly string[]; remove: readonly string[] }
  | { kind: "close" }
  | { kind: "sub-issue" };

/**
 * Labels switchyard owns (ready, stuck, processing) are its to set, never a claim holder's; a
 * held issue cannot be closed by an agent. Null when the write may go ahead.
 */
export function fencedWriteProblem(
  op: Op,
  issue: { labels: LabelNames; issueLabels: readonly string[] },
): WriteProblem | null {
  if (op.kind === "labels") {
    const owned = new Set([issue.labels.ready, issue.labels.stuck, issue.labels.processing]);
    const touched = [...op.add, ...op.remove].filter((l) => owned.has(l));
    if (touched.length > 0) {
      return {
        status: 400,
        body: {
          error: "bad-request",
          message: `switchyard owns the label${touched.length > 1 ? "s" : ""} ${touched.join(", ")}; it cannot be set through the fleet API`,
        },
      };
    }
  }
  if (op.kind === "close" && issue.issueLabels.includes(issue.labels.hold)) {
    return {
      status: 409,
      body: {
        error: "conflict",
        reason: "hold",
        message: `the issue carries ${issue.labels.hold}; a held issue cannot be closed by a claim holder`,
      },
    };
  }
  return null;
}
