// JSON shapes of CI on the default branch, as GitHub renders them in REST answers and webhook
// payloads: check runs and suites, commit statuses, workflow runs, commits and the branch.
// The contract tests validate each against GitHub's published OpenAPI description.
import {
  accountId,
  DEFAULT_BRANCH,
  fullName,
  nodeId,
  type SimCheckApp,
  type SimCheckRun,
  type SimCheckSuite,
  type SimCommit,
  type SimRepo,
  type SimStatus,
  type SimWorkflow,
  type SimWorkflowRun,
  type StatusState,
} from "./model.ts";
import { renderRepo, renderUser } from "./render.ts";

/** When the CI Apps were made: fixed, as GitHub's own Apps' dates are. */
const APP_CREATED_AT = "2018-07-30T09:30:17Z";

function noreply(login: string): string {
  return `${accountId(login)}+${login}@users.noreply.github.com`;
}

function api(base: string, repo: SimRepo): string {
  return `${base}/repos/${fullName(repo)}`;
}

/** The App of a suite or run (GitHub's `integration`). */
export function renderCheckApp(base: string, app: SimCheckApp) {
  return {
    id: app.id,
    slug: app.slug,
    node_id: nodeId("A", app.id),
    client_id: `Iv1.${app.slug}`,
    owner: renderUser(base, app.owner, "Organization"),
    name: app.name,
    description: null,
    external_url: `${base}/apps/${app.slug}`,
    html_url: `${base}/apps/${app.slug}`,
    created_at: APP_CREATED_AT,
    updated_at: APP_CREATED_AT,
    permissions: { ...app.permissions },
    events: [...app.events],
  };
}

/** A commit in the short form of check suites and workflow runs (`simple-commit`). */
function simpleCommit(commit: SimCommit) {
  return {
    id: commit.id,
    tree_id: commit.treeId,
    message: commit.message,
    timestamp: commit.timestamp,
    author: { name: commit.author, email: noreply(commit.author) },
    committer: { name: "GitHub", email: "noreply@github.com" },
  };
}

function checkRunUrls(base: string, repo: SimRepo, run: SimCheckRun) {
  const url = `${api(base, repo)}/check-runs/${run.id}`;
  const html = `${base}/${fullName(repo)}/runs/${run.id}`;
  return { url, html };
}

function checkRunFields(base: string, repo: SimRepo, run: SimCheckRun, app: SimCheckApp) {
  const { url, html } = checkRunUrls(base, repo, run);
  return {
    id: run.id,
    head_sha: run.headSha,
    node_id: run.nodeId,
    external_id: "",
    url,
    html_url: html,
    details_url: run.detailsUrl ?? html,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.startedAt,
    completed_at: run.completedAt,
    output: {
      title: run.title,
      summary: run.summary,
      text: null,
      annotations_count: 0,
      annotations_url: `${url}/annotations`,
    },
    name: run.name,
    app: renderCheckApp(base, app),
    pull_requests: [],
  };
}

/** `GET .../check-runs`: a check run with its suite's id. */
export function renderCheckRun(
  base: string,
  repo: SimRepo,
  run: SimCheckRun,
  suite: SimCheckSuite,
) {
  return { ...checkRunFields(base, repo, run, suite.app), check_suite: { id: suite.id } };
}

function suiteFields(base: string, repo: SimRepo, suite: SimCheckSuite, commit: SimCommit) {
  const url = `${api(base, repo)}/check-suites/${suite.id}`;
  return {
    id: suite.id,
    node_id: suite.nodeId,
    head_branch: DEFAULT_BRANCH,
    head_sha: suite.headSha,
    status: suite.status,
    conclusion: suite.conclusion,
    url,
    before: commit.parents[0] ?? "0000000000000000000000000000000000000000",
    after: suite.headSha,
    pull_requests: [],
    app: renderCheckApp(base, suite.app),
    created_at: suite.createdAt,
    updated_at: suite.updatedAt,
  };
}

/** A `check_run` webhook's run: the run with its (simple) suite. */
export function renderCheckRunHook(
  base: string,
  repo: SimRepo,
  run: SimCheckRun,
  suite: SimCheckSuite,
) {
  const commit = repo.commits.get(suite.headSha);
  const fields = commit ? suiteFields(base, repo, suite, commit) : { id: suite.id };
  return { ...checkRunFields(base, repo, run, suite.app), check_suite: fields };
}

