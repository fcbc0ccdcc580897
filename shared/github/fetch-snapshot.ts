// The full graph fetch (spec 6.3): every issue with its labels, parent, sub-issues and
// blocked-by edges, 100 issues a GraphQL request, nested connections paged only when they
// overflow, label events only for issues whose labels make them matter.
import { DEFAULT_CONFIG, type LabelNames } from "../config/schema.ts";
import { parseCrossRepoRef, repoKey } from "../graph/refs.ts";
import {
  type ExternalIssue,
  parseSnapshot,
  type Snapshot,
  type SnapshotIssue,
} from "../graph/snapshot.ts";
import type { ReplyTrust } from "../queue/reply-authors.ts";
import type { GitHubClient } from "./client.ts";
import { GitHubApiError, RepositoryMismatchError } from "./errors.ts";
import {
  ISSUE_OVERFLOW_QUERY,
  ISSUES_BY_ID_BATCH,
  ISSUES_BY_ID_QUERY,
  ISSUES_PAGE_QUERY,
  LABEL_EVENTS_BATCH,
  LABEL_EVENTS_QUERY,
} from "./queries.ts";
import { type ReplyWindow, readReplyWindows } from "./reply-windows.ts";
import {
  type GqlConnection,
  type GqlIssue,
  type GqlLabelEvent,
  type GqlRelated,
  type IssueEdges,
  refTo,
  toLabelEvents,
  toSnapshotIssue,
} from "./to-snapshot.ts";

export interface FetchOptions {
  /** Include issue bodies (markers such as `requires:` live there). Default false. */
  withBody?: boolean;
  /** Label names that decide which issues need label events (default: the config defaults). */
  labels?: LabelNames;
  /** The snapshot's `now`; default the current time. */
  now?: () => Date;
  /**
   * Read each open issue's reply window (reply-windows.ts), deciding under this trust where to
   * stop reading backwards. Default: no comments read.
   */
  replies?: ReplyTrust;
  /**
   * With `replies`: the newest comment id of an issue's thread the caller already holds whole
   * (null when it does not). Such a thread is read back only to that comment: the comments
   * after it are all that is new (reply-windows.ts). Default: none held.
   */
  storedThread?: (number: number) => number | null;
}

export interface FetchReport {
  /** GraphQL requests by purpose. */
  pages: number;
  overflowRequests: number;
  labelEventRequests: number;
  /** Comment requests beyond each page's own window (reply-windows.ts). */
  commentRequests: number;
  /** Sub-issues that live in another repository (the snapshot has no place for them). */
  crossRepoChildren: { parent: number; child: string }[];
}

export interface FetchResult {
  snapshot: Snapshot;
  report: FetchReport;
}

export function splitRepo(repo: string): { owner: string; name: string } {
  const m = /^([^/\s]+)\/([^/\s]+)$/.exec(repo);
  if (!m) throw new Error(`expected a repository as owner/name, got "${repo}"`);
  return { owner: m[1]!, name: m[2]! };
}

function nodesOf<T>(conn: GqlConnection<T> | null | undefined): T[] {
  return (conn?.nodes ?? []).filter((n): n is T => n !== null);
}

/** Issues whose stance or processing lock depends on label history (spec 3.2). */
export function needsLabelEvents(labels: string[], names: LabelNames): boolean {
  const has = (l: string) => labels.includes(l);
  return has(names.processing) || (has(names.ready) && has(names.needsHuman));
}

interface OverflowPage {
  node: {
    labels?: GqlConnection<{ name: string }>;
    subIssues?: GqlConnection<GqlRelated>;
    blockedBy?: GqlConnection<GqlRelated>;
  } | null;
}

