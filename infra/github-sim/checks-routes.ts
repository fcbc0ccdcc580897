// CI over HTTP. REST reads of the default branch and its commits' checks, statuses and
// workflow runs (each needs its installation permission: `contents`, `checks`, `statuses`,
// `actions`), and the control API a test drives CI with (every change announced as GitHub
// announces it, see checks.ts).
import type { Context } from "hono";
import { z } from "zod";
import type { ApiRequest, GitHubSimulator } from "./app.ts";
import {
  combinedState,
  renderBranch,
  renderCheckRun,
  renderCheckSuite,
  renderCombinedStatus,
  renderCommit,
  renderStatus,
  renderWorkflowRun,
} from "./checks-render.ts";
import { commitFor, ensureHead } from "./contents.ts";
import { input } from "./control.ts";
import { SimHttpError } from "./errors.ts";
import {
  CHECK_RUN_CONCLUSIONS,
  ciApp,
  DEFAULT_BRANCH,
  GITHUB_ACTIONS,
  RUN_CONCLUSIONS,
  type SimCheckApp,
  type SimCommit,
  type SimRepo,
  type SimStatus,
  STATUS_STATES,
} from "./model.ts";
import { requirePermission } from "./permissions.ts";
import { APP_EVENTS, APP_PERMISSIONS } from "./render.ts";
import { addressedRepo, paginate } from "./rest.ts";

const Actor = z.string().min(1);
const Pending = z.enum(["queued", "in_progress"]);

/** The newest status of each context, newest first (what the combined status is made of). */
export function latestStatuses(statuses: SimStatus[]): SimStatus[] {
  const seen = new Set<string>();
  const out: SimStatus[] = [];
  for (const s of [...statuses].reverse()) {
    if (seen.has(s.context)) continue;
    seen.add(s.context);
    out.push(s);
  }
  return out;
}

