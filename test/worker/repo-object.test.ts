import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { parseWebhook } from "../../shared/github/webhooks.ts";
import type { GraphEvent, IssueRecord } from "../../shared/ingest/events.ts";
import { routeWebhook } from "../../shared/ingest/from-webhook.ts";

const repo = { id: 1001, fullName: "acme/rocket", installationId: 77 };
let nextRepoId = 5000;
/**
 * A fresh RepoObject per test (storage is shared within this file), marked as already
 * reconciled: these tests are about the merge rules, not about talking to GitHub.
 */
async function freshRepo() {
  const id = nextRepoId++;
  const stub = env.REPO.get(env.REPO.idFromName(String(id)));
  await runInDurableObject(stub, (o: RepoObject) => {
    o.store.setIdentity({
      repoId: id,
      fullName: repo.fullName,
      installationId: repo.installationId,
      status: "active",
    });
    o.store.updateWatermarks({ lastFullReconcileAt: "2026-11-29T00:00:00Z" });
  });
  return { stub, repo: { ...repo, id } };
}

function issue(number: number, patch: Partial<IssueRecord> = {}): IssueRecord {
  return {
    number,
    id: 100_000 + number,
    title: `Issue ${number}`,
    state: "open",
    stateReason: null,
    createdAt: "2026-11-01T00:00:00Z",
    updatedAt: "2026-11-28T00:00:00Z",
    closedAt: null,
    labels: [],
    body: null,
    ...patch,
  };
}

const delivery = (id: string, receivedMs = Date.parse("2026-11-29T12:00:00Z")) => ({
  id,
  event: "issues",
  receivedMs,
});

