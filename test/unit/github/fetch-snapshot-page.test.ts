// The full fetch one page at a time: pages concatenate to the whole fetch, each page is complete
// on its own (overflow and label events read before it returns), and a refused cursor is told
// apart from other failures.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GitHubApiError } from "../../../shared/github/errors.ts";
import {
  fetchSnapshot,
  fetchSnapshotPage,
  isCursorRefused,
} from "../../../shared/github/fetch-snapshot.ts";
import type { SnapshotIssue } from "../../../shared/graph/snapshot.ts";
import { count, harness, issue, REPO, seed } from "./sim-harness.ts";

async function allPages(client: ReturnType<typeof harness>["client"], pageSize: number) {
  const pages: SnapshotIssue[][] = [];
  let cursor: string | null = null;
  do {
    const page = await fetchSnapshotPage(client, REPO, cursor, { pageSize });
    pages.push(page.issues);
    cursor = page.next;
  } while (cursor !== null);
  return pages;
}

describe("fetchSnapshotPage", () => {
  it("pages of any size concatenate to the whole fetch (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 45 }),
        fc.integer({ min: 1, max: 20 }),
        async (n, pageSize) => {
          const { sim, client } = harness();
          seed(
            sim,
            Array.from({ length: n }, (_, i) =>
              issue(i + 1, {
                ...(i > 0 && i % 3 === 0 ? { blockedBy: [i], parent: 1 } : {}),
                // Label events: read with each page here, across pages by fetchSnapshot.
                ...(i % 7 === 2 ? { labels: ["agent:processing"] } : {}),
              }),
            ),
          );
          const pages = await allPages(client, pageSize);
          expect(pages).toHaveLength(Math.max(1, Math.ceil(n / pageSize)));
          expect(pages.every((p) => p.length <= pageSize)).toBe(true);
          const whole = (await fetchSnapshot(client, REPO)).snapshot.issues;
          expect(pages.flat().sort((a, b) => a.number - b.number)).toEqual(whole);
          if (n > 2) expect(whole.find((i) => i.number === 3)?.labelEvents).toBeDefined();
        },
      ),
      { numRuns: 25 },
    );
  });

  it("completes a page before it returns: an overflowing connection is paged with it", async () => {
    const { sim, client } = harness();
    seed(sim, [issue(1), ...Array.from({ length: 60 }, (_, i) => issue(i + 2, { parent: 1 }))]);
    const first = await fetchSnapshotPage(client, REPO, null, { pageSize: 1 });
    expect(first.issues.map((i) => i.number)).toEqual([1]);
    expect(count(sim, "POST /graphql SwitchyardIssueOverflow")).toBe(1);
    expect(first.next).not.toBeNull();
  });

  it("refuses a page size GitHub would refuse", async () => {
    const { client } = harness();
    await expect(fetchSnapshotPage(client, REPO, null, { pageSize: 101 })).rejects.toThrow(
      /1 to 100 issues, got 101/,
    );
  });

  it("tells a refused cursor apart from other failures", async () => {
    const { sim, client } = harness();
    seed(sim, [issue(1)]);
    const error = await fetchSnapshotPage(client, REPO, "bm90LWEtY3Vyc29y").catch((e) => e);
    expect(error).toBeInstanceOf(GitHubApiError);
    expect(isCursorRefused(error)).toBe(true);
    const other = new GitHubApiError({
      kind: "server",
      operation: "fetch",
      request: "POST /graphql",
      status: 502,
      attempts: 3,
      reason: "cursor of doom",
    });
    expect(isCursorRefused(other)).toBe(false);
    expect(isCursorRefused(new Error("cursor"))).toBe(false);
  });
});
