import type { GitHubClient } from "./client.ts";
import { GitHubApiError } from "./errors.ts";
import { splitRepo } from "./fetch-snapshot.ts";

/**
 * A user's permission on a repository (`admin`, `write`, `read` or `none`, as GitHub's
 * collaborator permission endpoint answers with the App's token). A login GitHub does not know
 * has `none`.
 */
export async function collaboratorPermission(
  client: GitHubClient,
  repo: string,
  login: string,
): Promise<string> {
  const { owner, name } = splitRepo(repo);
  try {
    const res = await client.send<{ permission: string }>({
      operation: `read ${login}'s permission on ${repo}`,
      route: "GET /repos/{owner}/{repo}/collaborators/{username}/permission",
      params: { owner, repo: name, username: login },
      idempotent: true,
    });
    return res.data.permission;
  } catch (error) {
    if (error instanceof GitHubApiError && error.status === 404) return "none";
    throw error;
  }
}