/** `GET .../check-suites`: a suite with its repository, head commit and run count. */
export function renderCheckSuite(
  base: string,
  repo: SimRepo,
  suite: SimCheckSuite,
  commit: SimCommit,
  latestRuns: number,
) {
  const fields = suiteFields(base, repo, suite, commit);
  return {
    ...fields,
    repository: renderRepo(base, repo),
    head_commit: simpleCommit(commit),
    latest_check_runs_count: latestRuns,
    check_runs_url: `${fields.url}/check-runs`,
    rerequestable: true,
    runs_rerequestable: true,
  };
}

/** A `check_suite` webhook's suite (the repository is the payload's own). */
export function renderCheckSuiteHook(
  base: string,
  repo: SimRepo,
  suite: SimCheckSuite,
  commit: SimCommit,
  latestRuns: number,
) {
  const { repository: _, ...rest } = renderCheckSuite(base, repo, suite, commit, latestRuns);
  return rest;
}

/** A commit as `GET .../commits/{ref}` and a branch answer it (no diff: `files` is empty). */
export function renderCommit(base: string, repo: SimRepo, commit: SimCommit) {
  const url = `${api(base, repo)}/commits/${commit.id}`;
  const gitUser = (name: string, email: string) => ({ name, email, date: commit.timestamp });
  return {
    sha: commit.id,
    node_id: nodeId("C", accountId(commit.id)),
    url,
    html_url: `${base}/${fullName(repo)}/commit/${commit.id}`,
    comments_url: `${url}/comments`,
    commit: {
      url: `${api(base, repo)}/git/commits/${commit.id}`,
      author: gitUser(commit.author, noreply(commit.author)),
      // Commits made on github.com are committed by GitHub itself ("web-flow").
      committer: gitUser("GitHub", "noreply@github.com"),
      message: commit.message,
      tree: { sha: commit.treeId, url: `${api(base, repo)}/git/trees/${commit.treeId}` },
      comment_count: 0,
      verification: {
        verified: false,
        reason: "unsigned",
        signature: null,
        payload: null,
        verified_at: null,
      },
    },
    author: renderUser(base, commit.author),
    committer: renderUser(base, "web-flow"),
    parents: commit.parents.map((sha) => ({
      sha,
      url: `${api(base, repo)}/commits/${sha}`,
      html_url: `${base}/${fullName(repo)}/commit/${sha}`,
    })),
    stats: { additions: 0, deletions: 0, total: 0 },
    files: [],
  };
}

/** `GET .../branches/main`: the default branch, unprotected. */
export function renderBranch(base: string, repo: SimRepo, head: SimCommit) {
  const url = `${api(base, repo)}/branches/${DEFAULT_BRANCH}`;
  return {
    name: DEFAULT_BRANCH,
    commit: renderCommit(base, repo, head),
    _links: { self: url, html: `${base}/${fullName(repo)}/tree/${DEFAULT_BRANCH}` },
    protected: false,
    protection: {
      enabled: false,
      required_status_checks: { enforcement_level: "off", contexts: [], checks: [] },
    },
    protection_url: `${url}/protection`,
  };
}

function statusUrl(base: string, repo: SimRepo, sha: string) {
  return `${api(base, repo)}/statuses/${sha}`;
}

/** `GET .../commits/{ref}/statuses`: one status with its creator. */
export function renderStatus(base: string, repo: SimRepo, status: SimStatus) {
  return {
    url: statusUrl(base, repo, status.sha),
    avatar_url: null,
    id: status.id,
    node_id: status.nodeId,
    state: status.state,
    description: status.description,
    target_url: status.targetUrl,
    context: status.context,
    created_at: status.createdAt,
    updated_at: status.updatedAt,
    creator: renderUser(base, status.creator, status.creator.endsWith("[bot]") ? "Bot" : "User"),
  };
}

/**
 * The combined state of a commit's statuses (the newest per context): `failure` if one is
 * `error` or `failure`, else `pending` if one is pending or there are none, else `success`.
 */
