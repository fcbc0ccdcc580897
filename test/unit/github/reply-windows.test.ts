// Reply windows (issue 22): each open issue's comments read backwards only as far as the reply
// rules need decide exactly what the whole thread decides, at the cost the module promises.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fetchIssueComments } from "../../../shared/github/comments.ts";
import { fetchSnapshotPage } from "../../../shared/github/fetch-snapshot.ts";
import { actorOf, type ReplyWindow, replyCommentOf } from "../../../shared/github/reply-windows.ts";
import type { ReplyTrust } from "../../../shared/queue/reply-authors.ts";
import {
  classifyReplyComment,
  type ReplyComment,
  summarizeClassified,
} from "../../../shared/queue/reply-state.ts";
import { harness, issue, REPO, seed, T0 } from "./sim-harness.ts";

const OWNER = "acme"; // REPO's owner: OWNER association, trusted
const BODIES = {
  owner: "Please use CSV.",
  stranger: "Do it now!",
  ask: "Which format should the export use?",
  terminal: 'Done in PR #5.\n<!-- sweep-trace: {"ver":1,"val":"pr"} -->',
  heartbeat: "> 📡 presence board",
  claim: "<!-- claimed-by: idd-bot c-1 supersedes: none 2026-01-01T00:00:00Z branch: issue/1-x -->",
} as const;
type Kind = keyof typeof BODIES;
const AUTHORS: Record<Kind, string> = {
  owner: OWNER,
  stranger: "drive-by",
  ask: "fleet[bot]",
  terminal: "fleet[bot]",
  heartbeat: "fleet[bot]",
  claim: "idd-bot",
};

const trust: ReplyTrust = { replyAuthors: "write" };
const at = (i: number) => new Date(Date.parse(T0) + i * 1000).toISOString().replace(/\.000Z$/, "Z");

function seedThreads(threads: Kind[][]) {
  const h = harness();
  seed(
    h.sim,
    threads.map((kinds, i) =>
      issue(i + 1, {
        body: "Export the data.",
        author: { login: OWNER, type: "User" },
        comments: kinds.map((k, j) => ({
          author: { login: AUTHORS[k], type: AUTHORS[k].endsWith("[bot]") ? "Bot" : "User" },
          body: BODIES[k],
          createdAt: at(j + 1),
          url: `u${j}`,
        })),
      }),
    ),
  );
  return h;
}

function decided(comments: ReplyComment[], partial: boolean) {
  return summarizeClassified(
    {
      url: "issue",
      createdAt: T0,
      author: { login: OWNER, type: "User", association: "OWNER" },
      openingIsHuman: true,
      comments: comments.map(classifyReplyComment),
      partial,
    },
    trust,
  );
}

describe("reply windows", () => {
  it("decide what the whole thread decides, reading back only as far as needed (property)", async () => {
    // Threads up to 260 comments on up to 4 issues: each run seeds and reads about a thousand
    // comments in-process, so 20 runs keep the file within seconds on a shared 2-core machine.
    const thread = fc.oneof(
      fc.array(fc.constantFrom<Kind>(...(Object.keys(BODIES) as Kind[])), { maxLength: 30 }),
      fc
        .tuple(
          fc.array(fc.constantFrom<Kind>("owner", "ask", "stranger"), { maxLength: 120 }),
          fc.integer({ min: 0, max: 140 }),
        )
        .map(([head, beats]) => [...head, ...Array<Kind>(beats).fill("heartbeat")]),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(thread, { minLength: 1, maxLength: 4 }), async (threads) => {
        const { client } = seedThreads(threads);
        const page = await fetchSnapshotPage(client, REPO, null, { replies: trust });
        expect(page.replies.map((w) => w.number)).toEqual(threads.map((_, i) => i + 1));
        for (const w of page.replies) {
          const rest = await fetchIssueComments(client, REPO, w.number);
          expect(w.totalCount).toBe(rest.length);
          // The window is the thread's newest part, in order (what the rules need of it).
          const ids = rest.map((c) => c.id);
          expect(w.comments.map((c) => c.id)).toEqual(ids.slice(ids.length - w.comments.length));
          expect(w.whole).toBe(w.comments.length === rest.length);
          expect(decided(w.comments.map(replyCommentOf), !w.whole)).toEqual(
            decided(rest.map(replyCommentOf), false),
          );
        }
      }),
      { numRuns: 20 },
    );
  });

  it("costs nothing beyond the page when every newest window decides", async () => {
    const { sim, client } = seedThreads([
      ["ask", "owner"],
      [],
      ["owner", "ask", "owner", "terminal"],
    ]);
    sim.counter.reset();
    const page = await fetchSnapshotPage(client, REPO, null, { replies: trust });
    expect(sim.counter.snapshot().total).toBe(1);
    // Only the part the rules need is handed on: from the agent comment before the input.
    expect(page.replies.map((w: ReplyWindow) => [w.comments.length, w.whole])).toEqual([
      [2, true],
      [0, true],
      [3, false],
    ]);
  });

  it("batches the issues that need their newest 100, and pages one issue further back", async () => {
    const beats = (n: number) => Array<Kind>(n).fill("heartbeat");
    const { sim, client } = seedThreads([
      ["ask", "owner", ...beats(30)],
      ["ask", "owner", ...beats(40)],
      [...Array<Kind>(150).fill("owner"), "ask", "owner", ...beats(110)],
    ]);
    sim.counter.reset();
    const page = await fetchSnapshotPage(client, REPO, null, { replies: trust });
    // The page, one batch for the three, one page further back for the long one.
    expect(sim.counter.snapshot().total).toBe(3);
    const long = page.replies[2]!;
    expect(long.whole).toBe(false);
    // Read: the newest 200; kept: from the agent's question on.
    expect(long.comments).toHaveLength(112);
    expect(long.totalCount).toBe(262);
  });

  it("reads a thread the caller holds whole only back to its newest held comment (regression)", async () => {
    // 250 heartbeats decide nothing: without what is held, the thread is read whole again.
    const { sim, client } = seedThreads([[...Array<Kind>(250).fill("heartbeat"), "stranger"]]);
    const ids = (await fetchIssueComments(client, REPO, 1)).map((c) => c.id);
    const held = ids.at(-2)!; // everything but the stranger's new comment is held
    sim.counter.reset();
    const unheld = await fetchSnapshotPage(client, REPO, null, { replies: trust });
    // The page, the batch of the newest 100, then 100 and 51 further back.
    expect(sim.counter.snapshot().total).toBe(4);
    expect(unheld.replies[0]!.whole).toBe(true);
    sim.counter.reset();
    const page = await fetchSnapshotPage(client, REPO, null, {
      replies: trust,
      storedThread: (n) => (n === 1 ? held : null),
    });
    // The page's newest 20 reach back to the held comment: no further request.
    expect(sim.counter.snapshot().total).toBe(1);
    const [w] = page.replies as [ReplyWindow];
    expect(w).toMatchObject({ joins: true, whole: false, totalCount: 251 });
    expect(w.comments.map((c) => c.id)).toEqual(ids.slice(-20));
  });

  it("names a bot as REST does", () => {
    expect(actorOf({ __typename: "Bot", login: "fleet" })).toEqual({
      login: "fleet[bot]",
      type: "Bot",
    });
    expect(actorOf({ __typename: "Bot", login: "fleet[bot]" }).login).toBe("fleet[bot]");
    expect(actorOf(null)).toEqual({ login: "ghost", type: "User" });
  });
});