/** Pages whatever connections of `node` overflowed the page query; returns complete edges. */
async function completeEdges(
  client: GitHubClient,
  repo: string,
  node: GqlIssue,
  report: FetchReport,
): Promise<IssueEdges> {
  const edges: IssueEdges = {
    labels: nodesOf(node.labels).map((l) => l.name),
    subIssues: nodesOf(node.subIssues),
    blockedBy: nodesOf(node.blockedBy),
  };
  const cursors = {
    labels: node.labels?.pageInfo.hasNextPage ? node.labels.pageInfo.endCursor : null,
    subIssues: node.subIssues.pageInfo.hasNextPage ? node.subIssues.pageInfo.endCursor : null,
    blockedBy: node.blockedBy.pageInfo.hasNextPage ? node.blockedBy.pageInfo.endCursor : null,
  };
  while (cursors.labels || cursors.subIssues || cursors.blockedBy) {
    report.overflowRequests += 1;
    const data = await client.graphql<OverflowPage>(
      `fetch the rest of ${repo}#${node.number}'s connections`,
      ISSUE_OVERFLOW_QUERY,
      {
        id: node.id,
        labels: cursors.labels !== null,
        labelsAfter: cursors.labels,
        subIssues: cursors.subIssues !== null,
        subIssuesAfter: cursors.subIssues,
        blockedBy: cursors.blockedBy !== null,
        blockedByAfter: cursors.blockedBy,
      },
    );
    const n = data.node;
    if (!n) break; // deleted while we paged; the next reconcile sees it gone
    if (n.labels) {
      edges.labels.push(...nodesOf(n.labels).map((l) => l.name));
      cursors.labels = n.labels.pageInfo.hasNextPage ? n.labels.pageInfo.endCursor : null;
    }
    if (n.subIssues) {
      edges.subIssues.push(...nodesOf(n.subIssues));
      cursors.subIssues = n.subIssues.pageInfo.hasNextPage ? n.subIssues.pageInfo.endCursor : null;
    }
    if (n.blockedBy) {
      edges.blockedBy.push(...nodesOf(n.blockedBy));
      cursors.blockedBy = n.blockedBy.pageInfo.hasNextPage ? n.blockedBy.pageInfo.endCursor : null;
    }
  }
  return edges;
}

/** Label events for the given issues, LABEL_EVENTS_BATCH issues a request. */
async function fetchLabelEvents(
  client: GitHubClient,
  repo: string,
  nodes: ReadonlyArray<Pick<GqlIssue, "id">>,
  report: FetchReport,
): Promise<Map<number, ReturnType<typeof toLabelEvents>>> {
  const out = new Map<number, ReturnType<typeof toLabelEvents>>();
  for (let i = 0; i < nodes.length; i += LABEL_EVENTS_BATCH) {
    const batch = nodes.slice(i, i + LABEL_EVENTS_BATCH);
    report.labelEventRequests += 1;
    const data = await client.graphql<{
      nodes: ({ number: number; timelineItems: { nodes: (GqlLabelEvent | null)[] } } | null)[];
    }>(`fetch label events of ${batch.length} issues of ${repo}`, LABEL_EVENTS_QUERY, {
      ids: batch.map((n) => n.id),
    });
    for (const n of data.nodes) {
      if (n?.timelineItems) out.set(n.number, toLabelEvents(n.timelineItems.nodes));
    }
  }
  return out;
}

/** Turns fetched issue nodes into complete snapshot issues (overflow paging, label events). */
export async function completeIssues(
  client: GitHubClient,
  repo: string,
  nodes: GqlIssue[],
  opts: FetchOptions,
  report: FetchReport,
  external: Map<string, ExternalIssue>,
  /**
   * Given, the issues that need label events are added here instead of read now, so a caller
   * reading many pages batches them across pages (LABEL_EVENTS_BATCH a request).
   */
  deferred?: Array<Pick<GqlIssue, "id" | "number">>,
): Promise<SnapshotIssue[]> {
  const names = opts.labels ?? DEFAULT_CONFIG.labels;
  const edges = new Map<number, IssueEdges>();
  for (const node of nodes) {
    edges.set(node.number, await completeEdges(client, repo, node, report));
    for (const child of edges.get(node.number)!.subIssues) {
      const ref = refTo(repo, child.repository.nameWithOwner, child.number);
      if (typeof ref === "string")
        report.crossRepoChildren.push({ parent: node.number, child: ref });
    }
  }
  const eventful = nodes.filter((n) => needsLabelEvents(edges.get(n.number)!.labels, names));
  if (deferred) deferred.push(...eventful.map((n) => ({ id: n.id, number: n.number })));
  const events = deferred ? new Map() : await fetchLabelEvents(client, repo, eventful, report);
  return nodes.map((node) =>
    toSnapshotIssue(repo, node, edges.get(node.number)!, external, {
      withBody: opts.withBody === true,
      labelEvents: events.get(node.number),
    }),
  );
}

