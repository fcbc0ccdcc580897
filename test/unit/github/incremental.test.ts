import { describe, expect, it } from "vitest";
import { fetchChanges, type IncrementalWatermark } from "../../../shared/github/incremental.ts";
import { closeIssue } from "../../../shared/github/writes.ts";
import { count, harness, issue, REPO, seed, T0 } from "./sim-harness.ts";

const START: IncrementalWatermark = { since: T0, etag: null, boundary: [] };

describe("fetchChanges", () => {
  it("round-trips the ETag: the second unchanged listing is a 304 that costs no rate limit", async () => {
    const { sim, client } = harness();
    seed(sim, [issue(1), issue(2)]);
    const first = await fetchChanges(client, REPO, START);
    expect(first.changed).toBe(true);
    expect(first.watermark.etag).toMatch(/^W\/".+"$/);
    const billedBefore = sim.counter.snapshot().rateLimited;
    const second = await fetchChanges(client, REPO, first.watermark);
    expect(second).toMatchObject({ changed: false, notModified: true, listRequests: 1 });
    expect(second.watermark).toEqual(first.watermark);
    const counters = sim.counter.snapshot();
    expect(counters.rateLimited).toBe(billedBefore);
    expect(counters.byEndpoint["GET /repos/{owner}/{repo}/issues"]!.statuses["304"]).toBe(1);
    expect(client.stats.notModified).toBe(1);
  });

  it("refetches only the changed issues' edges, then settles back to 304", async () => {
    const { sim, client } = harness();
    const minute = (i: number) =>
      new Date(Date.parse(T0) + i * 60_000).toISOString().replace(".000Z", "Z");
    seed(
      sim,
      Array.from({ length: 200 }, (_, i) =>
        issue(i + 1, { updatedAt: minute(i), blockedBy: i === 0 ? [2] : [] }),
      ),
    );
    sim.setClock({ now: "2026-11-10T00:00:00Z" });
    const settled = await fetchChanges(client, REPO, START);
    let wm = settled.watermark;
    // Nothing changed: steady state, one free request.
    wm = (await fetchChanges(client, REPO, wm)).watermark;

    sim.setClock({ now: "2026-11-11T00:00:00Z" });
    await closeIssue(client, REPO, 2, "completed");
    sim.state.addLabels(
      sim.state.requireIssue(sim.state.repo("acme", "app")!, 3),
      ["agent:ready"],
      "octocat",
    );
    sim.counter.reset();
    const changed = await fetchChanges(client, REPO, wm);
    expect(changed.changed).toBe(true);
    // Closing #2 does not re-date #1 (only edge changes touch both ends).
    expect(changed.issues.map((i) => [i.number, i.state, i.labels])).toEqual([
      [2, "closed", []],
      [3, "open", ["agent:ready"]],
    ]);
    expect(count(sim, "GET /repos/{owner}/{repo}/issues")).toBe(1);
    expect(count(sim, "POST /graphql SwitchyardIssuesById")).toBe(1);
    expect(changed.watermark.since).toBe("2026-11-11T00:00:00Z");
    expect(changed.watermark.boundary).toEqual([2, 3]);

    // The next poll re-lists the boundary issues once (new URL), filters them, then 304s.
    const again = await fetchChanges(client, REPO, changed.watermark);
    expect(again.changed).toBe(false);
    const steady = await fetchChanges(client, REPO, again.watermark);
    expect(steady.notModified).toBe(true);
  });

  it("sees edge changes through updated_at and returns cross-repository blockers", async () => {
    const { sim, client } = harness();
    seed(sim, [issue(1), issue(2)], {});
    const wm = (await fetchChanges(client, REPO, START)).watermark;
    sim.setClock({ now: "2026-12-01T00:00:00Z" });
    const repo = sim.state.repo("acme", "app")!;
    const other = sim.state.createRepo("acme", "lib");
    const blocker = sim.state.createIssue(other, { title: "lib bug" }, "octocat");
    sim.state.addBlockedBy(repo.issues.get(1)!, blocker, "octocat");
    const result = await fetchChanges(client, REPO, wm);
    expect(result.issues.map((i) => [i.number, i.blockedBy])).toEqual([
      [1, [`acme/lib#${blocker.number}`]],
    ]);
    expect(result.external).toEqual([
      { ref: `acme/lib#${blocker.number}`, state: "open", closedAt: null },
    ]);
  });

  it("lists more than one page when many issues changed", async () => {
    const { sim, client } = harness();
    seed(
      sim,
      Array.from({ length: 150 }, (_, i) => issue(i + 1)),
    );
    const result = await fetchChanges(client, REPO, START);
    expect(result.issues).toHaveLength(150);
    expect(result.listRequests).toBe(2);
    expect(count(sim, "POST /graphql SwitchyardIssuesById")).toBe(2);
  });
});
