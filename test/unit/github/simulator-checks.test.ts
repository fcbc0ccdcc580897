// CI on the default branch in the simulator: new head commits, check runs and suites, commit
// statuses and workflow runs, driven through the control API; their webhooks (and who gets
// them: installations with the matching permission), and the REST reads a Worker makes.
import { describe, expect, it } from "vitest";
import { createGitHubSimulator } from "../../../infra/github-sim/app.ts";
import { call, control, deliveries } from "./sim-call.ts";

async function world() {
  const sim = createGitHubSimulator();
  const repo = sim.state.createRepo("acme", "app");
  const inst = sim.state.install("acme", ["app"], "octocat");
  const token = sim.tokens.mint(inst.id, sim.now()).token;
  // A first commit on main, as the repository's README would be.
  const first = await control(sim, "POST", "/repos/acme/app/push", {
    files: { "README.md": "# app\n" },
  });
  await deliveries(sim);
  return { sim, repo, inst, token, first: first.body.commit.id as string };
}

const events = (ds: Awaited<ReturnType<typeof deliveries>>) =>
  ds.map((d) => (d.action ? `${d.event}.${d.action}` : d.event));

describe("the default branch's head", () => {
  it("moves with an empty push (or a force-push), announced as a push, and reads back by branch and commit", async () => {
    const { sim, token, first } = await world();
    const pushed = await control(sim, "POST", "/repos/acme/app/push", {
      allowEmpty: true,
      message: "Trigger CI",
    });
    const second = pushed.body.commit.id as string;
    expect(pushed.body.commit).toMatchObject({ parents: [first], message: "Trigger CI" });
    const forced = await control(sim, "POST", "/repos/acme/app/push", {
      allowEmpty: true,
      force: true,
    });
    const push = (await deliveries(sim)).map((d) => d.payload);
    expect(push.map((p) => [p.before, p.after, p.forced])).toEqual([
      [first, second, false],
      [second, forced.body.commit.id, true],
    ]);
    const branch = await call(sim, "GET", "/repos/acme/app/branches/main", { token });
    expect(branch.body).toMatchObject({
      name: "main",
      protected: false,
      commit: { sha: forced.body.commit.id },
    });
    const commit = await call(sim, "GET", `/repos/acme/app/commits/${second.slice(0, 7)}`, {
      token,
    });
    expect(commit.body).toMatchObject({
      sha: second,
      parents: [{ sha: first }],
      commit: { message: "Trigger CI" },
    });
    expect((await call(sim, "GET", "/repos/acme/app/branches/dev", { token })).status).toBe(404);
    expect((await call(sim, "GET", "/repos/acme/app/commits/abcdef0", { token })).status).toBe(422);
  });

  it("has no branch before the first commit; a check run makes one silently", async () => {
    const sim = createGitHubSimulator();
    sim.state.createRepo("acme", "empty");
    const inst = sim.state.install("acme", ["empty"], "octocat");
    const token = sim.tokens.mint(inst.id, sim.now()).token;
    expect((await call(sim, "GET", "/repos/acme/empty/branches/main", { token })).status).toBe(404);
    await deliveries(sim);
    const run = await control(sim, "POST", "/repos/acme/empty/check-runs", { name: "ci" });
    expect(run.status).toBe(201);
    expect(events(await deliveries(sim))).toEqual(["check_run.created"]);
    const branch = await call(sim, "GET", "/repos/acme/empty/branches/main", { token });
    expect(branch.body.commit.sha).toBe(run.body.head_sha);
  });
});

