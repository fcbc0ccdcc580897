import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { exportSnapshot, seedSnapshot } from "../../../infra/github-sim/seed.ts";
import { DEFAULT_CONFIG } from "../../../shared/config/schema.ts";
import { GitHubApiError } from "../../../shared/github/errors.ts";
import { fetchSnapshot, needsLabelEvents } from "../../../shared/github/fetch-snapshot.ts";
import { parseSnapshot } from "../../../shared/graph/snapshot.ts";
import { count, harness, issue, REPO, seed } from "./sim-harness.ts";

const NOW = new Date("2026-11-29T12:00:00Z");

function withoutNow<T extends { now?: string }>(s: T): Omit<T, "now"> {
  const { now: _, ...rest } = s;
  return rest;
}

describe("fetchSnapshot", () => {
  it("returns exactly the simulator's graph for the small fixture, as a valid snapshot", async () => {
    const { sim, client } = harness();
    const fixture = JSON.parse(await readFile("test/fixtures/github/seed-small.json", "utf8"));
    seedSnapshot(sim.state, fixture);
    const { snapshot } = await fetchSnapshot(client, "acme/widgets", { now: () => NOW });
    expect(parseSnapshot(snapshot)).toEqual(snapshot);
    expect(snapshot.now).toBe("2026-11-29T12:00:00Z");
    const expected = exportSnapshot(sim.state, "acme", "widgets", {
      labelEventsFor: (i) => needsLabelEvents(i.labels, DEFAULT_CONFIG.labels),
    });
    expect(withoutNow(snapshot)).toEqual(expected);
    // The fixture's own content survives the round trip through GitHub's shapes.
    const four = snapshot.issues.find((i) => i.number === 4)!;
    expect(four.blockedBy).toEqual([3, "acme/api#9"]);
    expect(snapshot.external).toEqual([
      { ref: "acme/api#9", state: "closed", closedAt: "2026-11-28T09:00:00Z" },
    ]);
    expect(four.labelEvents).toEqual([
      {
        label: "agent:processing",
        action: "labeled",
        actor: "bot",
        createdAt: "2026-11-28T12:00:00Z",
      },
    ]);
    expect(snapshot.issues.find((i) => i.number === 5)!.stateReason).toBe("not_planned");
    expect(snapshot.issues.find((i) => i.number === 3)!.parent).toBe(1);
  });

  it.each([
    [99, 1],
    [100, 1],
    [101, 2],
    [0, 1],
  ])("fetches %i issues in %i page request(s)", async (n, pages) => {
    const { sim, client } = harness();
    seed(
      sim,
      Array.from({ length: n }, (_, i) => issue(i + 1)),
    );
    const { snapshot, report } = await fetchSnapshot(client, REPO);
    expect(snapshot.issues.map((i) => i.number)).toEqual(
      Array.from({ length: n }, (_, i) => i + 1),
    );
    expect(report.pages).toBe(pages);
    expect(count(sim, "POST /graphql")).toBe(pages);
  });

  it("pages an overflowing sub-issue connection (a parent with 150 sub-issues) only for that parent", async () => {
    const { sim, client } = harness();
    seed(sim, [issue(1), ...Array.from({ length: 150 }, (_, i) => issue(i + 2, { parent: 1 }))]);
    const { snapshot, report } = await fetchSnapshot(client, REPO);
    expect(snapshot.issues.filter((i) => i.parent === 1)).toHaveLength(150);
    // 50 sub-issues come with the page query, the other 100 in one overflow request.
    expect(report.overflowRequests).toBe(1);
    expect(report.pages).toBe(2);
    expect(count(sim, "POST /graphql SwitchyardIssueOverflow")).toBe(1);
    expect(count(sim, "POST /graphql")).toBe(3);
  });

  it("keeps paging an overflowing connection until it ends (151 sub-issues: two overflow requests)", async () => {
    const { sim, client } = harness();
    seed(sim, [issue(1), ...Array.from({ length: 151 }, (_, i) => issue(i + 2, { parent: 1 }))]);
    const { report } = await fetchSnapshot(client, REPO);
    expect(report.overflowRequests).toBe(2);
  });

  it("pages an overflowing blocked-by connection (an issue with 60 blockers)", async () => {
    const { sim, client } = harness();
    const blockers = Array.from({ length: 60 }, (_, i) => i + 2);
    seed(sim, [issue(1, { blockedBy: blockers }), ...blockers.map((n) => issue(n))]);
    const { snapshot, report } = await fetchSnapshot(client, REPO);
    expect(snapshot.issues[0]!.blockedBy).toEqual(blockers);
    expect(report.overflowRequests).toBe(1);
    expect(count(sim, "POST /graphql")).toBe(2);
  });

  it("needs no overflow request when nested connections fit", async () => {
    const { sim, client } = harness();
    seed(sim, [
      issue(1),
      ...Array.from({ length: 50 }, (_, i) => issue(i + 2, { parent: 1, blockedBy: [1] })),
    ]);
    const { report } = await fetchSnapshot(client, REPO);
    expect(report.overflowRequests).toBe(0);
    expect(count(sim, "POST /graphql")).toBe(1);
  });

  it("keeps cross-repository references as owner/repo#n with their state in external", async () => {
    const { sim, client } = harness();
    seed(sim, [issue(1, { blockedBy: ["acme/lib#7", "other/x#2"], parent: "acme/epics#3" })], {
      external: [{ ref: "acme/lib#7", state: "closed", closedAt: "2026-11-20T00:00:00Z" }],
    });
    const { snapshot } = await fetchSnapshot(client, REPO);
    expect(snapshot.issues[0]!.blockedBy).toEqual(["acme/lib#7", "other/x#2"]);
    expect(snapshot.issues[0]!.parent).toBe("acme/epics#3");
    expect(snapshot.external).toEqual([
      { ref: "acme/lib#7", state: "closed", closedAt: "2026-11-20T00:00:00Z" },
      { ref: "other/x#2", state: "open", closedAt: null },
    ]);
  });

  it("reports sub-issues that live in another repository", async () => {
    const { sim, client } = harness();
    seed(sim, [issue(1)]);
    seedSnapshot(sim.state, { repo: "acme/lib", issues: [issue(4, { parent: "acme/app#1" })] });
    const { report } = await fetchSnapshot(client, REPO);
    expect(report.crossRepoChildren).toEqual([{ parent: 1, child: "acme/lib#4" }]);
  });

  it("asks for label events only for issues carrying the lock label or both stance labels, 25 a request", async () => {
    const { sim, client } = harness();
    const issues = [
      ...Array.from({ length: 30 }, (_, i) => issue(i + 1, { labels: ["agent:processing"] })),
      issue(31, { labels: ["agent:ready"] }),
      issue(32, { labels: ["agent:ready", "needs-human-confirm"] }),
      issue(33, { labels: ["needs-human-confirm"] }),
    ];
    seed(sim, issues);
    const { snapshot, report } = await fetchSnapshot(client, REPO);
    expect(report.labelEventRequests).toBe(2);
    const withEvents = snapshot.issues
      .filter((i) => i.labelEvents !== undefined)
      .map((i) => i.number);
    expect(withEvents).toEqual([...Array.from({ length: 30 }, (_, i) => i + 1), 32]);
  });

  it("uses configured label names to pick issues for label events", async () => {
    const { sim, client } = harness();
    seed(sim, [issue(1, { labels: ["agent:processing"] }), issue(2, { labels: ["wip"] })]);
    const { snapshot } = await fetchSnapshot(client, REPO, {
      labels: { ...DEFAULT_CONFIG.labels, processing: "wip" },
    });
    expect(snapshot.issues.map((i) => i.labelEvents !== undefined)).toEqual([false, true]);
  });

  it("includes bodies only when asked", async () => {
    const { sim, client } = harness();
    seed(sim, [issue(1, { body: "<!-- requires: gpu -->" })]);
    expect((await fetchSnapshot(client, REPO)).snapshot.issues[0]!.body).toBeUndefined();
    expect((await fetchSnapshot(client, REPO, { withBody: true })).snapshot.issues[0]!.body).toBe(
      "<!-- requires: gpu -->",
    );
  });

  it("fails with a typed not-found error for an unknown repository", async () => {
    const { client } = harness();
    const error = await fetchSnapshot(client, "acme/nope").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitHubApiError);
    expect((error as GitHubApiError).kind).toBe("not-found");
    expect((error as GitHubApiError).message).toContain("SwitchyardIssuesPage");
    expect((error as GitHubApiError).message).toContain("acme/nope");
  });
});
