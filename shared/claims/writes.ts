import type { LabelNames } from "../config/schema.ts";
import { parseCommentMarker } from "../idd/comment-markers.ts";

/** What a claim holder may not do through the fenced write routes, with the answer it gets. */
export interface WriteProblem {
  status: 400 | 409;
  body: { error: string; message: string; reason?: string };
}

type Op =
  | { kind: "comment"; body: string }
  | { kind: "labels"; add: readonly string[]; remove: readonly string[] }
  | { kind: "close" }
  | { kind: "sub-issue" };

const badRequest = (message: string): WriteProblem => ({
  status: 400,
  body: { error: "bad-request", message },
});

/**
 * The rules of the fenced write routes. Labels switchyard owns (ready, stuck, processing) are
 * its to set, never a claim holder's, and nor is taking the hold label off; GitHub compares
 * label names case-insensitively, so these checks do too. A comment may not carry an IDD claim
 * marker: it would be posted with the App's identity, which IDD agents trust. A held issue
 * cannot be closed by an agent. Null when the write may go ahead.
 */
export function fencedWriteProblem(
  op: Op,
  issue: { labels: LabelNames; issueLabels: readonly string[] },
): WriteProblem | null {
  const lower = (l: string) => l.toLowerCase();
  if (op.kind === "labels") {
    const owned = new Set(
      [issue.labels.ready, issue.labels.stuck, issue.labels.processing].map(lower),
    );
    const touched = [...op.add, ...op.remove].filter((l) => owned.has(lower(l)));
    if (touched.length > 0) {
      return badRequest(
        `switchyard owns the label${touched.length > 1 ? "s" : ""} ${touched.join(", ")}; it cannot be set through the fleet API`,
      );
    }
    const hold = op.remove.find((l) => lower(l) === lower(issue.labels.hold));
    if (hold !== undefined) {
      return badRequest(`${hold} is a person's decision; a claim holder cannot take it off`);
    }
  }
  if (op.kind === "comment" && parseCommentMarker(op.body).status !== "none") {
    return badRequest(
      "the comment opens with an IDD claim marker; switchyard posts those itself for the claims it grants",
    );
  }
  if (op.kind === "close" && issue.issueLabels.some((l) => lower(l) === lower(issue.labels.hold))) {
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
