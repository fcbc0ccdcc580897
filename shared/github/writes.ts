// Writes switchyard makes: labels, comments, closing, sub-issue and blocked-by links. Each
// states whether it is safe to repeat; the two link additions are not, so after an ambiguous
// failure they check GitHub's state before trying again instead of retrying blindly.
import { parseCrossRepoRef } from "../graph/refs.ts";
import type { GitHubClient } from "./client.ts";
import { GitHubApiError } from "./errors.ts";
import { splitRepo } from "./fetch-snapshot.ts";

/** An issue as the write API needs it: its repository and number, or `owner/name#n`. */
export type IssueTarget = number | string;

interface Located {
  owner: string;
  repo: string;
  number: number;
  label: string;
}

function locate(repo: string, target: IssueTarget): Located {
  if (typeof target === "number") {
    const { owner, name } = splitRepo(repo);
    return { owner, repo: name, number: target, label: `${repo}#${target}` };
  }
  const parsed = parseCrossRepoRef(target);
  if (!parsed) throw new Error(`expected an issue number or owner/repo#n, got "${target}"`);
  return { owner: parsed.owner, repo: parsed.repo, number: parsed.number, label: target };
}

interface RestIssue {
  id: number;
  number: number;
  parent_issue_url?: string | null;
}

export async function getIssue(
  client: GitHubClient,
  repo: string,
  target: IssueTarget,
): Promise<RestIssue> {
  const t = locate(repo, target);
  const res = await client.send<RestIssue>({
    operation: `read ${t.label}`,
    route: "GET /repos/{owner}/{repo}/issues/{issue_number}",
    params: { owner: t.owner, repo: t.repo, issue_number: t.number },
    idempotent: true,
  });
  return res.data;
}

export async function addLabels(
  client: GitHubClient,
  repo: string,
  number: number,
  labels: string[],
): Promise<void> {
  const { owner, name } = splitRepo(repo);
  await client.send({
    operation: `add ${labels.join(", ")} to ${repo}#${number}`,
    route: "POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
    params: { owner, repo: name, issue_number: number, labels },
    // Adding a label the issue already has changes nothing: safe to repeat.
    idempotent: true,
  });
}

/** Removes a label; an issue without that label is already in the wanted state (success). */
export async function removeLabel(
  client: GitHubClient,
  repo: string,
  number: number,
  label: string,
): Promise<{ removed: boolean }> {
  const { owner, name } = splitRepo(repo);
  try {
    await client.send({
      operation: `remove ${label} from ${repo}#${number}`,
      route: "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
      params: { owner, repo: name, issue_number: number, name: label },
      idempotent: true,
    });
    return { removed: true };
  } catch (error) {
    // GitHub answers 404 "Label does not exist" for a label the issue lacks; any other 404
    // (a deleted issue) is a real failure.
    if (
      error instanceof GitHubApiError &&
      error.status === 404 &&
      /label does not exist/i.test(error.reason)
    ) {
      return { removed: false };
    }
    throw error;
  }
}

export async function createComment(
  client: GitHubClient,
  repo: string,
  number: number,
  body: string,
): Promise<{ id: number; url: string }> {
  const { owner, name } = splitRepo(repo);
  const res = await client.send<{ id: number; html_url: string }>({
    operation: `comment on ${repo}#${number}`,
    route: "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
    params: { owner, repo: name, issue_number: number, body },
    // A repeated POST would post the comment twice.
    idempotent: false,
  });
  return { id: res.data.id, url: res.data.html_url };
}

/** Opens an issue; returns its number, id and page URL. */
export async function createIssue(
  client: GitHubClient,
  repo: string,
  input: { title: string; body?: string },
): Promise<{ number: number; id: number; url: string }> {
  const { owner, name } = splitRepo(repo);
  const res = await client.send<{ number: number; id: number; html_url: string }>({
    operation: `open an issue in ${repo}`,
    route: "POST /repos/{owner}/{repo}/issues",
    params: { owner, repo: name, title: input.title, ...(input.body ? { body: input.body } : {}) },
    idempotent: false,
  });
  return { number: res.data.number, id: res.data.id, url: res.data.html_url };
}

