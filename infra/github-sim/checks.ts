// CI on the default branch: check suites and check runs, commit statuses and GitHub Actions
// workflow runs, and the webhooks GitHub sends as they change (`check_suite`, `check_run`,
// `status`, `workflow_run`; delivered only to installations with the matching permission, see
// permissions.ts). Owned by SimState (`state.ci`) so a reset forgets it with everything else.

import {
  renderCheckRunHook,
  renderCheckSuiteHook,
  renderStatusHook,
  renderWorkflow,
  renderWorkflowRun,
} from "./checks-render.ts";
import { SimHttpError } from "./errors.ts";
import {
  type CheckRunConclusion,
  type CheckStatus,
  GITHUB_ACTIONS,
  nodeId,
  type RunConclusion,
  type SimCheckApp,
  type SimCheckRun,
  type SimCheckSuite,
  type SimRepo,
  type SimStatus,
  type SimWorkflow,
  type SimWorkflowRun,
  type StatusState,
  worstConclusion,
} from "./model.ts";
import type { SimState } from "./state.ts";

export class CiState {
  suites = new Map<number, SimCheckSuite>();
  runs = new Map<number, SimCheckRun>();
  statuses: SimStatus[] = [];
  workflows = new Map<string, SimWorkflow>();
  workflowRuns = new Map<number, SimWorkflowRun>();
  private readonly state: SimState;

  constructor(state: SimState) {
    this.state = state;
  }

  reset(): void {
    this.suites.clear();
    this.runs.clear();
    this.statuses = [];
    this.workflows.clear();
    this.workflowRuns.clear();
  }

  private requireCommit(repo: SimRepo, sha: string): void {
    if (!repo.commits.has(sha)) throw new SimHttpError(422, `No commit found for SHA: ${sha}`);
  }

  /** The suites of a commit, oldest first. */
  suitesOf(repo: SimRepo, sha: string): SimCheckSuite[] {
    return [...this.suites.values()].filter((s) => s.repoId === repo.id && s.headSha === sha);
  }

  runsOf(repo: SimRepo, sha: string): SimCheckRun[] {
    return [...this.runs.values()].filter((r) => r.repoId === repo.id && r.headSha === sha);
  }

  statusesOf(repo: SimRepo, sha: string): SimStatus[] {
    return this.statuses.filter((s) => s.repoId === repo.id && s.sha === sha);
  }

  runsOfSuite(suite: SimCheckSuite): SimCheckRun[] {
    return [...this.runs.values()].filter((r) => r.suiteId === suite.id);
  }

  /** A suite's runs that count: a re-run replaces its earlier run, so the newest of each name. */
  latestRuns(suite: SimCheckSuite): SimCheckRun[] {
    const newest = new Map<string, SimCheckRun>();
    for (const run of this.runsOfSuite(suite)) newest.set(run.name, run);
    return [...newest.values()];
  }

  requireRun(repo: SimRepo, id: number): SimCheckRun {
    const run = this.runs.get(id);
    if (!run || run.repoId !== repo.id) throw new SimHttpError(404, "Not Found");
    return run;
  }

  requireWorkflowRun(repo: SimRepo, id: number): SimWorkflowRun {
    const run = this.workflowRuns.get(id);
    if (!run || run.repoId !== repo.id) throw new SimHttpError(404, "Not Found");
    return run;
  }

  /**
   * A new check suite of `app` for the commit. GitHub sends `check_suite.requested` only to
   * the App that owns the suite, so `ownApp` (the simulated App's own suite) decides whether
   * the installation hears of it.
   */
  createSuite(
    repo: SimRepo,
    sha: string,
    app: SimCheckApp,
    opts: { ownApp: boolean; workflowRunId?: number },
  ): SimCheckSuite {
    this.requireCommit(repo, sha);
    const id = this.state.newId();
    const now = this.state.now();
    const suite: SimCheckSuite = {
      id,
      nodeId: nodeId("CS", id),
      repoId: repo.id,
      headSha: sha,
      app,
      status: "queued",
      conclusion: null,
      createdAt: now,
      updatedAt: now,
      workflowRunId: opts.workflowRunId ?? null,
    };
    this.suites.set(id, suite);
    if (opts.ownApp) this.emitSuite("requested", repo, suite, `${app.slug}[bot]`);
    return suite;
  }

  /** The suite a new run of `app` joins: the newest of that App for the commit, or a new one. */
  private suiteFor(repo: SimRepo, sha: string, app: SimCheckApp, ownApp: boolean): SimCheckSuite {
    const existing = this.suitesOf(repo, sha)
      .filter((s) => s.app.id === app.id)
      .at(-1);
    return existing ?? this.createSuite(repo, sha, app, { ownApp });
  }

