import { describe, expect, it } from "vitest";
import { GitHubApiError } from "../../../shared/github/errors.ts";
import {
  addBlockedBy,
  addLabels,
  addSubIssue,
  closeIssue,
  createComment,
  getIssue,
  removeBlockedBy,
  removeLabel,
  removeSubIssue,
} from "../../../shared/github/writes.ts";
import { harness, issue, REPO, seed } from "./sim-harness.ts";

function setup() {
  const h = harness();
  seed(h.sim, [issue(1), issue(2), issue(3, { labels: ["agent:ready"] }), issue(4)]);
  h.sim.state.install("acme", ["app"], "octocat");
  h.sim.webhooks.outbox = [];
  const repo = h.sim.state.repo("acme", "app")!;
  return { ...h, repo, at: (n: number) => repo.issues.get(n)! };
}

const events = (h: ReturnType<typeof setup>) =>
  h.sim.webhooks.outbox.map((d) => `${d.event}.${d.action}`);

describe("writes", () => {
  it("adds labels and announces each new one", async () => {
    const h = setup();
    await addLabels(h.client, REPO, 1, ["agent:ready", "agent:hold"]);
    expect(h.at(1).labels).toEqual(["agent:ready", "agent:hold"]);
    expect(events(h)).toEqual(["issues.labeled", "label.created", "issues.labeled"]);
    // Adding what is there changes nothing.
    await addLabels(h.client, REPO, 1, ["agent:ready"]);
    expect(h.at(1).labels).toEqual(["agent:ready", "agent:hold"]);
  });

  it("removes a label, and removing an absent label is success", async () => {
    const h = setup();
    expect(await removeLabel(h.client, REPO, 3, "agent:ready")).toEqual({ removed: true });
    expect(h.at(3).labels).toEqual([]);
    expect(await removeLabel(h.client, REPO, 3, "agent:ready")).toEqual({ removed: false });
    expect(events(h)).toEqual(["issues.unlabeled"]);
  });

  it("fails to remove a label from a deleted issue with a typed not-found error, without retrying", async () => {
    const h = setup();
    h.sim.state.deleteIssue(h.at(3), "octocat");
    const error = (await removeLabel(h.client, REPO, 3, "agent:ready").catch(
      (e: unknown) => e,
    )) as GitHubApiError;
    expect(error).toBeInstanceOf(GitHubApiError);
    expect(error.kind).toBe("not-found");
    expect(error.attempts).toBe(1);
    expect(error.request).toBe("DELETE /repos/acme/app/issues/3/labels/agent%3Aready");
    expect(error.message).toContain("remove agent:ready from acme/app#3");
  });

  it("creates a comment", async () => {
    const h = setup();
    const { id } = await createComment(h.client, REPO, 2, "claimed-by: agent-7");
    expect(h.at(2).comments.map((c) => [c.id, c.body])).toEqual([[id, "claimed-by: agent-7"]]);
    expect(events(h)).toEqual(["issue_comment.created"]);
  });

  it("closes with a state reason", async () => {
    const h = setup();
    await closeIssue(h.client, REPO, 2, "not_planned");
    expect([h.at(2).state, h.at(2).stateReason]).toEqual(["closed", "not_planned"]);
    await closeIssue(h.client, REPO, 4);
    expect(h.at(4).stateReason).toBe("completed");
    expect(events(h)).toEqual(["issues.closed", "issues.closed"]);
  });

  it("adds and removes a sub-issue by the child's issue id", async () => {
    const h = setup();
    const child = await getIssue(h.client, REPO, 2);
    expect(child.id).toBe(h.at(2).id);
    await addSubIssue(h.client, REPO, 1, 2);
    expect(h.at(1).subIssueIds).toEqual([h.at(2).id]);
    expect(h.at(2).parentId).toBe(h.at(1).id);
    expect(events(h)).toEqual(["sub_issues.sub_issue_added", "sub_issues.parent_issue_added"]);
    expect(await removeSubIssue(h.client, REPO, 1, 2)).toEqual({ removed: true });
    expect(h.at(2).parentId).toBeNull();
    expect(await removeSubIssue(h.client, REPO, 1, 2)).toEqual({ removed: false });
  });

  it("treats adding a link that already exists as success", async () => {
    const h = setup();
    await addSubIssue(h.client, REPO, 1, 2);
    await addSubIssue(h.client, REPO, 1, 2, { childId: h.at(2).id });
    await addBlockedBy(h.client, REPO, 1, 3);
    await addBlockedBy(h.client, REPO, 1, 3, { blockerId: h.at(3).id });
    expect(h.at(1).subIssueIds).toEqual([h.at(2).id]);
    expect(h.at(1).blockedBy.map((b) => b.issueId)).toEqual([h.at(3).id]);
  });

  it("refuses a second parent unless asked to replace it", async () => {
    const h = setup();
    await addSubIssue(h.client, REPO, 1, 2);
    const error = (await addSubIssue(h.client, REPO, 3, 2).catch(
      (e: unknown) => e,
    )) as GitHubApiError;
    expect(error.kind).toBe("invalid");
    expect(error.outcome).toBe("not-applied");
    await addSubIssue(h.client, REPO, 3, 2, { replaceParent: true });
    expect(h.at(2).parentId).toBe(h.at(3).id);
  });

  it("adds and removes blocked-by links by the blocker's issue id, also across repositories", async () => {
    const h = setup();
    const lib = h.sim.state.createRepo("acme", "lib");
    const libIssue = h.sim.state.createIssue(lib, { title: "lib" }, "octocat");
    await addBlockedBy(h.client, REPO, 1, 2);
    await addBlockedBy(h.client, REPO, 1, `acme/lib#${libIssue.number}`);
    expect(h.at(1).blockedBy.map((b) => b.issueId)).toEqual([h.at(2).id, libIssue.id]);
    expect(events(h)).toContain("issue_dependencies.blocked_by_added");
    expect(events(h)).toContain("issue_dependencies.blocking_added");
    expect(await removeBlockedBy(h.client, REPO, 1, 2)).toEqual({ removed: true });
    expect(await removeBlockedBy(h.client, REPO, 1, 2)).toEqual({ removed: false });
    expect(h.at(1).blockedBy.map((b) => b.issueId)).toEqual([libIssue.id]);
  });

  it("reports a missing issue by name when linking", async () => {
    const h = setup();
    const error = (await addBlockedBy(h.client, REPO, 1, 99).catch(
      (e: unknown) => e,
    )) as GitHubApiError;
    expect(error.kind).toBe("not-found");
    expect(error.message).toContain("read acme/app#99");
  });
});