/**
 * The issue of `repo` whose body carries `marker`, among those updated since `sinceIso`
 * (newest created first, up to `maxPages` pages of 100), or null: how a create whose answer
 * was lost is found again (shared/claims/sub-issue-marker.ts).
 */
export async function findIssueWithMarker(
  client: GitHubClient,
  repo: string,
  sinceIso: string,
  marker: string,
  maxPages = 3,
): Promise<{ number: number; id: number } | null> {
  const { owner, name } = splitRepo(repo);
  for (let page = 1; page <= maxPages; page++) {
    const res = await client.send<
      Array<{ number: number; id: number; body?: string | null; pull_request?: unknown }>
    >({
      operation: `look for the issue a lost create opened in ${repo}`,
      route: "GET /repos/{owner}/{repo}/issues",
      params: {
        owner,
        repo: name,
        state: "all",
        since: sinceIso,
        sort: "created",
        direction: "desc",
        per_page: 100,
        page,
      },
      idempotent: true,
    });
    const found = res.data.find((i) => !i.pull_request && i.body?.includes(marker));
    if (found) return { number: found.number, id: found.id };
    if (!/rel="next"/.test(res.headers.link ?? "")) return null;
  }
  return null;
}

export type CloseReason = "completed" | "not_planned" | "duplicate";

export async function closeIssue(
  client: GitHubClient,
  repo: string,
  number: number,
  reason: CloseReason = "completed",
): Promise<void> {
  const { owner, name } = splitRepo(repo);
  await client.send({
    operation: `close ${repo}#${number} as ${reason}`,
    route: "PATCH /repos/{owner}/{repo}/issues/{issue_number}",
    params: { owner, repo: name, issue_number: number, state: "closed", state_reason: reason },
    idempotent: true,
  });
}

/**
 * Sends a non-idempotent link write; after an ambiguous failure (5xx, lost response, timeout)
 * asks GitHub whether it was applied, and only if not sends it again (bounded). A 422 for a
 * link that already exists is the wanted state, so it is success too.
 */
async function verifiedWrite(
  attempt: () => Promise<void>,
  applied: () => Promise<boolean>,
  maxTries = 3,
): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      await attempt();
      return;
    } catch (error) {
      if (!(error instanceof GitHubApiError)) throw error;
      if (error.kind === "invalid") {
        if (await applied()) return;
        throw error;
      }
      if (error.outcome !== "unknown" || i >= maxTries) throw error;
      if (await applied()) return;
    }
  }
}

async function listAll<T>(
  client: GitHubClient,
  operation: string,
  route: string,
  params: Record<string, unknown>,
): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; ; page++) {
    const res = await client.send<T[]>({
      operation,
      route,
      params: { ...params, per_page: 100, page },
      idempotent: true,
    });
    out.push(...res.data);
    if (!/rel="next"/.test(res.headers.link ?? "")) return out;
  }
}

/** Makes `child` a sub-issue of `parent` (GitHub needs the child's issue id, not its number). */
export async function addSubIssue(
  client: GitHubClient,
  repo: string,
  parent: IssueTarget,
  child: IssueTarget,
  opts: { replaceParent?: boolean; childId?: number } = {},
): Promise<void> {
  const p = locate(repo, parent);
  const c = locate(repo, child);
  // The id is one extra read unless the caller (who saw it in a webhook) passes it.
  const childIssue =
    opts.childId === undefined ? await getIssue(client, repo, child) : { id: opts.childId };
  const parentPath = `/repos/${p.owner}/${p.repo}/issues/${p.number}`.toLowerCase();
  await verifiedWrite(
    () =>
      client
        .send({
          operation: `add ${c.label} as a sub-issue of ${p.label}`,
          route: "POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues",
          params: {
            owner: p.owner,
            repo: p.repo,
            issue_number: p.number,
            sub_issue_id: childIssue.id,
            ...(opts.replaceParent ? { replace_parent: true } : {}),
          },
          idempotent: false,
        })
        .then(() => undefined),
    async () =>
      (await getIssue(client, repo, child)).parent_issue_url?.toLowerCase().endsWith(parentPath) ===
      true,
  );
}