describe("check runs and suites", () => {
  it("announces a run's creation and completion, and its suite's completion with the worst conclusion", async () => {
    const { sim, token, first } = await world();
    const lint = await control(sim, "POST", "/repos/acme/app/check-runs", { name: "lint" });
    expect(lint.body).toMatchObject({ head_sha: first, status: "in_progress", conclusion: null });
    const test = await control(sim, "POST", "/repos/acme/app/check-runs", {
      name: "test",
      conclusion: "success",
    });
    expect(test.body.check_suite).toEqual({
      id: lint.body.check_suite.id,
      status: "in_progress",
      conclusion: null,
    });
    await control(sim, "PATCH", `/repos/acme/app/check-runs/${lint.body.id}`, {
      conclusion: "failure",
    });
    const ds = await deliveries(sim);
    expect(events(ds)).toEqual([
      "check_run.created",
      "check_run.created",
      "check_run.completed",
      "check_run.completed",
      "check_suite.completed",
    ]);
    expect(ds[0]!.payload.check_run).toMatchObject({
      name: "lint",
      status: "in_progress",
      head_sha: first,
      app: { slug: "github-actions" },
    });
    expect(ds[3]!.payload.check_run).toMatchObject({ name: "lint", conclusion: "failure" });
    expect(ds[4]!.payload.check_suite).toMatchObject({
      head_sha: first,
      head_branch: "main",
      status: "completed",
      conclusion: "failure",
      latest_check_runs_count: 2,
    });
    expect(ds[4]!.payload.repository.full_name).toBe("acme/app");
    const runs = await call(sim, "GET", "/repos/acme/app/commits/main/check-runs", { token });
    expect(
      runs.body.check_runs.map((r: { name: string; conclusion: string }) => [r.name, r.conclusion]),
    ).toEqual([
      ["lint", "failure"],
      ["test", "success"],
    ]);
    const suites = await call(sim, "GET", `/repos/acme/app/commits/${first}/check-suites`, {
      token,
    });
    expect(suites.body).toMatchObject({
      total_count: 1,
      check_suites: [{ conclusion: "failure", app: { slug: "github-actions" } }],
    });
  });

  it("treats a run of the same name as a re-run: the latest replaces the failure, the suite completes again", async () => {
    const { sim, token } = await world();
    await control(sim, "POST", "/repos/acme/app/check-runs", {
      name: "test",
      conclusion: "failure",
    });
    await deliveries(sim);
    await control(sim, "POST", "/repos/acme/app/check-runs", {
      name: "test",
      conclusion: "success",
    });
    const ds = await deliveries(sim);
    expect(events(ds)).toEqual([
      "check_run.created",
      "check_run.completed",
      "check_suite.completed",
    ]);
    expect(ds[2]!.payload.check_suite.conclusion).toBe("success");
    const latest = await call(sim, "GET", "/repos/acme/app/commits/main/check-runs", { token });
    expect(latest.body.check_runs.map((r: { conclusion: string }) => r.conclusion)).toEqual([
      "success",
    ]);
    const all = await call(sim, "GET", "/repos/acme/app/commits/main/check-runs?filter=all", {
      token,
    });
    expect(all.body.total_count).toBe(2);
    const named = await call(
      sim,
      "GET",
      "/repos/acme/app/commits/main/check-runs?check_name=lint",
      { token },
    );
    expect(named.body.total_count).toBe(0);
  });

  it("sends check_suite.requested only for the simulated App's own suites; an empty suite says nothing", async () => {
    const { sim, token } = await world();
    await control(sim, "POST", "/repos/acme/app/check-suites", {});
    await control(sim, "POST", "/repos/acme/app/check-runs", {
      name: "own",
      app: "switchyard-sim",
      status: "queued",
    });
    await control(sim, "POST", "/repos/acme/app/check-runs", {
      name: "ext",
      app: "circleci",
      conclusion: "neutral",
    });
    const ds = await deliveries(sim);
    expect(events(ds)).toEqual([
      "check_suite.requested",
      "check_run.created",
      "check_run.created",
      "check_run.completed",
      "check_suite.completed",
    ]);
    expect(ds[0]!.payload.check_suite.app.slug).toBe("switchyard-sim");
    expect(ds[2]!.payload.check_run.app.slug).toBe("circleci");
    const suites = await call(sim, "GET", "/repos/acme/app/commits/main/check-suites", { token });
    expect(
      suites.body.check_suites.map(
        (s: { app: { slug: string }; status: string; latest_check_runs_count: number }) => [
          s.app.slug,
          s.status,
          s.latest_check_runs_count,
        ],
      ),
    ).toEqual([
      ["github-actions", "queued", 0],
      ["switchyard-sim", "queued", 1],
      ["circleci", "completed", 1],
    ]);
  });

  it("attaches runs to a named commit, and refuses one the repository does not have", async () => {
    const { sim, first } = await world();
    await control(sim, "POST", "/repos/acme/app/push", { allowEmpty: true });
    const old = await control(sim, "POST", "/repos/acme/app/check-runs", {
      name: "x",
      sha: first.slice(0, 8),
    });
    expect(old.body.head_sha).toBe(first);
    expect(
      (await control(sim, "POST", "/repos/acme/app/check-runs", { name: "x", sha: "deadbeef" }))
        .status,
    ).toBe(422);
    expect(
      (await control(sim, "POST", "/repos/acme/app/check-runs", { name: "x", conclusion: "stale" }))
        .status,
    ).toBe(400);
    const done = await control(sim, "POST", "/repos/acme/app/check-runs", {
      name: "y",
      conclusion: "success",
    });
    expect(
      (
        await control(sim, "PATCH", `/repos/acme/app/check-runs/${done.body.id}`, {
          conclusion: "failure",
        })
      ).status,
    ).toBe(422);
  });
});