  /**
   * Creates a check run (in progress, or queued, or completed with `conclusion`). Another run
   * of the same name on the same commit is a re-run: the newest one is the check's state.
   */
  createRun(
    repo: SimRepo,
    input: {
      sha: string;
      name: string;
      app: SimCheckApp;
      ownApp: boolean;
      status: Exclude<CheckStatus, "completed">;
      conclusion: CheckRunConclusion | null;
      detailsUrl?: string | null;
      title?: string | null;
      summary?: string | null;
    },
  ): SimCheckRun {
    this.requireCommit(repo, input.sha);
    const suite = this.suiteFor(repo, input.sha, input.app, input.ownApp);
    const id = this.state.newId();
    const now = this.state.now();
    const run: SimCheckRun = {
      id,
      nodeId: nodeId("CR", id),
      suiteId: suite.id,
      repoId: repo.id,
      headSha: input.sha,
      name: input.name,
      status: input.conclusion === null ? input.status : "completed",
      conclusion: input.conclusion,
      startedAt: now,
      completedAt: input.conclusion === null ? null : now,
      detailsUrl: input.detailsUrl ?? null,
      title: input.title ?? null,
      summary: input.summary ?? null,
    };
    this.runs.set(id, run);
    // A new run (a re-run, say) opens a completed suite again; it completes again with it.
    if (suite.status === "completed") suite.status = "queued";
    const sender = `${input.app.slug}[bot]`;
    this.emitRun("created", repo, run, suite, sender);
    // A run created already finished is announced as created, then completed (as GitHub does).
    if (run.status === "completed") this.emitRun("completed", repo, run, suite, sender);
    this.settleSuite(repo, suite, sender);
    return run;
  }

  /** Moves a run on: to in progress, or to completed with a conclusion. */
  updateRun(
    repo: SimRepo,
    run: SimCheckRun,
    change: { status?: Exclude<CheckStatus, "completed">; conclusion?: CheckRunConclusion },
  ): SimCheckRun {
    if (run.status === "completed")
      throw new SimHttpError(
        422,
        `check run ${run.id} is completed; create a new run to re-run it`,
      );
    const suite = this.suites.get(run.suiteId)!;
    const sender = `${suite.app.slug}[bot]`;
    if (change.conclusion !== undefined) {
      run.status = "completed";
      run.conclusion = change.conclusion;
      run.completedAt = this.state.now();
      this.emitRun("completed", repo, run, suite, sender);
    } else if (change.status !== undefined) {
      // GitHub announces only creation and completion of a run to Apps that do not own it.
      run.status = change.status;
    }
    this.settleSuite(repo, suite, sender);
    return run;
  }

  /**
   * Recomputes a suite from its runs (the newest of each name) and its workflow run: completed
   * once every one of them is, with the worst conclusion; announced (`check_suite.completed`) when it completes. A
   * suite that completed and gets a new run opens again and completes again later.
   */
  private settleSuite(repo: SimRepo, suite: SimCheckSuite, sender: string): void {
    const members: { status: CheckStatus; conclusion: RunConclusion | null }[] = [
      ...this.latestRuns(suite),
    ];
    const wr =
      suite.workflowRunId === null ? undefined : this.workflowRuns.get(suite.workflowRunId);
    if (wr) members.push(wr);
    if (members.length === 0) return;
    const done = members.every((m) => m.status === "completed");
    const before = suite.status;
    suite.status = done
      ? "completed"
      : members.some((m) => m.status === "in_progress")
        ? "in_progress"
        : "queued";
    suite.conclusion = done
      ? worstConclusion(members.map((m) => m.conclusion).filter((c) => c !== null))
      : null;
    suite.updatedAt = this.state.now();
    if (done && before !== "completed") this.emitSuite("completed", repo, suite, sender);
  }

  /** A commit status (`status` webhook); the newest per context is the context's state. */
  createStatus(
    repo: SimRepo,
    input: {
      sha: string;
      context: string;
      state: StatusState;
      description?: string | null;
      targetUrl?: string | null;
      creator: string;
    },
  ): SimStatus {
    this.requireCommit(repo, input.sha);
    const id = this.state.newId();
    const now = this.state.now();
    const status: SimStatus = {
      id,
      nodeId: nodeId("SC", id),
      repoId: repo.id,
      sha: input.sha,
      context: input.context,
      state: input.state,
      description: input.description ?? null,
      targetUrl: input.targetUrl ?? null,
      creator: input.creator,
      createdAt: now,
      updatedAt: now,
    };
    this.statuses.push(status);
    const commit = repo.commits.get(input.sha)!;
    this.state.onEvent({
      event: "status",
      action: "",
      repo,
      sender: input.creator,
      body: (base) => renderStatusHook(base, repo, status, commit),
    });
    return status;
  }

