// Cross-repository blockers: GitHub sends this repository no webhook when an issue in another
// repository closes, and the blocked issue's own `updated_at` does not move. So each reconcile
// re-reads the open ones, conditionally (a 304 costs no rate limit).
import { parseCrossRepoRef } from "../graph/refs.ts";
import type { GitHubClient } from "./client.ts";
import { GitHubApiError } from "./errors.ts";

export interface ExternalProbe {
  ref: string;
  /** ETag of the last answer for this issue, if any. */
  etag: string | null;
}

export type ExternalRefresh =
  | { ref: string; kind: "unchanged" }
  | {
      ref: string;
      kind: "state";
      state: "open" | "closed";
      closedAt: string | null;
      etag: string | null;
    }
  /** Gone, or not visible to this installation: the stored state stays (fail closed). */
  | { ref: string; kind: "unavailable"; reason: string };

interface RestIssue {
  state: "open" | "closed";
  closed_at: string | null;
}

/** Re-reads each referenced issue with `If-None-Match`; other failures propagate. */
export async function refreshExternal(
  client: GitHubClient,
  probes: readonly ExternalProbe[],
): Promise<ExternalRefresh[]> {
  const out: ExternalRefresh[] = [];
  for (const probe of probes) {
    const parsed = parseCrossRepoRef(probe.ref);
    if (!parsed) {
      out.push({ ref: probe.ref, kind: "unavailable", reason: "not an owner/repo#n reference" });
      continue;
    }
    try {
      const res = await client.send<RestIssue>({
        operation: `read the state of ${probe.ref}`,
        route: "GET /repos/{owner}/{repo}/issues/{issue_number}",
        params: { owner: parsed.owner, repo: parsed.repo, issue_number: parsed.number },
        headers: probe.etag ? { "if-none-match": probe.etag } : undefined,
        idempotent: true,
      });
      if (res.status === 304) out.push({ ref: probe.ref, kind: "unchanged" });
      else {
        out.push({
          ref: probe.ref,
          kind: "state",
          state: res.data.state,
          closedAt: res.data.closed_at,
          etag: res.headers.etag ?? null,
        });
      }
    } catch (error) {
      if (
        error instanceof GitHubApiError &&
        (error.kind === "not-found" || error.kind === "forbidden")
      ) {
        out.push({ ref: probe.ref, kind: "unavailable", reason: error.message });
        continue;
      }
      throw error;
    }
  }
  return out;
}