describe("commit statuses", () => {
  it("announces each status and combines the newest per context", async () => {
    const { sim, token, first } = await world();
    await control(sim, "POST", "/repos/acme/app/statuses", { context: "ci/a", state: "pending" });
    const failed = await control(sim, "POST", "/repos/acme/app/statuses", {
      context: "ci/b",
      state: "failure",
      description: "red",
    });
    expect(failed.body).toMatchObject({ sha: first, combined: "failure" });
    const ds = await deliveries(sim);
    expect(events(ds)).toEqual(["status", "status"]);
    expect(ds[1]!.payload).toMatchObject({
      sha: first,
      context: "ci/b",
      state: "failure",
      description: "red",
      branches: [{ name: "main" }],
    });
    expect(
      (await call(sim, "GET", "/repos/acme/app/commits/main/status", { token })).body,
    ).toMatchObject({ state: "failure", total_count: 2 });
    await control(sim, "POST", "/repos/acme/app/statuses", { context: "ci/b", state: "success" });
    await control(sim, "POST", "/repos/acme/app/statuses", { context: "ci/a", state: "success" });
    const combined = await call(sim, "GET", "/repos/acme/app/commits/main/status", { token });
    expect(combined.body.state).toBe("success");
    const list = await call(sim, "GET", "/repos/acme/app/commits/main/statuses", { token });
    expect(
      list.body.map((s: { context: string; state: string }) => `${s.context}:${s.state}`),
    ).toEqual(["ci/a:success", "ci/b:success", "ci/b:failure", "ci/a:pending"]);
    expect(
      (await call(sim, "GET", "/repos/acme/app/commits/abcdef1/status", { token })).status,
    ).toBe(404);
  });
});

describe("workflow runs", () => {
  it("announces requested, in_progress and completed, with a check suite of GitHub Actions per run", async () => {
    const { sim, token } = await world();
    const run = await control(sim, "POST", "/repos/acme/app/workflow-runs", { name: "CI" });
    await control(sim, "PATCH", `/repos/acme/app/workflow-runs/${run.body.id}`, {
      conclusion: "startup_failure",
    });
    const ds = await deliveries(sim);
    expect(events(ds)).toEqual([
      "workflow_run.requested",
      "workflow_run.in_progress",
      "workflow_run.completed",
      "check_suite.completed",
    ]);
    expect(ds[2]!.payload.workflow_run).toMatchObject({
      name: "CI",
      conclusion: "startup_failure",
      head_branch: "main",
      check_suite_id: run.body.check_suite_id,
    });
    expect(ds[2]!.payload.workflow).toMatchObject({ name: "CI", path: ".github/workflows/ci.yml" });
    expect(ds[3]!.payload.check_suite).toMatchObject({
      id: run.body.check_suite_id,
      conclusion: "startup_failure",
    });
    const again = await control(sim, "POST", "/repos/acme/app/workflow-runs", {
      name: "CI",
      conclusion: "success",
    });
    const runs = await call(sim, "GET", "/repos/acme/app/actions/runs?branch=main", { token });
    expect(
      runs.body.workflow_runs.map((r: { id: number; run_number: number; conclusion: string }) => [
        r.id,
        r.run_number,
        r.conclusion,
      ]),
    ).toEqual([
      [again.body.id, 2, "success"],
      [run.body.id, 1, "startup_failure"],
    ]);
    expect(
      (await call(sim, "GET", "/repos/acme/app/actions/runs?status=failure", { token })).body
        .total_count,
    ).toBe(0);
  });
});

describe("permissions", () => {
  it("refuses an installation token without checks, statuses or actions (403), and delivers it none of their events", async () => {
    const { sim, inst, token } = await world();
    await control(sim, "PUT", `/installations/${inst.id}/permissions`, {
      permissions: { checks: null, statuses: null, actions: null },
    });
    for (const path of [
      "/commits/main/check-runs",
      "/commits/main/check-suites",
      "/commits/main/status",
      "/commits/main/statuses",
      "/actions/runs",
    ]) {
      const r = await call(sim, "GET", `/repos/acme/app${path}`, { token });
      expect(r, path).toMatchObject({
        status: 403,
        body: { message: "Resource not accessible by integration" },
      });
    }
    expect((await call(sim, "GET", "/repos/acme/app/branches/main", { token })).status).toBe(200);
    await control(sim, "POST", "/repos/acme/app/check-runs", {
      name: "lint",
      conclusion: "failure",
    });
    await control(sim, "POST", "/repos/acme/app/statuses", { state: "failure" });
    await control(sim, "POST", "/repos/acme/app/workflow-runs", { conclusion: "failure" });
    await control(sim, "POST", "/repos/acme/app/push", { allowEmpty: true });
    expect(events(await deliveries(sim))).toEqual(["push"]);
    const installation = await call(sim, "GET", `/installation/repositories`, { token });
    expect(installation.status).toBe(200);
  });
});

describe("by repository id", () => {
  it("answers the CI reads at /repositories/{id}/... as at /repos/{owner}/{repo}/...", async () => {
    const { sim, repo, token } = await world();
    await control(sim, "POST", "/repos/acme/app/check-runs", {
      name: "lint",
      conclusion: "success",
    });
    await control(sim, "POST", "/repos/acme/app/statuses", { state: "success" });
    for (const path of [
      "/branches/main",
      "/commits/main",
      "/commits/main/check-runs",
      "/commits/main/check-suites",
      "/commits/main/status",
      "/commits/main/statuses",
      "/actions/runs",
    ]) {
      const byName = await call(sim, "GET", `/repos/acme/app${path}`, { token });
      const byId = await call(sim, "GET", `/repositories/${repo.id}${path}`, { token });
      expect(byId.status, path).toBe(200);
      expect(byId.body, path).toEqual(byName.body);
    }
  });
});