/** Issue nodes by GraphQL node id, ISSUES_BY_ID_BATCH a request (deleted ones are skipped). */
export async function fetchIssuesById(
  client: GitHubClient,
  repo: string,
  ids: string[],
  opts: FetchOptions,
): Promise<GqlIssue[]> {
  const out: GqlIssue[] = [];
  for (let i = 0; i < ids.length; i += ISSUES_BY_ID_BATCH) {
    const data = await client.graphql<{ nodes: (GqlIssue | null)[] }>(
      `refetch ${Math.min(ISSUES_BY_ID_BATCH, ids.length - i)} changed issues of ${repo}`,
      ISSUES_BY_ID_QUERY,
      {
        ids: ids.slice(i, i + ISSUES_BY_ID_BATCH),
        withBody: opts.withBody === true,
        withComments: opts.replies !== undefined,
      },
    );
    for (const n of data.nodes) if (n && typeof n.number === "number") out.push(n);
  }
  return out;
}

/** The reply windows of the open issues among `nodes`, when `opts.replies` asks for them. */
export async function replyWindowsOf(
  client: GitHubClient,
  repo: string,
  nodes: readonly GqlIssue[],
  opts: FetchOptions,
  report: FetchReport,
): Promise<ReplyWindow[]> {
  if (opts.replies === undefined) return [];
  const open = [];
  for (const n of nodes) {
    if (n.state !== "OPEN" || n.comments === undefined) continue;
    open.push({
      id: n.id,
      number: n.number,
      url: n.url ?? "",
      author: n.author ?? null,
      authorAssociation: n.authorAssociation ?? "NONE",
      comments: n.comments,
    });
  }
  return readReplyWindows(client, repo, open, opts.replies, report, opts.storedThread);
}

export function emptyReport(): FetchReport {
  return {
    pages: 0,
    overflowRequests: 0,
    labelEventRequests: 0,
    commentRequests: 0,
    crossRepoChildren: [],
  };
}

export function finishSnapshot(
  repo: string,
  now: Date,
  issues: SnapshotIssue[],
  external: Map<string, ExternalIssue>,
): Snapshot {
  const own = new Set(issues.map((i) => i.number));
  const ext = [...external.values()]
    .filter((e) => {
      const parsed = parseCrossRepoRef(e.ref);
      return !(
        parsed &&
        repoKey(`${parsed.owner}/${parsed.repo}`) === repoKey(repo) &&
        own.has(parsed.number)
      );
    })
    .sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  const snapshot = {
    repo,
    now: now.toISOString().replace(/\.\d{3}Z$/, "Z"),
    issues: [...issues].sort((a, b) => a.number - b.number),
    ...(ext.length > 0 ? { external: ext } : {}),
  };
  // The output is a promise to every consumer: check it like untrusted input.
  return parseSnapshot(snapshot);
}

/** GitHub's largest page of issues, and the full fetch's default. */
export const MAX_PAGE_SIZE = 100;

export interface PageOptions extends FetchOptions {
  /** Issues a page, 1 to 100 (default 100). */
  pageSize?: number;
  /**
   * Given, the page's issues that need label events are added here, without them, for the
   * caller to read across pages (`fetchSnapshot` does); absent, the page reads them itself.
   */
  deferLabelEvents?: Array<Pick<GqlIssue, "id" | "number">>;
}

/** One page of the full fetch, complete: its issues with every edge and label event. */
export interface SnapshotPage {
  /** In GitHub's order (by creation). */
  issues: SnapshotIssue[];
  /** Cross-repository blockers named by this page's issues, with their state. */
  external: ExternalIssue[];
  /** Where the next page starts; null after the last page. */
  next: string | null;
  /** With `replies`: what was read of each open issue's thread. */
  replies: ReplyWindow[];
}