/** Removes a sub-issue link; a link that is not there is already the wanted state. */
export async function removeSubIssue(
  client: GitHubClient,
  repo: string,
  parent: IssueTarget,
  child: IssueTarget,
): Promise<{ removed: boolean }> {
  const p = locate(repo, parent);
  const c = locate(repo, child);
  const childIssue = await getIssue(client, repo, child);
  try {
    await client.send({
      operation: `remove sub-issue ${c.label} from ${p.label}`,
      route: "DELETE /repos/{owner}/{repo}/issues/{issue_number}/sub_issue",
      params: { owner: p.owner, repo: p.repo, issue_number: p.number, sub_issue_id: childIssue.id },
      idempotent: true,
    });
    return { removed: true };
  } catch (error) {
    if (!(error instanceof GitHubApiError) || error.status !== 404) throw error;
    const parentPath = `/repos/${p.owner}/${p.repo}/issues/${p.number}`.toLowerCase();
    const now = await getIssue(client, repo, child);
    if (now.parent_issue_url?.toLowerCase().endsWith(parentPath)) throw error;
    await getIssue(client, repo, parent); // a missing parent is a real failure, not "absent link"
    return { removed: false };
  }
}

/** Records that `issue` is blocked by `blocker` (by the blocker's issue id, as GitHub needs). */
export async function addBlockedBy(
  client: GitHubClient,
  repo: string,
  issue: IssueTarget,
  blocker: IssueTarget,
  opts: { blockerId?: number } = {},
): Promise<void> {
  const t = locate(repo, issue);
  const b = locate(repo, blocker);
  const blockerIssue =
    opts.blockerId === undefined ? await getIssue(client, repo, blocker) : { id: opts.blockerId };
  const isLinked = async () =>
    (
      await listAll<{ id: number }>(
        client,
        `list blockers of ${t.label}`,
        "GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by",
        { owner: t.owner, repo: t.repo, issue_number: t.number },
      )
    ).some((x) => x.id === blockerIssue.id);
  await verifiedWrite(
    () =>
      client
        .send({
          operation: `mark ${t.label} as blocked by ${b.label}`,
          route: "POST /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by",
          params: {
            owner: t.owner,
            repo: t.repo,
            issue_number: t.number,
            issue_id: blockerIssue.id,
          },
          idempotent: false,
        })
        .then(() => undefined),
    isLinked,
  );
}

/** Removes a blocked-by link; a link that is not there is already the wanted state. */
export async function removeBlockedBy(
  client: GitHubClient,
  repo: string,
  issue: IssueTarget,
  blocker: IssueTarget,
): Promise<{ removed: boolean }> {
  const t = locate(repo, issue);
  const b = locate(repo, blocker);
  const blockerIssue = await getIssue(client, repo, blocker);
  try {
    await client.send({
      operation: `remove blocker ${b.label} from ${t.label}`,
      route:
        "DELETE /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}",
      params: { owner: t.owner, repo: t.repo, issue_number: t.number, issue_id: blockerIssue.id },
      idempotent: true,
    });
    return { removed: true };
  } catch (error) {
    if (!(error instanceof GitHubApiError) || error.status !== 404) throw error;
    const blockers = await listAll<{ id: number }>(
      client,
      `list blockers of ${t.label}`,
      "GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by",
      { owner: t.owner, repo: t.repo, issue_number: t.number },
    );
    if (blockers.some((x) => x.id === blockerIssue.id)) throw error;
    return { removed: false };
  }
}