describe("RepoObject.ingest", () => {
  it("applies a delivery once; a replay is a duplicate and changes nothing", async () => {
    const { stub, repo } = await freshRepo();
    const events: GraphEvent[] = [{ type: "issue", issue: issue(1) }];
    expect(await stub.ingest(delivery("d-1"), repo, events)).toBe("applied");
    const before = await stub.auditLog();
    expect(
      await stub.ingest(delivery("d-1"), repo, [
        { type: "issue", issue: issue(1, { title: "changed" }) },
      ]),
    ).toBe("duplicate");
    expect(await stub.auditLog()).toEqual(before);
    const graph = await stub.graph(Date.parse("2026-11-29T12:00:00Z"));
    expect(graph.ready).toEqual([1]);
  });

  it("never lets an older update regress a newer one", async () => {
    const { stub, repo } = await freshRepo();
    const closed = issue(2, {
      state: "closed",
      stateReason: "completed",
      closedAt: "2026-11-29T10:00:00Z",
      updatedAt: "2026-11-29T10:00:00Z",
    });
    expect(await stub.ingest(delivery("a"), repo, [{ type: "issue", issue: closed }])).toBe(
      "applied",
    );
    expect(
      await stub.ingest(delivery("b"), repo, [
        { type: "issue", issue: issue(2, { updatedAt: "2026-11-29T09:00:00Z" }) },
      ]),
    ).toBe("unchanged");
    const snapshot = await runInDurableObject(stub, (o: RepoObject) => o.store.snapshot());
    expect(snapshot.issues.map((i) => i.state)).toEqual(["closed"]);
  });

  it("resolves an edge add/remove pair by event time, in either arrival order", async () => {
    const add: GraphEvent = {
      type: "blocked-by",
      issue: 3,
      blocker: 4,
      present: true,
      at: "2026-11-29T10:00:00Z",
    };
    const remove: GraphEvent = {
      type: "blocked-by",
      issue: 3,
      blocker: 4,
      present: false,
      at: "2026-11-29T10:05:00Z",
    };
    for (const order of [
      [add, remove],
      [remove, add],
    ]) {
      const { stub, repo } = await freshRepo();
      await stub.ingest(delivery("i"), repo, [
        { type: "issue", issue: issue(3) },
        { type: "issue", issue: issue(4) },
      ]);
      await stub.ingest(delivery("x"), repo, [order[0]!]);
      await stub.ingest(delivery("y"), repo, [order[1]!]);
      const graph = await stub.graph(Date.parse("2026-11-29T12:00:00Z"));
      expect(graph.blocked).toEqual([]);
      expect(graph.ready).toEqual([3, 4]);
    }
  });

  it("a sub-issue detach delivered late does not undo an attach elsewhere in its second", async () => {
    // A parent replaced (`replace_parent`): the detach from #6 and the attach to #7 share a second.
    const { stub, repo } = await freshRepo();
    await stub.ingest(delivery("1"), repo, [
      { type: "parent", child: 5, parent: 6, at: "2026-11-29T10:00:00Z" },
      { type: "parent", child: 5, parent: 7, at: "2026-11-29T10:10:00Z" },
      { type: "parent", child: 5, parent: null, previous: 6, at: "2026-11-29T10:10:00Z" },
    ]);
    const snapshot = await runInDurableObject(stub, (o: RepoObject) => o.store.snapshot());
    expect(snapshot.issues).toEqual([]);
    const parents = await runInDurableObject(
      stub,
      (o: RepoObject) => o.store.sql`SELECT child, parent FROM parents`,
    );
    expect(parents).toEqual([{ child: 5, parent: "7" }]);
  });

  it("a removed issue is not resurrected by an older update and takes its edges along", async () => {
    const { stub, repo } = await freshRepo();
    await stub.ingest(delivery("1"), repo, [
      { type: "issue", issue: issue(8) },
      { type: "issue", issue: issue(9) },
      { type: "blocked-by", issue: 9, blocker: 8, present: true, at: "2026-11-28T00:00:00Z" },
      { type: "issue-removed", number: 8, at: "2026-11-29T00:00:00Z" },
      { type: "issue", issue: issue(8, { updatedAt: "2026-11-28T12:00:00Z" }) },
    ]);
    const graph = await stub.graph(Date.parse("2026-11-29T12:00:00Z"));
    expect(graph.stats).toEqual({ issues: 1, open: 1, edges: 0 });
  });

  it("only watched label events and marker comments are stored", async () => {
    const { stub, repo } = await freshRepo();
    await stub.ingest(delivery("1"), repo, [
      { type: "issue", issue: issue(10, { labels: ["agent:processing"] }) },
      {
        type: "label-event",
        number: 10,
        label: "agent:processing",
        action: "labeled",
        actor: "bot",
        at: "2026-11-29T11:50:00Z",
      },
      {
        type: "label-event",
        number: 10,
        label: "bug",
        action: "labeled",
        actor: "bot",
        at: "2026-11-29T11:50:00Z",
      },
      {
        type: "comment",
        id: 1,
        number: 10,
        author: { login: "a", type: "User" },
        body: "plain words",
        createdAt: "2026-11-29T11:00:00Z",
        updatedAt: "2026-11-29T11:00:00Z",
      },
      {
        type: "comment",
        id: 2,
        number: 10,
        author: { login: "a", type: "User" },
        body: "<!-- claimed-by: x -->",
        createdAt: "2026-11-29T11:00:00Z",
        updatedAt: "2026-11-29T11:00:00Z",
      },
    ]);
    const snapshot = await runInDurableObject(stub, (o: RepoObject) => o.store.snapshot());
    expect(snapshot.issues[0]!.labelEvents).toEqual([
      {
        label: "agent:processing",
        action: "labeled",
        actor: "bot",
        createdAt: "2026-11-29T11:50:00Z",
      },
    ]);
    const comments = await runInDurableObject(stub, (o: RepoObject) => o.store.markerComments(10));
    expect(comments.map((c) => c.id)).toEqual([2]);
  });

  it("an issue payload without labels keeps the stored labels (a hold label must not vanish)", async () => {
    const { stub, repo } = await freshRepo();
    await stub.ingest(delivery("h1"), repo, [
      { type: "issue", issue: issue(11, { labels: ["agent:hold", "bug"] }) },
    ]);
    // GitHub may send an issue object without `labels` (the schema allows it): say nothing
    // about labels then, and keep what is stored.
    const parsed = parseWebhook("issues", {
      action: "edited",
      issue: {
        id: 100_011,
        node_id: "I_11",
        number: 11,
        title: "Issue 11, renamed",
        state: "open",
        state_reason: null,
        body: null,
        user: { login: "alice", id: 1, type: "User" },
        created_at: "2026-11-01T00:00:00Z",
        updated_at: "2026-11-28T06:00:00Z",
        closed_at: null,
      },
      repository: { id: repo.id, name: "rocket", full_name: repo.fullName },
      installation: { id: repo.installationId },
      sender: { login: "alice", id: 1, type: "User" },
    });
    expect(parsed.kind).toBe("handled");
    if (parsed.kind !== "handled") return;
    const routed = routeWebhook(parsed, "2026-11-29T12:00:00Z");
    if (routed.kind !== "repository")
      throw new Error(`not routed to the repository: ${routed.kind}`);
    expect(await stub.ingest(delivery("h2"), repo, routed.events)).toBe("applied");
    const snapshot = await runInDurableObject(stub, (o: RepoObject) => o.store.snapshot());
    const stored = snapshot.issues.find((i) => i.number === 11)!;
    expect(stored.title).toBe("Issue 11, renamed");
    expect(stored.labels).toEqual(["agent:hold", "bug"]);
  });
});