  /** The workflow of that name in the repository (`.github/workflows/<name>.yml`), made on first use. */
  workflow(repo: SimRepo, name: string): SimWorkflow {
    const key = `${repo.id}:${name}`;
    let wf = this.workflows.get(key);
    if (!wf) {
      const id = this.state.newId();
      const file =
        name
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, "-")
          .replace(/^-|-$/g, "") || "ci";
      wf = {
        id,
        nodeId: nodeId("W", id),
        repoId: repo.id,
        name,
        path: `.github/workflows/${file}.yml`,
        createdAt: this.state.now(),
      };
      this.workflows.set(key, wf);
    }
    return wf;
  }

  /**
   * A GitHub Actions workflow run on the commit, with its own check suite (as Actions makes
   * one per run): `workflow_run.requested`, then `in_progress` unless it stays queued, then
   * `completed` when it has a conclusion.
   */
  createWorkflowRun(
    repo: SimRepo,
    input: {
      sha: string;
      name: string;
      event: string;
      status: Exclude<CheckStatus, "completed">;
      conclusion: RunConclusion | null;
      actor: string;
    },
  ): SimWorkflowRun {
    this.requireCommit(repo, input.sha);
    const wf = this.workflow(repo, input.name);
    const id = this.state.newId();
    const suite = this.createSuite(repo, input.sha, GITHUB_ACTIONS, {
      ownApp: false,
      workflowRunId: id,
    });
    const now = this.state.now();
    const runNumber =
      [...this.workflowRuns.values()].filter((r) => r.workflowId === wf.id).length + 1;
    const run: SimWorkflowRun = {
      id,
      nodeId: nodeId("WFR", id),
      repoId: repo.id,
      workflowId: wf.id,
      suiteId: suite.id,
      headSha: input.sha,
      event: input.event,
      status: "queued",
      conclusion: null,
      runNumber,
      actor: input.actor,
      createdAt: now,
      updatedAt: now,
    };
    this.workflowRuns.set(id, run);
    this.emitWorkflowRun("requested", repo, run, wf);
    if (input.status === "in_progress" || input.conclusion !== null)
      this.updateWorkflowRun(repo, run, { status: "in_progress" });
    if (input.conclusion !== null)
      this.updateWorkflowRun(repo, run, { conclusion: input.conclusion });
    return run;
  }

  updateWorkflowRun(
    repo: SimRepo,
    run: SimWorkflowRun,
    change: { status?: Exclude<CheckStatus, "completed">; conclusion?: RunConclusion },
  ): SimWorkflowRun {
    if (run.status === "completed")
      throw new SimHttpError(
        422,
        `workflow run ${run.id} is completed; create a new run to re-run it`,
      );
    const wf = [...this.workflows.values()].find((w) => w.id === run.workflowId)!;
    run.updatedAt = this.state.now();
    if (change.conclusion !== undefined) {
      run.status = "completed";
      run.conclusion = change.conclusion;
      this.emitWorkflowRun("completed", repo, run, wf);
    } else if (change.status === "in_progress" && run.status === "queued") {
      run.status = "in_progress";
      this.emitWorkflowRun("in_progress", repo, run, wf);
    }
    const suite = this.suites.get(run.suiteId)!;
    this.settleSuite(repo, suite, `${GITHUB_ACTIONS.slug}[bot]`);
    return run;
  }

  private emitRun(
    action: string,
    repo: SimRepo,
    run: SimCheckRun,
    suite: SimCheckSuite,
    sender: string,
  ): void {
    // Rendered now: the payload shows the run and its suite as they are at this moment.
    const runNow = { ...run };
    const suiteNow = { ...suite };
    this.state.onEvent({
      event: "check_run",
      action,
      repo,
      sender,
      body: (base) => ({ check_run: renderCheckRunHook(base, repo, runNow, suiteNow) }),
    });
  }

  private emitSuite(action: string, repo: SimRepo, suite: SimCheckSuite, sender: string): void {
    const suiteNow = { ...suite };
    const count = this.latestRuns(suite).length;
    const commit = repo.commits.get(suite.headSha)!;
    this.state.onEvent({
      event: "check_suite",
      action,
      repo,
      sender,
      body: (base) => ({
        check_suite: renderCheckSuiteHook(base, repo, suiteNow, commit, count),
      }),
    });
  }

  private emitWorkflowRun(
    action: string,
    repo: SimRepo,
    run: SimWorkflowRun,
    wf: SimWorkflow,
  ): void {
    const runNow = { ...run };
    const commit = repo.commits.get(run.headSha)!;
    this.state.onEvent({
      event: "workflow_run",
      action,
      repo,
      sender: run.actor,
      body: (base) => ({
        workflow: renderWorkflow(base, repo, wf),
        workflow_run: renderWorkflowRun(base, repo, runNow, wf, commit),
      }),
    });
  }
}
