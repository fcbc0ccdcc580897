// `fetch-snapshot --comments`: adds to a snapshot what the reply rules read (spec 3.1): each open
// issue's body, the body's author and its comments, each author with its `author_association`.
// REST, in the shapes the rest of the client already reads (`author_association`, `user.type`):
// the open issues a page of 100 (their authors, bodies and comment counts), then the comments of
// the issues that have any, 100 a page. An offline tool's opt-in, one request per commented
// issue; the Worker keeps reply state its own way.

import { parseSnapshot, type Snapshot, type SnapshotAuthor } from "../graph/snapshot.ts";
import type { GitHubClient } from "./client.ts";
import { fetchIssueComments } from "./comments.ts";
import { splitRepo } from "./fetch-snapshot.ts";

interface RestUser {
  login: string;
  type?: string;
}

interface RestOpenIssue {
  number: number;
  body?: string | null;
  user: RestUser | null;
  author_association?: string | null;
  comments: number;
  /** Present on pull requests, which the issues list includes. */
  pull_request?: unknown;
}

function authorOf(user: RestUser | null, association: string | null | undefined): SnapshotAuthor {
  // A deleted account shows as null; GitHub names it `ghost`.
  const out: SnapshotAuthor = { login: user?.login ?? "ghost", type: user?.type ?? "User" };
  if (association) out.association = association;
  return out;
}

async function openIssues(client: GitHubClient, repo: string): Promise<Map<number, RestOpenIssue>> {
  const { owner, name } = splitRepo(repo);
  const out = new Map<number, RestOpenIssue>();
  for (let page = 1; ; page++) {
    const res = await client.send<RestOpenIssue[]>({
      operation: `list the open issues of ${repo} (page ${page})`,
      route: "GET /repos/{owner}/{repo}/issues",
      params: { owner, repo: name, state: "open", per_page: 100, page },
      idempotent: true,
    });
    for (const issue of res.data)
      if (issue.pull_request === undefined) out.set(issue.number, issue);
    if (res.data.length < 100 || !/rel="next"/.test(res.headers.link ?? "")) return out;
  }
}

/** The snapshot with `body`, `author` and `comments` on each open issue GitHub lists as open. */
export async function withComments(client: GitHubClient, snapshot: Snapshot): Promise<Snapshot> {
  const open = await openIssues(client, snapshot.repo);
  const issues = [];
  for (const issue of snapshot.issues) {
    const rest = issue.state === "open" ? open.get(issue.number) : undefined;
    if (rest === undefined) {
      issues.push(issue);
      continue;
    }
    const comments =
      rest.comments === 0 ? [] : await fetchIssueComments(client, snapshot.repo, issue.number);
    issues.push({
      ...issue,
      body: rest.body ?? null,
      author: authorOf(rest.user, rest.author_association),
      comments: comments.map((c) => ({
        author: authorOf(c.user, c.author_association),
        body: c.body ?? "",
        createdAt: c.created_at,
        url:
          c.html_url ??
          `https://github.com/${snapshot.repo}/issues/${issue.number}#issuecomment-${c.id}`,
      })),
    });
  }
  // The output is a promise to every consumer: check it like untrusted input.
  return parseSnapshot({ ...snapshot, issues });
}
