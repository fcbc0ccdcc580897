// Reading the default branch's CI over REST (the circuit breaker's re-read, spec 6.4): its head
// commit, the latest check run of each check, the latest status of each context and the latest
// run of each workflow. A lost webhook heals here. A read the installation may not make (a 403:
// no `checks`, `statuses` or `actions` permission) is reported as missing, never as green.
import { z } from "zod";
import { checkRunRecord, statusRecord, workflowRunRecord } from "../breaker/facts.ts";
import type { CheckRecord } from "../breaker/verdict.ts";
import type { GitHubClient } from "./client.ts";
import { GitHubApiError } from "./errors.ts";
import { splitRepo } from "./fetch-snapshot.ts";

/** The installation permissions the breaker reads with, by what they read. */
export const CI_PERMISSIONS = {
  contents: "contents: read",
  checks: "checks: read",
  statuses: "statuses: read",
  actions: "actions: read",
} as const;
export type CiPermission = keyof typeof CI_PERMISSIONS;

export interface CiRead {
  defaultBranch: string;
  /** The branch's head commit; null when the branch has no commit yet. */
  head: string | null;
  reports: CheckRecord[];
  /** Permissions whose reads GitHub refused (403): what the breaker cannot see. */
  missing: CiPermission[];
  requests: number;
}

const RepoSchema = z.object({ default_branch: z.string().min(1) });
const BranchSchema = z.object({ commit: z.object({ sha: z.string().min(1) }) });
const CheckRunsSchema = z.object({
  total_count: z.number().int(),
  check_runs: z.array(
    z.object({
      id: z.number().int(),
      name: z.string(),
      status: z.string(),
      conclusion: z.string().nullable(),
      html_url: z.string().nullable().optional(),
      details_url: z.string().nullable().optional(),
      app: z.object({ id: z.number().int() }).nullable().optional(),
    }),
  ),
});
const CombinedStatusSchema = z.object({
  statuses: z.array(
    z.object({
      id: z.number().int(),
      context: z.string(),
      state: z.enum(["error", "failure", "pending", "success"]),
      target_url: z.string().nullable().optional(),
    }),
  ),
});
const WorkflowRunsSchema = z.object({
  workflow_runs: z.array(
    z.object({
      id: z.number().int(),
      name: z.string().nullable().optional(),
      workflow_id: z.number().int(),
      status: z.string().nullable(),
      conclusion: z.string().nullable(),
      html_url: z.string(),
      run_attempt: z.number().int().positive().optional(),
    }),
  ),
});

const PAGE = 100;
/** A repository with more checks on one commit than this is read in part (the newest). */
const MAX_PAGES = 10;

/** Whether a failed read means the installation lacks the permission (not a rate limit). */
function forbidden(error: unknown): boolean {
  return error instanceof GitHubApiError && error.kind === "forbidden";
}

/**
 * Reads the default branch's head and its checks. `defaultBranch` when known (else one more
 * request asks for the repository). Transient failures throw (the schedule retries).
 */
export async function readDefaultBranchCi(
  client: GitHubClient,
  repo: string,
  defaultBranch: string | null,
): Promise<CiRead> {
  const { owner, name } = splitRepo(repo);
  let requests = 0;
  const get = async <T>(
    schema: z.ZodType<T>,
    route: string,
    params: Record<string, unknown>,
    what: string,
  ) => {
    requests += 1;
    const res = await client.send<unknown>({
      operation: `read ${what} of ${repo}`,
      route,
      params: { owner, repo: name, ...params },
      idempotent: true,
    });
    const parsed = schema.safeParse(res.data);
    if (!parsed.success) {
      throw new GitHubApiError({
        kind: "bad-response",
        operation: `read ${what} of ${repo}`,
        request: route,
        status: res.status,
        attempts: 1,
        reason: parsed.error.issues[0]?.message ?? "unexpected answer",
      });
    }
    return { data: parsed.data, link: res.headers.link ?? "" };
  };

  const branch =
    defaultBranch ??
    (await get(RepoSchema, "GET /repos/{owner}/{repo}", {}, "the repository")).data.default_branch;
  let head: string | null;
  try {
    head = (
      await get(
        BranchSchema,
        "GET /repos/{owner}/{repo}/branches/{branch}",
        { branch },
        `branch ${branch}`,
      )
    ).data.commit.sha;
  } catch (error) {
    if (error instanceof GitHubApiError && error.kind === "not-found") {
      return { defaultBranch: branch, head: null, reports: [], missing: [], requests };
    }
    if (forbidden(error)) {
      return { defaultBranch: branch, head: null, reports: [], missing: ["contents"], requests };
    }
    throw error;
  }

  const reports: CheckRecord[] = [];
  const missing: CiPermission[] = [];
  const guarded = async (permission: CiPermission, read: () => Promise<void>) => {
    try {
      await read();
    } catch (error) {
      if (!forbidden(error)) throw error;
      missing.push(permission);
    }
  };

  await guarded("checks", async () => {
    for (let page = 1; page <= MAX_PAGES; page++) {
      const { data, link } = await get(
        CheckRunsSchema,
        "GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
        { ref: head, filter: "latest", per_page: PAGE, page },
        `the check runs of ${head}`,
      );
      for (const run of data.check_runs) {
        reports.push(checkRunRecord(run));
      }
      if (data.check_runs.length < PAGE || !/rel="next"/.test(link)) break;
    }
  });

  await guarded("statuses", async () => {
    for (let page = 1; page <= MAX_PAGES; page++) {
      const { data, link } = await get(
        CombinedStatusSchema,
        "GET /repos/{owner}/{repo}/commits/{ref}/status",
        { ref: head, per_page: PAGE, page },
        `the commit statuses of ${head}`,
      );
      for (const s of data.statuses) {
        reports.push(statusRecord(s));
      }
      if (data.statuses.length < PAGE || !/rel="next"/.test(link)) break;
    }
  });

  await guarded("actions", async () => {
    const { data } = await get(
      WorkflowRunsSchema,
      "GET /repos/{owner}/{repo}/actions/runs",
      { head_sha: head, branch, per_page: PAGE },
      `the workflow runs of ${head}`,
    );
    for (const run of data.workflow_runs) {
      reports.push(workflowRunRecord(run));
    }
  });

  return { defaultBranch: branch, head, reports, missing, requests };
}
