// An issue's comments by REST (`GET /repos/{o}/{r}/issues/{n}/comments`, 100 a page): what a full
// reconcile re-reads for the issues whose IDD claims matter, so a missed `issue_comment` webhook
// cannot hide a claim marker. Counted apart from the full graph fetch (see bench/github-economy.ts).

import type { GitHubClient } from "./client.ts";
import { splitRepo } from "./fetch-snapshot.ts";

/** The fields of GitHub's issue comment that switchyard reads. */
export interface RestComment {
  id: number;
  body?: string | null;
  user: { login: string; type?: string } | null;
  author_association?: string | null;
  created_at: string;
  updated_at: string;
  /** The comment's page address (`...#issuecomment-<id>`). */
  html_url?: string;
}

/** Every comment of issue `number`, oldest first, following the `Link` header's `next`. */
export async function fetchIssueComments(
  client: GitHubClient,
  repo: string,
  number: number,
): Promise<RestComment[]> {
  const { owner, name } = splitRepo(repo);
  const out: RestComment[] = [];
  for (let page = 1; ; page++) {
    const res = await client.send<RestComment[]>({
      operation: `read the comments of ${repo}#${number}`,
      route: "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
      params: { owner, repo: name, issue_number: number, per_page: 100, page },
      idempotent: true,
    });
    out.push(...res.data);
    if (res.data.length < 100 || !/rel="next"/.test(res.headers.link ?? "")) return out;
  }
}
