// Incremental reconcile (spec 6.3): list issues changed since the watermark with a conditional
// request (a 304 costs no rate limit), then refetch only the changed issues' edges by GraphQL.
import type { ExternalIssue, SnapshotIssue } from "../graph/snapshot.ts";
import type { GitHubClient } from "./client.ts";
import {
  completeIssues,
  emptyReport,
  type FetchOptions,
  type FetchReport,
  fetchIssuesById,
  replyWindowsOf,
  splitRepo,
} from "./fetch-snapshot.ts";
import type { ReplyWindow } from "./reply-windows.ts";

/** What the caller persists between reconciles (the Worker's per-repo watermark). */
export interface IncrementalWatermark {
  /** `since` for the listing: the newest `updated_at` seen. */
  since: string;
  /** ETag of the listing for exactly this `since`, when known. */
  etag: string | null;
  /** Issues already seen at exactly `since` (GitHub's `since` is inclusive). */
  boundary: number[];
}

export interface IncrementalResult {
  changed: boolean;
  /** Changed issues, complete with edges and (where relevant) label events. */
  issues: SnapshotIssue[];
  /** Cross-repository blockers of the changed issues. */
  external: ExternalIssue[];
  /** With `replies`: what was read of each changed open issue's thread. */
  replies: ReplyWindow[];
  watermark: IncrementalWatermark;
  /** REST listing requests, and whether the first was answered 304. */
  listRequests: number;
  notModified: boolean;
  report: FetchReport;
}

interface RestIssue {
  number: number;
  node_id: string;
  updated_at: string;
  pull_request?: unknown;
}

export async function fetchChanges(
  client: GitHubClient,
  repo: string,
  watermark: IncrementalWatermark,
  opts: FetchOptions = {},
): Promise<IncrementalResult> {
  const { owner, name } = splitRepo(repo);
  const report = emptyReport();
  const listed: RestIssue[] = [];
  let etag: string | null = null;
  let listRequests = 0;
  for (let page = 1; ; page++) {
    listRequests += 1;
    const res = await client.send<RestIssue[]>({
      operation: `list issues of ${repo} changed since ${watermark.since}`,
      route: "GET /repos/{owner}/{repo}/issues",
      params: {
        owner,
        repo: name,
        state: "all",
        since: watermark.since,
        sort: "updated",
        direction: "asc",
        per_page: 100,
        page,
      },
      headers: page === 1 && watermark.etag ? { "if-none-match": watermark.etag } : undefined,
      idempotent: true,
    });
    if (res.status === 304) {
      return {
        changed: false,
        issues: [],
        external: [],
        replies: [],
        watermark,
        listRequests,
        notModified: true,
        report,
      };
    }
    if (page === 1) etag = res.headers.etag ?? null;
    listed.push(...res.data);
    if (!/rel="next"/.test(res.headers.link ?? "")) break;
  }
  const boundary = new Set(watermark.boundary);
  const changed = listed.filter(
    (i) =>
      i.pull_request === undefined && !(i.updated_at === watermark.since && boundary.has(i.number)),
  );
  // Advance the watermark to the newest update seen; the ETag only holds for the same `since`.
  let since = watermark.since;
  for (const i of listed) if (Date.parse(i.updated_at) > Date.parse(since)) since = i.updated_at;
  const atSince = listed.filter((i) => i.updated_at === since).map((i) => i.number);
  const next: IncrementalWatermark = {
    since,
    etag: since === watermark.since ? etag : null,
    boundary:
      since === watermark.since
        ? [...new Set([...watermark.boundary, ...atSince])].sort((a, b) => a - b)
        : atSince.sort((a, b) => a - b),
  };
  if (changed.length === 0) {
    return {
      changed: false,
      issues: [],
      external: [],
      replies: [],
      watermark: next,
      listRequests,
      notModified: false,
      report,
    };
  }
  const nodes = await fetchIssuesById(
    client,
    repo,
    changed.map((i) => i.node_id),
    opts,
  );
  const external = new Map<string, ExternalIssue>();
  const issues = await completeIssues(client, repo, nodes, opts, report, external);
  const replies = await replyWindowsOf(client, repo, nodes, opts, report);
  return {
    changed: true,
    issues: issues.sort((a, b) => a.number - b.number),
    external: [...external.values()].sort((a, b) => (a.ref < b.ref ? -1 : 1)),
    replies,
    watermark: next,
    listRequests,
    notModified: false,
    report,
  };
}