export function combinedState(latest: SimStatus[]): StatusState {
  if (latest.some((s) => s.state === "error" || s.state === "failure")) return "failure";
  if (latest.length === 0 || latest.some((s) => s.state === "pending")) return "pending";
  return "success";
}

/** `GET .../commits/{ref}/status`. */
export function renderCombinedStatus(
  base: string,
  repo: SimRepo,
  sha: string,
  latest: SimStatus[],
) {
  return {
    state: combinedState(latest),
    statuses: latest.map((s) => ({
      id: s.id,
      node_id: s.nodeId,
      state: s.state,
      description: s.description,
      target_url: s.targetUrl,
      context: s.context,
      avatar_url: null,
      required: null,
      url: statusUrl(base, repo, s.sha),
      created_at: s.createdAt,
      updated_at: s.updatedAt,
    })),
    sha,
    total_count: latest.length,
    repository: renderRepo(base, repo),
    commit_url: `${api(base, repo)}/commits/${sha}`,
    url: `${api(base, repo)}/commits/${sha}/status`,
  };
}

/** A `status` webhook's payload fields (the status is the payload itself). */
export function renderStatusHook(
  base: string,
  repo: SimRepo,
  status: SimStatus,
  commit: SimCommit,
) {
  return {
    id: status.id,
    sha: status.sha,
    name: fullName(repo),
    target_url: status.targetUrl,
    avatar_url: null,
    context: status.context,
    description: status.description,
    state: status.state,
    commit: renderCommit(base, repo, commit),
    branches: [
      {
        name: DEFAULT_BRANCH,
        commit: { sha: repo.head, url: `${api(base, repo)}/commits/${repo.head}` },
        protected: false,
      },
    ],
    created_at: status.createdAt,
    updated_at: status.updatedAt,
  };
}

export function renderWorkflow(base: string, repo: SimRepo, wf: SimWorkflow) {
  return {
    id: wf.id,
    node_id: wf.nodeId,
    name: wf.name,
    path: wf.path,
    state: "active",
    created_at: wf.createdAt,
    updated_at: wf.createdAt,
    url: `${api(base, repo)}/actions/workflows/${wf.id}`,
    html_url: `${base}/${fullName(repo)}/blob/${DEFAULT_BRANCH}/${wf.path}`,
    badge_url: `${base}/${fullName(repo)}/workflows/${encodeURIComponent(wf.name)}/badge.svg`,
  };
}

/** A workflow run, as `GET .../actions/runs` and `workflow_run` webhooks render it. */
export function renderWorkflowRun(
  base: string,
  repo: SimRepo,
  run: SimWorkflowRun,
  wf: SimWorkflow,
  commit: SimCommit,
) {
  const url = `${api(base, repo)}/actions/runs/${run.id}`;
  const actor = renderUser(base, run.actor, run.actor.endsWith("[bot]") ? "Bot" : "User");
  return {
    id: run.id,
    name: wf.name,
    node_id: run.nodeId,
    check_suite_id: run.suiteId,
    check_suite_node_id: nodeId("CS", run.suiteId),
    head_branch: DEFAULT_BRANCH,
    head_sha: run.headSha,
    path: wf.path,
    display_title: commit.message.split("\n")[0] ?? "",
    run_number: run.runNumber,
    event: run.event,
    status: run.status,
    conclusion: run.conclusion,
    workflow_id: wf.id,
    url,
    html_url: `${base}/${fullName(repo)}/actions/runs/${run.id}`,
    pull_requests: [],
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    actor,
    triggering_actor: actor,
    run_attempt: 1,
    referenced_workflows: [],
    run_started_at: run.createdAt,
    jobs_url: `${url}/jobs`,
    logs_url: `${url}/logs`,
    check_suite_url: `${api(base, repo)}/check-suites/${run.suiteId}`,
    artifacts_url: `${url}/artifacts`,
    cancel_url: `${url}/cancel`,
    rerun_url: `${url}/rerun`,
    previous_attempt_url: null,
    workflow_url: `${api(base, repo)}/actions/workflows/${wf.id}`,
    head_commit: simpleCommit(commit),
    repository: renderRepo(base, repo),
    head_repository: renderRepo(base, repo),
  };
}