describe("what wakes the producer", () => {
  it("a state, label, label-event or edge change is graph-relevant; a title edit or a comment is not", async () => {
    const { stub } = await freshRepo();
    const touched = (events: GraphEvent[]) =>
      runInDurableObject(stub, (o: RepoObject) => o.store.applyEvents(events).graphChanged);
    expect(await touched([{ type: "issue", issue: issue(1) }])).toBe(true);
    expect(
      await touched([
        { type: "issue", issue: issue(1, { title: "Renamed", updatedAt: "2026-11-28T01:00:00Z" }) },
      ]),
    ).toBe(false);
    expect(
      await touched([
        {
          type: "comment",
          id: 5,
          number: 1,
          author: { login: "a", type: "User" },
          body: "<!-- claimed-by: a c1 2026-11-29T10:00:00Z branch: issue/1-x supersedes: none -->",
          createdAt: "2026-11-29T10:00:00Z",
          updatedAt: "2026-11-29T10:00:00Z",
        },
      ]),
    ).toBe(false);
    expect(
      await touched([
        {
          type: "issue",
          issue: issue(1, {
            title: "Renamed",
            labels: ["agent:hold"],
            updatedAt: "2026-11-28T02:00:00Z",
          }),
        },
      ]),
    ).toBe(true);
    expect(
      await touched([
        {
          type: "issue",
          issue: issue(1, {
            title: "Renamed",
            labels: ["agent:hold"],
            state: "closed",
            stateReason: "completed",
            closedAt: "2026-11-28T03:00:00Z",
            updatedAt: "2026-11-28T03:00:00Z",
          }),
        },
      ]),
    ).toBe(true);
    expect(
      await touched([
        {
          type: "label-event",
          number: 1,
          label: "agent:processing",
          action: "labeled",
          actor: "a",
          at: "2026-11-28T04:00:00Z",
        },
      ]),
    ).toBe(true);
    expect(
      await touched([
        { type: "blocked-by", issue: 1, blocker: 2, present: true, at: "2026-11-28T05:00:00Z" },
      ]),
    ).toBe(true);
  });

  it("ingest schedules the producer for a graph-relevant change only", async () => {
    const { stub, repo } = await freshRepo();
    // Due far ahead (no alarm can run it away before it is looked at): only whether it is there matters.
    await runInDurableObject(stub, (o: RepoObject) =>
      o.store.meta.set("watchingSince", "2026-11-01T00:00:00Z"),
    );
    await stub.ingest(delivery("q1", Date.parse("2100-01-01T00:00:00Z")), repo, [
      {
        type: "issue",
        issue: issue(3, { title: "Only a title", updatedAt: "2026-11-28T00:00:00Z" }),
      },
    ]);
    const first = (await stub.status()).schedules.map((s) => s.name);
    expect(first).toContain("producer");
    await runInDurableObject(
      stub,
      (o: RepoObject) => o.store.sql`DELETE FROM schedules WHERE name = 'producer'`,
    );
    await stub.ingest(delivery("q2", Date.parse("2100-01-01T00:00:00Z")), repo, [
      {
        type: "issue",
        issue: issue(3, { title: "Another title", updatedAt: "2026-11-28T01:00:00Z" }),
      },
    ]);
    expect((await stub.status()).schedules.map((s) => s.name)).not.toContain("producer");
  });
});