/**
 * One page of `repo`'s issue graph after `cursor` (null: the first page), each issue completed
 * (overflowing connections paged, label events read) before it returns, so a caller can apply
 * and forget a page before asking for the next: what it holds is one page, never the graph.
 * `report` accumulates over the pages of one fetch.
 */
export async function fetchSnapshotPage(
  client: GitHubClient,
  repo: string,
  cursor: string | null,
  opts: PageOptions = {},
  report: FetchReport = emptyReport(),
): Promise<SnapshotPage> {
  const { owner, name } = splitRepo(repo);
  const first = opts.pageSize ?? MAX_PAGE_SIZE;
  if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE_SIZE) {
    throw new Error(`a page holds 1 to ${MAX_PAGE_SIZE} issues, got ${first}`);
  }
  report.pages += 1;
  const data: {
    repository: {
      databaseId?: number | null;
      issues: {
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
        nodes: (GqlIssue | null)[];
      };
    } | null;
  } = await client.graphql(
    `fetch the issue graph of ${repo} (page ${report.pages})`,
    ISSUES_PAGE_QUERY,
    {
      owner,
      name,
      after: cursor,
      first,
      withBody: opts.withBody === true,
      withComments: opts.replies !== undefined,
    },
  );
  const pinned = client.repository;
  const serves = pinned !== undefined && pinned.fullName.toLowerCase() === repo.toLowerCase();
  if (serves && (data.repository?.databaseId ?? null) !== pinned.id) {
    const foundId = data.repository?.databaseId ?? null;
    throw new RepositoryMismatchError({ expectedId: pinned.id, foundId, fullName: repo });
  }
  if (!data.repository) {
    throw new GitHubApiError({
      kind: "not-found",
      operation: `fetch the issue graph of ${repo}`,
      request: "POST /graphql SwitchyardIssuesPage",
      status: 200,
      attempts: 1,
      reason: `repository ${repo} not found`,
    });
  }
  const page = data.repository.issues;
  const nodes = page.nodes.filter((n): n is GqlIssue => n !== null);
  const external = new Map<string, ExternalIssue>();
  const issues = await completeIssues(
    client,
    repo,
    nodes,
    opts,
    report,
    external,
    opts.deferLabelEvents,
  );
  const next = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
  const replies = await replyWindowsOf(client, repo, nodes, opts, report);
  return { issues, external: [...external.values()], next, replies };
}

/**
 * GitHub refused a page cursor (too old, or from another query): the fetch must start again
 * from the first page. GitHub answers such a cursor with a GraphQL error naming it.
 */
export function isCursorRefused(error: unknown): boolean {
  return (
    error instanceof GitHubApiError && error.kind === "graphql" && /\bcursor\b/i.test(error.reason)
  );
}

/** Fetches the whole issue graph of `repo` ("owner/name") as a snapshot, page by page. */
export async function fetchSnapshot(
  client: GitHubClient,
  repo: string,
  opts: PageOptions = {},
): Promise<FetchResult> {
  const report = emptyReport();
  const external = new Map<string, ExternalIssue>();
  const issues: SnapshotIssue[] = [];
  // Label events are read once every page is in, batched across pages.
  const eventful: Array<Pick<GqlIssue, "id" | "number">> = [];
  let cursor: string | null = null;
  do {
    const page: SnapshotPage = await fetchSnapshotPage(
      client,
      repo,
      cursor,
      { ...opts, deferLabelEvents: eventful },
      report,
    );
    issues.push(...page.issues);
    for (const e of page.external) external.set(e.ref.toLowerCase(), e);
    cursor = page.next;
  } while (cursor);
  const events = await fetchLabelEvents(client, repo, eventful, report);
  for (const issue of issues) {
    const found = events.get(issue.number);
    if (found) issue.labelEvents = found;
  }
  return {
    snapshot: finishSnapshot(repo, (opts.now ?? (() => new Date()))(), issues, external),
    report,
  };
}