export function registerCheckRoutes(sim: GitHubSimulator): void {
  const { app, state } = sim;
  const { ci } = state;

  /** The App a control request names: GitHub Actions by default, the simulated App by its slug. */
  const appNamed = (slug: string | undefined): { app: SimCheckApp; ownApp: boolean } => {
    if (slug === undefined || slug === GITHUB_ACTIONS.slug)
      return { app: GITHUB_ACTIONS, ownApp: false };
    if (slug === sim.appSlug) {
      const own: SimCheckApp = {
        id: sim.appId,
        slug: sim.appSlug,
        name: sim.appSlug,
        owner: "switchyard-dev",
        permissions: { ...APP_PERMISSIONS },
        events: [...APP_EVENTS],
      };
      return { app: own, ownApp: true };
    }
    return { app: ciApp(slug), ownApp: false };
  };

  // --- REST ----------------------------------------------------------------------------------

  /** The readable repository and the commit `{ref}` names (422 for an unknown one). */
  const commitOf = (req: ApiRequest, permission: string): { repo: SimRepo; commit: SimCommit } => {
    const repo = addressedRepo(sim, req);
    requirePermission(state, req.identity, permission);
    const ref = req.params.ref!;
    const commit = commitFor(repo, ref);
    if (!commit) throw new SimHttpError(422, `No commit found for SHA: ${ref}`);
    return { repo, commit };
  };

  sim.api("GET", "/repos/{owner}/{repo}/branches/{branch}", "token", "core", (req) => {
    const repo = addressedRepo(sim, req);
    requirePermission(state, req.identity, "contents");
    const head = repo.head === null ? undefined : repo.commits.get(repo.head);
    if (req.params.branch !== DEFAULT_BRANCH || !head)
      throw new SimHttpError(404, "Branch not found");
    return { status: 200, body: renderBranch(req.base, repo, head) };
  });

  sim.api("GET", "/repos/{owner}/{repo}/commits/{ref}", "token", "core", (req) => {
    const { repo, commit } = commitOf(req, "contents");
    return { status: 200, body: renderCommit(req.base, repo, commit) };
  });

  sim.api("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs", "token", "core", (req) => {
    const { repo, commit } = commitOf(req, "checks");
    const name = req.query.get("check_name");
    const status = req.query.get("status");
    const appId = req.query.get("app_id");
    let runs = ci
      .runsOf(repo, commit.id)
      .map((run) => ({ run, suite: ci.suites.get(run.suiteId)! }));
    if (appId !== null) runs = runs.filter((r) => String(r.suite.app.id) === appId);
    // `latest` (the default): only the newest run of each check (App and name), as a re-run replaces it.
    if (req.query.get("filter") !== "all") {
      const newest = new Map<string, number>();
      for (const r of runs) newest.set(`${r.suite.app.id}:${r.run.name}`, r.run.id);
      runs = runs.filter((r) => newest.get(`${r.suite.app.id}:${r.run.name}`) === r.run.id);
    }
    if (name !== null) runs = runs.filter((r) => r.run.name === name);
    if (status !== null) runs = runs.filter((r) => r.run.status === status);
    const { page, headers } = paginate(req, runs);
    return {
      status: 200,
      body: {
        total_count: runs.length,
        check_runs: page.map((r) => renderCheckRun(req.base, repo, r.run, r.suite)),
      },
      headers,
    };
  });

  sim.api("GET", "/repos/{owner}/{repo}/commits/{ref}/check-suites", "token", "core", (req) => {
    const { repo, commit } = commitOf(req, "checks");
    const appId = req.query.get("app_id");
    const name = req.query.get("check_name");
    let suites = ci.suitesOf(repo, commit.id);
    if (appId !== null) suites = suites.filter((s) => String(s.app.id) === appId);
    if (name !== null)
      suites = suites.filter((s) => ci.runsOfSuite(s).some((r) => r.name === name));
    const { page, headers } = paginate(req, suites);
    return {
      status: 200,
      body: {
        total_count: suites.length,
        check_suites: page.map((s) =>
          renderCheckSuite(req.base, repo, s, commit, ci.latestRuns(s).length),
        ),
      },
      headers,
    };
  });

  sim.api("GET", "/repos/{owner}/{repo}/commits/{ref}/status", "token", "core", (req) => {
    const repo = addressedRepo(sim, req);
    requirePermission(state, req.identity, "statuses");
    const commit = commitFor(repo, req.params.ref!);
    // This one answers 404 for a ref that names no commit (documented for it).
    if (!commit) throw new SimHttpError(404, `No commit found for SHA: ${req.params.ref}`);
    const latest = latestStatuses(ci.statusesOf(repo, commit.id));
    return { status: 200, body: renderCombinedStatus(req.base, repo, commit.id, latest) };
  });

  sim.api("GET", "/repos/{owner}/{repo}/commits/{ref}/statuses", "token", "core", (req) => {
    const { repo, commit } = commitOf(req, "statuses");
    const newestFirst = [...ci.statusesOf(repo, commit.id)].reverse();
    const { page, headers } = paginate(req, newestFirst);
    return { status: 200, body: page.map((s) => renderStatus(req.base, repo, s)), headers };
  });

  sim.api("GET", "/repos/{owner}/{repo}/actions/runs", "token", "core", (req) => {
    const repo = addressedRepo(sim, req);
    requirePermission(state, req.identity, "actions");
    const q = (k: string) => req.query.get(k);
    let runs = [...ci.workflowRuns.values()].filter((r) => r.repoId === repo.id);
    if (q("branch") !== null && q("branch") !== DEFAULT_BRANCH) runs = [];
    if (q("head_sha") !== null) runs = runs.filter((r) => r.headSha === q("head_sha"));
    if (q("event") !== null) runs = runs.filter((r) => r.event === q("event"));
    const status = q("status");
    if (status !== null) runs = runs.filter((r) => r.status === status || r.conclusion === status);
    runs.reverse(); // newest first, as GitHub lists them
    const { page, headers } = paginate(req, runs);
    const workflows = [...ci.workflows.values()];
    return {
      status: 200,
      body: {
        total_count: runs.length,
        workflow_runs: page.map((r) =>
          renderWorkflowRun(
            req.base,
            repo,
            r,
            workflows.find((w) => w.id === r.workflowId)!,
            repo.commits.get(r.headSha)!,
          ),
        ),
      },
      headers,
    };
  });

  // --- control API ---------------------------------------------------------------------------

  const repoOf = (c: Context) => state.requireRepo(c.req.param("owner")!, c.req.param("repo")!);
  /** `sha` (a commit id or a unique prefix), or the default branch's head (made if none). */
  const shaOf = async (repo: SimRepo, sha: string | undefined): Promise<string> => {
    if (sha === undefined) return (await ensureHead(state, repo)).id;
    const commit = commitFor(repo, sha);
    if (!commit)
      throw new SimHttpError(422, `control API: no commit ${sha} in ${repo.owner}/${repo.name}`);
    return commit.id;
  };
  const runView = (id: number) => {
    const run = ci.runs.get(id)!;
    const suite = ci.suites.get(run.suiteId)!;
    return {
      id: run.id,
      node_id: run.nodeId,
      name: run.name,
      head_sha: run.headSha,
      status: run.status,
      conclusion: run.conclusion,
      check_suite: { id: suite.id, status: suite.status, conclusion: suite.conclusion },
    };
  };

  app.post("/_sim/repos/:owner/:repo/check-runs", async (c) => {
    const body = await input(
      c,
      z.object({
        name: z.string().min(1),
        conclusion: z.enum(CHECK_RUN_CONCLUSIONS).nullable().default(null),
        status: Pending.default("in_progress"),
        sha: z.string().min(1).optional(),
        app: z.string().min(1).optional(),
        detailsUrl: z.url().optional(),
        title: z.string().optional(),
        summary: z.string().optional(),
      }),
    );
    const repo = repoOf(c);
    const run = ci.createRun(repo, {
      ...body,
      ...appNamed(body.app),
      sha: await shaOf(repo, body.sha),
    });
    return c.json(runView(run.id), 201);
  });

  app.patch("/_sim/repos/:owner/:repo/check-runs/:id", async (c) => {
    const body = await input(
      c,
      z.object({
        conclusion: z.enum(CHECK_RUN_CONCLUSIONS).optional(),
        status: Pending.optional(),
      }),
    );
    const repo = repoOf(c);
    const run = ci.updateRun(repo, ci.requireRun(repo, Number(c.req.param("id"))), body);
    return c.json(runView(run.id));
  });

  app.post("/_sim/repos/:owner/:repo/check-suites", async (c) => {
    const body = await input(
      c,
      z.object({ sha: z.string().min(1).optional(), app: z.string().min(1).optional() }),
    );
    const repo = repoOf(c);
    const { app: owner, ownApp } = appNamed(body.app);
    const suite = ci.createSuite(repo, await shaOf(repo, body.sha), owner, { ownApp });
    return c.json({ id: suite.id, node_id: suite.nodeId, head_sha: suite.headSha }, 201);
  });

  app.post("/_sim/repos/:owner/:repo/statuses", async (c) => {
    const body = await input(
      c,
      z.object({
        context: z.string().min(1).default("default"),
        state: z.enum(STATUS_STATES),
        sha: z.string().min(1).optional(),
        description: z.string().nullable().optional(),
        targetUrl: z.url().nullable().optional(),
        actor: Actor.default("octocat"),
      }),
    );
    const repo = repoOf(c);
    const status = ci.createStatus(repo, {
      ...body,
      sha: await shaOf(repo, body.sha),
      creator: body.actor,
    });
    const combined = combinedOf(repo, status.sha);
    return c.json(
      { id: status.id, sha: status.sha, context: status.context, state: status.state, combined },
      201,
    );
  });
  const combinedOf = (repo: SimRepo, sha: string) =>
    combinedState(latestStatuses(ci.statusesOf(repo, sha)));

  const workflowRunView = (id: number) => {
    const run = ci.workflowRuns.get(id)!;
    return {
      id: run.id,
      node_id: run.nodeId,
      head_sha: run.headSha,
      status: run.status,
      conclusion: run.conclusion,
      check_suite_id: run.suiteId,
    };
  };

  app.post("/_sim/repos/:owner/:repo/workflow-runs", async (c) => {
    const body = await input(
      c,
      z.object({
        name: z.string().min(1).default("CI"),
        conclusion: z.enum(RUN_CONCLUSIONS).nullable().default(null),
        status: Pending.default("in_progress"),
        sha: z.string().min(1).optional(),
        event: z.string().min(1).default("push"),
        actor: Actor.default("octocat"),
      }),
    );
    const repo = repoOf(c);
    const run = ci.createWorkflowRun(repo, { ...body, sha: await shaOf(repo, body.sha) });
    return c.json(workflowRunView(run.id), 201);
  });

  app.patch("/_sim/repos/:owner/:repo/workflow-runs/:id", async (c) => {
    const body = await input(
      c,
      z.object({ conclusion: z.enum(RUN_CONCLUSIONS).optional(), status: Pending.optional() }),
    );
    const repo = repoOf(c);
    const run = ci.requireWorkflowRun(repo, Number(c.req.param("id")));
    ci.updateWorkflowRun(repo, run, body);
    return c.json(workflowRunView(run.id));
  });
}
