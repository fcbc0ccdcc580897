// The simulator driven through every change it can announce; used by the contract tests.
import { createGitHubSimulator } from "../../infra/github-sim/app.ts";
import { pushFiles, seedFiles } from "../../infra/github-sim/contents.ts";
import { GITHUB_ACTIONS } from "../../infra/github-sim/model.ts";

/** Drives the simulator through every change it can announce; returns the deliveries. */
export async function emitEveryWebhook() {
  const sim = createGitHubSimulator({ webhookSecret: "s" });
  const st = sim.state;
  const app = st.createRepo("acme", "app");
  const lib = st.createRepo("acme", "lib");
  const inst = st.install("acme", ["app"], "octocat");
  st.changeInstallationRepos(inst, ["lib"], [], "octocat");
  st.setSuspended(inst, true, "octocat");
  st.setSuspended(inst, false, "octocat");
  const one = st.createIssue(app, { title: "One", body: "first", labels: ["bug"] }, "alice");
  const two = st.createIssue(app, { title: "Two" }, "alice");
  const other = st.createIssue(lib, { title: "Lib" }, "alice");
  st.editIssue(one, { title: "One (renamed)" }, "alice");
  st.addLabels(one, ["agent:ready"], "switchyard-sim[bot]");
  st.removeLabel(one, "agent:ready", "switchyard-sim[bot]");
  const comment = st.addComment(one, "claimed-by: agent-1", "switchyard-sim[bot]");
  st.editComment(comment.id, "claimed-by: agent-2", "alice");
  st.deleteComment(comment.id, "alice");
  // author_association COLLABORATOR (a registered writer) and OWNER (the owner's own login).
  st.registerUser("alice", "alice-token", { "acme/app": "write" });
  st.addComment(one, "claimed-by: alice", "alice");
  st.addComment(one, "looks good", "acme");
  st.addSubIssue(one, two, false, "alice");
  st.removeSubIssue(one, two, "alice");
  st.addBlockedBy(one, other, "alice");
  st.removeBlockedBy(one, other, "alice");
  st.closeIssue(two, "not_planned", "alice");
  st.reopenIssue(two, "alice");
  st.editLabel(app, "bug", { name: "defect", color: "ff0000" }, "alice");
  st.deleteLabel(app, "defect", "alice");
  await seedFiles(st, app, { "README.md": "# app\n" });
  await pushFiles(
    st,
    app,
    { ".github/switchyard.yml": "queue:\n  mode: all\n" },
    { actor: "alice" },
  );
  await pushFiles(
    st,
    app,
    { ".github/switchyard.yml": "queue:\n  mode: events\n", "README.md": null },
    { actor: "alice", message: "Queue events only" },
  );
  await pushFiles(st, app, { ".github/switchyard.yml": null }, { actor: "alice" });
  // CI on the head commit: a check run of GitHub Actions that fails, one of the simulated App
  // itself (its own suite is `requested`), a commit status, and a workflow run.
  const head = app.head!;
  const lint = st.ci.createRun(app, {
    sha: head,
    name: "lint",
    app: GITHUB_ACTIONS,
    ownApp: false,
    status: "in_progress",
    conclusion: null,
  });
  st.ci.updateRun(app, lint, { conclusion: "failure" });
  st.ci.createRun(app, {
    sha: head,
    name: "switchyard",
    app: { ...GITHUB_ACTIONS, id: sim.appId, slug: sim.appSlug, name: sim.appSlug },
    ownApp: true,
    status: "queued",
    conclusion: "neutral",
  });
  st.ci.createStatus(app, { sha: head, context: "ci/legacy", state: "failure", creator: "alice" });
  const ciRun = st.ci.createWorkflowRun(app, {
    sha: head,
    name: "CI",
    event: "push",
    status: "in_progress",
    conclusion: null,
    actor: "alice",
  });
  st.ci.updateWorkflowRun(app, ciRun, { conclusion: "success" });
  // An organization project with a single-select field: an item added, its value set, changed
  // without from/to (as GitHub sometimes sends it), cleared, and the item removed.
  const roadmap = st.projects.create(
    "acme",
    { title: "Roadmap", fields: [{ name: "Priority", options: ["Urgent", "Later"] }] },
    "alice",
  );
  const [priority] = roadmap.fields;
  const item = st.projects.addItem(roadmap, two, "alice");
  st.projects.setValue(roadmap, item, priority!, "Urgent", "alice");
  st.projects.setValue(roadmap, item, priority!, "Later", "alice", { omitValues: true });
  st.projects.setValue(roadmap, item, priority!, null, "alice");
  st.projects.deleteItem(roadmap, item, "alice");
  st.transferIssue(two, lib, "alice");
  st.deleteIssue(one, "alice");
  // The repository lifecycle: rename, archive, visibility, a transfer to an account the App is
  // installed on (all repositories), then a delete there.
  const tools = st.createRepo("acme", "tools");
  st.changeInstallationRepos(inst, ["tools"], [], "octocat");
  st.renameRepo(tools, "toolbox", "acme");
  st.setArchived(tools, true, "acme");
  st.setArchived(tools, false, "acme");
  st.setPrivate(tools, false, "acme");
  st.setPrivate(tools, true, "acme");
  st.install("beta", "all", "octocat");
  st.transferRepo(tools, "beta", "acme");
  st.deleteRepo(tools, "beta");
  st.changeInstallationRepos(inst, [], ["lib"], "octocat");
  st.uninstall(inst, "octocat");
  return sim.webhooks.drain();
}
