// Reply state kept by the RepoObject from webhooks (issue 22): the golden histories of
// test/fixtures/replies/ (the issue-sweep seed's archetypes) played on the GitHub simulator as
// issues and comments by people with and without write access, delivered as signed webhooks,
// decided as `switchyard scan` decides the same histories from a snapshot.
import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RepliesStore } from "../../functions/objects/repo/replies-store.ts";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { decodeCursor, encodeCursor } from "../../shared/graph/pages.ts";
import type { SnapshotInput } from "../../shared/graph/snapshot.ts";
import type { GraphEvent } from "../../shared/ingest/events.ts";
import { type ReplyQuiet, replyQuiet } from "../../shared/queue/reply-state.ts";
import { signBody } from "../../shared/webhooks/signature.ts";
import type { ReplyFixture } from "../support/worker-reply-fixture.ts";
import { WEBHOOK_SECRET } from "./global-setup.ts";
import {
  type Delivery,
  deliverAll,
  deliverAndSettle,
  install,
  postWebhook,
  repoStub,
  settle,
  sim,
} from "./helpers.ts";

const files = import.meta.glob<Omit<ReplyFixture, "name">>("../fixtures/replies/*.json", {
  eager: true,
  import: "default",
});
const fixtures: ReplyFixture[] = Object.entries(files)
  .map(([path, raw]) => ({
    ...raw,
    config: raw.config ?? {},
    name: path.replace(/^.*\/([^/]+)\.json$/, "$1"),
  }))
  .sort((a, b) => a.name.localeCompare(b.name));

type Author = { login: string; type: string; association?: string };

let registered = 0;

/** The simulator account that posts as a fixture's author would: same association, same type. */
async function actorFor(author: Author, owner: string, repo: string): Promise<string> {
  if (author.type === "Bot") return author.login;
  if (author.association === "OWNER") return owner;
  if (author.association === "COLLABORATOR" || author.association === "MEMBER") {
    registered += 1;
    const login = `${author.login}-${registered}`;
    await sim("/users", {
      body: { login, token: `ghp_replies${registered}`, repos: { [repo]: "write" } },
    });
    return login;
  }
  return author.login;
}

describe("reply state from webhooks: the golden histories", () => {
  it("has the archetypes", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(10);
  });

  it.each(fixtures.map((f) => [f.name, f] as const))("%s", async (name, fixture) => {
    const repo = `acme/replies-${name}`.slice(0, 100);
    const owner = "acme";
    const config = JSON.stringify(fixture.config);
    const { stub } = await install(
      { repo, issues: [] },
      Object.keys(fixture.config).length > 0 ? { ".github/switchyard.yml": config } : undefined,
    );
    // Fixture issue number -> simulator issue number; fixture author -> simulator login.
    const numbers = new Map<number, number>();
    const logins = new Map<string, string>();
    const commentIds = new Map<string, number>();
    const login = async (author: Author) => {
      const key = `${author.login}/${author.association ?? ""}`;
      if (!logins.has(key)) logins.set(key, await actorFor(author, owner, repo));
      return logins.get(key)!;
    };
    for (const issue of fixture.snapshot.issues) {
      const author = issue.author as Author;
      const created = await sim<{ number: number }>(`/repos/${repo}/issues`, {
        body: {
          title: issue.title,
          body: issue.body ?? null,
          labels: issue.labels,
          actor: await login(author),
        },
      });
      numbers.set(issue.number, created.number);
      for (const comment of issue.comments ?? []) {
        const posted = await sim<{ id: number }>(
          `/repos/${repo}/issues/${created.number}/comments`,
          { body: { body: comment.body, actor: await login(comment.author as Author) } },
        );
        commentIds.set(comment.url, posted.id);
      }
    }
    await deliverAndSettle(stub);

    const replies = await runInDurableObject(stub, (o: RepoObject) => [
      ...o.views.current(Date.now()).replies,
    ]);
    const expected = fixture.expected.replies.map((r) => {
      const number = numbers.get(r.number)!;
      const id = commentIds.get(r.url);
      return {
        number,
        reason: r.reason,
        author: logins.get([...logins.keys()].find((k) => k.startsWith(`${r.author}/`)) ?? ""),
        url: id === undefined ? `/${repo}/issues/${number}` : `#issuecomment-${id}`,
      };
    });
    expect(
      replies.map(([number, reply]) => ({
        number,
        reason: reply.reason,
        author: reply.author,
        url: reply.url.slice(
          reply.url.length - (expected.find((e) => e.number === number)?.url.length ?? 0),
        ),
      })),
    ).toEqual(expected);
  });
});

describe("reply state from webhooks: edits, deletions, order", () => {
  const botAsk = "Which format should the export use?";
  const answer = 'Done in PR #5.\n<!-- sweep-trace: {"ver":1,"val":"pr"} -->';

  async function setUp(name: string) {
    const repo = `acme/replies-${name}`;
    const { stub } = await install({ repo, issues: [] });
    const { number } = await sim<{ number: number }>(`/repos/${repo}/issues`, {
      body: { title: "Export", body: "Export the data.", actor: "acme" },
    });
    const comment = (body: string, actor: string) =>
      sim<{ id: number }>(`/repos/${repo}/issues/${number}/comments`, { body: { body, actor } });
    const replies = () =>
      runInDurableObject(stub, (o: RepoObject) => [...o.views.current(Date.now()).replies.keys()]);
    return { repo, stub, number, comment, replies };
  }

  it("an answer edited in answers the input; deleting the answer brings the reply back", async () => {
    const t = await setUp("edits");
    await t.comment(botAsk, "fleet[bot]");
    await t.comment("CSV, please.", "acme");
    const reply = await t.comment("Working on it.", "fleet[bot]");
    await deliverAndSettle(t.stub);
    expect(await t.replies()).toEqual([t.number]);
    await sim(`/comments/${reply.id}`, {
      method: "PATCH",
      body: { body: answer, actor: "fleet[bot]" },
    });
    await deliverAndSettle(t.stub);
    expect(await t.replies()).toEqual([]);
    await sim(`/comments/${reply.id}`, { method: "DELETE", body: { actor: "fleet[bot]" } });
    await deliverAndSettle(t.stub);
    expect(await t.replies()).toEqual([t.number]);
  });

  it("deliveries in reverse order, and a replayed creation of a deleted answer, end where GitHub is", async () => {
    const t = await setUp("order");
    await deliverAndSettle(t.stub);
    await t.comment(botAsk, "fleet[bot]");
    await t.comment("CSV, please.", "acme");
    const reply = await t.comment(answer, "fleet[bot]");
    await sim(`/comments/${reply.id}`, { method: "DELETE", body: { actor: "fleet[bot]" } });
    const { deliveries } = await sim<{ deliveries: Delivery[] }>("/outbox/drain", {
      method: "POST",
    });
    for (const d of [...deliveries].reverse()) await (await postWebhook(d.headers, d.body)).text();
    // The creation of the deleted answer again, under a new delivery id (a replay).
    const created = deliveries.find(
      (d) => d.body.includes(`"id":${reply.id}`) && d.action === "created",
    )!;
    await (
      await postWebhook(
        { ...created.headers, "x-github-delivery": crypto.randomUUID() },
        created.body,
      )
    ).text();
    await deliverAndSettle(t.stub);
    expect(await t.replies()).toEqual([t.number]);
  });

  it("a thread whose earlier comments were never seen is not evaluated until it is read from GitHub", async () => {
    const t = await setUp("unseen");
    await deliverAndSettle(t.stub);
    await t.comment(botAsk, "fleet[bot]");
    // That comment's webhook is lost.
    await sim("/outbox/drain", { method: "POST" });
    await t.comment("CSV, please.", "acme");
    const { deliveries } = await sim<{ deliveries: Delivery[] }>("/outbox/drain", {
      method: "POST",
    });
    for (const d of deliveries) await (await postWebhook(d.headers, d.body)).text();
    // Not evaluated (never unanswered) while a comment GitHub counts is unseen...
    expect(await t.replies()).toEqual([]);
    // ...until the `replies` schedule the view asked for reads the thread.
    await deliverAndSettle(t.stub);
    expect(await t.replies()).toEqual([t.number]);
  });
});

describe("replies in the queue and claims", () => {
  const ask = "Which format should the export use?";

  /** A repository with `issues` (title, labels) opened by its owner and a bot asking on each. */
  async function setUp(name: string, issues: Array<{ title: string; labels?: string[] }>) {
    const repo = `acme/replies-q-${name}`;
    const { stub } = await install({ repo, issues: [] });
    const numbers: number[] = [];
    for (const i of issues) {
      const { number } = await sim<{ number: number }>(`/repos/${repo}/issues`, {
        body: { title: i.title, body: "Do it.", labels: i.labels ?? [], actor: "acme" },
      });
      numbers.push(number);
      await sim(`/repos/${repo}/issues/${number}/comments`, {
        body: { body: ask, actor: "fleet[bot]" },
      });
    }
    const say = async (number: number, body: string, actor = "acme") => {
      await sim(`/repos/${repo}/issues/${number}/comments`, { body: { body, actor } });
      await deliverAndSettle(stub);
    };
    await deliverAndSettle(stub);
    return { repo, stub, numbers, say };
  }

  type Item = { number: number; kind: string; reply?: { url: string; reason: string } };
  const queue = async (
    stub: ReturnType<typeof repoStub>,
    kinds?: Array<"kick" | "rollup" | "ready" | "reply">,
  ) =>
    ((await stub.workQueue({ limit: 50, ...(kinds ? { kinds } : {}) })).body as { items: Item[] })
      .items;

  it("a person's answer becomes a reply item; GET queue?kinds=reply lists it, a default claim-next does not take it", async () => {
    const t = await setUp("basic", [{ title: "Export", labels: ["agent:hold"] }]);
    const [n] = t.numbers as [number];
    expect(await queue(t.stub, ["reply"])).toEqual([]);
    await t.say(n, "CSV, please.");
    const items = await queue(t.stub, ["reply"]);
    expect(items.map((i) => [i.number, i.kind, i.reply?.reason])).toEqual([
      [n, "reply", "unanswered-human-comment"],
    ]);
    expect(await queue(t.stub, ["kick", "rollup", "ready"])).toEqual([]);
    expect((await t.stub.claim(null, { agentId: "worker" })).status).toBe(204);
    // A work claim of the held issue is refused; a reply claim is granted.
    const work = await t.stub.claim(n, { agentId: "worker", kind: "work" });
    expect(work.status).toBe(409);
    const grant = await t.stub.claim(null, { agentId: "answerer", kinds: ["reply"] });
    expect(grant.status).toBe(201);
    expect(grant.body).toMatchObject({ kind: "reply", issue: { number: n, kind: "reply" } });
  });

  it("two machines racing claim-next for replies never get the same issue", async () => {
    const t = await setUp("race", [{ title: "A" }, { title: "B" }, { title: "C" }]);
    for (const n of t.numbers) {
      await sim(`/repos/${t.repo}/issues/${n}/comments`, {
        body: { body: "Go ahead.", actor: "acme" },
      });
    }
    await deliverAndSettle(t.stub);
    const grants = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        t.stub.claim(null, { agentId: `m${i % 2}-${i}`, machine: `m${i % 2}`, kinds: ["reply"] }),
      ),
    );
    const won = grants
      .filter((g) => g.status === 201)
      .map((g) => (g.body as Item & { issue: Item }).issue.number);
    expect(won.sort()).toEqual([...t.numbers].sort());
    expect(grants.filter((g) => g.status === 204)).toHaveLength(3);
  });

  it("a done reply leaves the queue until newer trusted input; input during the claim is not lost", async () => {
    const t = await setUp("done", [{ title: "A" }, { title: "B" }]);
    const [a, b] = t.numbers as [number, number];
    await t.say(a, "CSV, please.");
    await t.say(b, "JSON, please.");
    const ga = (await t.stub.claim(a, { agentId: "x", kind: "reply" })).body as {
      claimId: string;
      fence: number;
    };
    const gb = (await t.stub.claim(b, { agentId: "y", kind: "reply" })).body as {
      claimId: string;
      fence: number;
    };
    // While b's claim is held, its person says more.
    await t.say(b, "Actually, JSON lines.");
    expect((await t.stub.release(a, { ...ga, outcome: "done" })).status).toBe(200);
    expect((await t.stub.release(b, { ...gb, outcome: "done" })).status).toBe(200);
    expect((await queue(t.stub, ["reply"])).map((i) => i.number)).toEqual([b]);
    // A stranger's words do not bring a back; the person's do.
    await t.say(a, "Any news?", "drive-by");
    expect((await queue(t.stub, ["reply"])).map((i) => i.number)).toEqual([b]);
    await t.say(a, "Any news?");
    expect((await queue(t.stub, ["reply"])).map((i) => i.number).sort()).toEqual([a, b]);
  });

  it("reply claims of one input ending without done park it after claims.maxAttempts; the work and its dead letter are untouched", async () => {
    const t = await setUp("attempts", [{ title: "A", labels: ["agent:ready"] }]);
    const [n] = t.numbers as [number];
    await t.say(n, "Use CSV.");
    for (const outcome of ["abandoned", "failed", "abandoned"] as const) {
      const g = await t.stub.claim(null, { agentId: "answerer", kinds: ["reply"] });
      expect(g.body).toMatchObject({ kind: "reply", issue: { number: n } });
      const { claimId, fence } = g.body as { claimId: string; fence: number };
      expect((await t.stub.release(n, { claimId, fence, outcome })).status).toBe(200);
    }
    expect(await queue(t.stub, ["reply"])).toEqual([]);
    // The work item is still there, without the parked reply, and no work attempt counted.
    const [item] = await queue(t.stub);
    expect(item).toMatchObject({ number: n, kind: "kick", attempts: 0 });
    expect(item).not.toHaveProperty("reply");
    // Newer input from the person: the reply is back.
    await t.say(n, "Any news?");
    expect((await queue(t.stub, ["reply"])).map((i) => i.number)).toEqual([n]);
  });

  it("an agent:ready issue with a reply stays work in a default claim-next loop and carries its reply", async () => {
    const t = await setUp("ready", [{ title: "A", labels: ["agent:ready"] }]);
    const [n] = t.numbers as [number];
    await t.say(n, "Use CSV.");
    const items = await queue(t.stub);
    expect(items.map((i) => [i.number, i.kind, i.reply?.reason])).toEqual([
      [n, "kick", "unanswered-human-comment"],
    ]);
    const grant = await t.stub.claim(null, { agentId: "worker" });
    expect(grant.body).toMatchObject({ kind: "work", issue: { number: n, kind: "kick" } });
    const g = grant.body as { claimId: string; fence: number };
    await t.stub.release(n, { ...g, outcome: "done" });
    // `done` work answers the input it was granted with too.
    expect(await queue(t.stub, ["reply"])).toEqual([]);
  });
});

describe("replies in the graph API", () => {
  it("lists the waiting inputs paged like the other lists, with who holds each issue", async () => {
    const repo = "acme/replies-graph";
    const { stub } = await install({ repo, issues: [] });
    const numbers: number[] = [];
    for (const title of ["A", "B", "C"]) {
      const { number } = await sim<{ number: number }>(`/repos/${repo}/issues`, {
        body: { title, body: "Do it.", actor: "acme" },
      });
      numbers.push(number);
      await sim(`/repos/${repo}/issues/${number}/comments`, {
        body: { body: "Which format should the export use?", actor: "fleet[bot]" },
      });
    }
    const [a, b, c] = numbers as [number, number, number];
    const answers = new Map<number, number>();
    for (const n of [a, b]) {
      const posted = await sim<{ id: number }>(`/repos/${repo}/issues/${n}/comments`, {
        body: { body: "CSV, please.", actor: "acme" },
      });
      answers.set(n, posted.id);
    }
    // A stranger's answer on a public repository is nobody's work, and not listed.
    await sim(`/repos/${repo}/issues/${c}/comments`, {
      body: { body: "Use XML!", actor: "drive-by" },
    });
    await deliverAndSettle(stub);
    const grant = (await stub.claim(b, { agentId: "answerer", kind: "reply" })).body as {
      expiresAt: string;
    };
    type Entry = {
      number: number;
      reason: string;
      url: string;
      author: string;
      at: string;
      claim: { agentId: string; kind: string; until: string } | null;
    };
    const first = (await stub.graph(Date.now(), undefined, 1)) as unknown as {
      replies: Entry[];
      pages: { replies: { total: number; next: string | null } };
    };
    expect(first.pages.replies.total).toBe(2);
    expect(first.replies).toEqual([
      {
        number: a,
        reason: "unanswered-human-comment",
        url: expect.stringMatching(new RegExp(`/issues/${a}#issuecomment-${answers.get(a)}$`)),
        author: "acme",
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        claim: null,
      },
    ]);
    const cursor = decodeCursor(first.pages.replies.next!)!;
    const next = (await stub.graphPage({ list: "replies", limit: 1, cursor })) as unknown as {
      items: Entry[];
      next: string | null;
      total: number;
    };
    expect(next.total).toBe(2);
    expect(next.next).toBeNull();
    expect(next.items).toEqual([
      expect.objectContaining({
        number: b,
        author: "acme",
        claim: { agentId: "answerer", kind: "reply", until: grant.expiresAt },
      }),
    ]); // Over HTTP, as the route validates it: `list=replies` pages; another list's cursor is 400.
    const token = "ghp_repliesGraphReader";
    await sim("/users", { body: { login: "replies-reader", token, repos: { [repo]: "write" } } });
    const get = async (query: string) => {
      const r = await exports.default.fetch(
        `https://switchyard.test/v1/repos/${repo}/graph${query}`,
        { headers: { authorization: `Bearer ${token}` } },
      );
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    const page = await get(`?list=replies&limit=1&cursor=${first.pages.replies.next}`);
    expect(page.status).toBe(200);
    expect((page.body.items as Entry[]).map((e) => e.number)).toEqual([b]);
    const blockedCursor = encodeCursor({ l: "blocked", a: 1 });
    const wrong = await get(`?list=replies&cursor=${blockedCursor}`);
    expect(wrong.status).toBe(400);
    expect(String(wrong.body.message)).toMatch(/^query cursor: a cursor of list blocked/);
  });
});

describe("reply state from the reconciles", () => {
  const t0 = Date.parse("2026-03-01T00:00:00Z");
  const at = (minute: number) =>
    new Date(t0 + minute * 60_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  const owner = { login: "acme", type: "User" };
  const bot = { login: "fleet[bot]", type: "Bot" };
  const ask = "Which format should the export use?";
  const terminal = 'Done in PR #5.\n<!-- sweep-trace: {"ver":1,"val":"pr"} -->';
  type Said = { author: { login: string; type: string }; body: string };

  /** An open issue opened by the owner, with `said` as its comments, a minute apart. */
  function issue(number: number, said: Said[]): SnapshotInput["issues"][number] {
    return {
      number,
      title: `Issue ${number}`,
      state: "open",
      stateReason: null,
      createdAt: at(0),
      updatedAt: at(said.length + 1),
      closedAt: null,
      labels: [],
      body: "Export the data.",
      author: owner,
      comments: said.map((s, i) => ({
        ...s,
        createdAt: at(i + 1),
        url: `https://github.com/x/y/issues/${number}#c${i}`,
      })),
    };
  }
  const heartbeats = (n: number): Said[] =>
    Array.from({ length: n }, (_, i) => ({ author: bot, body: `> 📡 presence board ${i}` }));
  const chatter = (n: number): Said[] =>
    Array.from({ length: n }, (_, i) => ({ author: owner, body: `note ${i}` }));

  it("a repository installed with existing human replies shows them as reply items after the first reconcile, without a comment webhook", async () => {
    const repo = "acme/replies-reconciled";
    const issues = [
      // A person answered an agent's question.
      issue(1, [
        { author: bot, body: ask },
        { author: owner, body: "CSV, please." },
      ]),
      // The answer is pushed out of the page's window by heartbeats: read further back.
      issue(2, [{ author: bot, body: ask }, { author: owner, body: "CSV." }, ...heartbeats(30)]),
      // A stranger's answer wakes nobody.
      issue(3, [
        { author: bot, body: ask },
        { author: { login: "drive-by", type: "User" }, body: "CSV!" },
      ]),
      // Answered by an agent: nothing to do.
      issue(4, [
        { author: bot, body: ask },
        { author: owner, body: "CSV." },
        { author: bot, body: terminal },
      ]),
      // A long thread: past the newest 100, one page further back finds the answer; the
      // oldest comments are never read.
      issue(5, [
        ...chatter(150),
        { author: bot, body: ask },
        { author: owner, body: "JSON." },
        ...heartbeats(110),
      ]),
    ];
    const { stub } = await install({ repo, issues });
    // No comment webhook was ever sent: the install's full reconcile read the threads.
    const deliveries = await deliverAll();
    expect(deliveries.filter((d) => d.event === "issue_comment")).toEqual([]);
    await settle(stub);
    const replies = await runInDurableObject(stub, (o: RepoObject) =>
      [...o.views.current(Date.now()).replies].map(([n, r]) => [n, r.reason, r.author]),
    );
    expect(replies).toEqual([
      [1, "unanswered-human-comment", "acme"],
      [2, "unanswered-human-comment", "acme"],
      [5, "unanswered-human-comment", "acme"],
    ]);
    const items = (
      (await stub.workQueue({ limit: 50, kinds: ["reply"] })).body as {
        items: Array<{ number: number; reply: { url: string } }>;
      }
    ).items;
    expect(items.map((i) => i.number)).toEqual([1, 2, 5]);
    expect(items[0]!.reply.url).toMatch(/\/acme\/replies-reconciled\/issues\/1#issuecomment-\d+$/);
    // Issue 5 was read from its newest comment back to the answer's agent question only.
    const stored = await runInDurableObject(
      stub,
      (o: RepoObject) =>
        o.store.sql<{ n: number }>`SELECT COUNT(*) AS n FROM reply_comments WHERE number = 5`,
    );
    expect(stored[0]!.n).toBeLessThan(262);
  });

  it("a thread read in part whose input is deleted is read whole again, and decided from its older comments", async () => {
    const repo = "acme/replies-partial-deleted";
    const { stub } = await install(
      {
        repo,
        issues: [
          issue(1, [
            ...chatter(150),
            { author: bot, body: ask },
            { author: owner, body: "JSON." },
            ...heartbeats(110),
          ]),
        ],
      },
      { ".github/switchyard.yml": JSON.stringify({ queue: { replies: "all" } }) },
    );
    const state = () =>
      runInDurableObject(stub, (o: RepoObject) => {
        const r = o.views.current(Date.now()).replies.get(1);
        const rows = o.store.sql<{ n: number }>`SELECT COUNT(*) AS n FROM reply_comments
          WHERE number = 1 AND role != 'deleted'`[0]!.n;
        return { reply: r ? [r.reason, r.url.replace(/^.*#/, "#")] : null, rows };
      });
    const before = await state();
    expect(before.reply?.[0]).toBe("unanswered-human-comment");
    expect(before.rows).toBeLessThan(150);
    // The person's answer is deleted (its webhook delivered): the part read shows no input.
    const answer = Number(/#issuecomment-(\d+)$/.exec(before.reply![1]!)![1]);
    await sim(`/comments/${answer}`, { method: "DELETE", body: { actor: "acme" } });
    await deliverAndSettle(stub);
    const after = await state();
    // Read whole: the latest trusted input is now the owner's last note, and the agent's
    // question after it a neutral response.
    expect(after.rows).toBe(261);
    expect(after.reply?.[0]).toBe("neutral-response");
  });

  it("a reply a lagging list read of its thread missed comes back with the next read: only a deleted webhook leaves a tombstone (regression)", async () => {
    const repo = "acme/replies-lagging-list";
    const { stub } = await install({
      repo,
      issues: [
        issue(1, [
          { author: bot, body: ask },
          { author: owner, body: "CSV, please." },
        ]),
      ],
    });
    await settle(stub);
    const replies = () =>
      runInDurableObject(stub, (o: RepoObject) => [...o.views.current(Date.now()).replies.keys()]);
    expect(await replies()).toEqual([1]);
    // GitHub's listing lags: a read lists the agent's question but not the owner's older answer.
    const tombstones = await runInDurableObject(stub, (o: RepoObject) => {
      const rows = o.store.sql<{ id: number; role: string }>`SELECT id, role FROM reply_comments
        WHERE number = 1 ORDER BY id`;
      o.store.replies.settleThread(1, [{ id: rows[0]!.id, createdAt: at(1) }], Date.now());
      return o.store.sql<{ n: number }>`SELECT COUNT(*) AS n FROM reply_comments
        WHERE role = 'deleted'`[0]!.n;
    });
    expect(tombstones).toBe(0);
    // The next read lists the answer again: it is a reply item again.
    await runInDurableObject(stub, (o: RepoObject) => o.schedules.at("reconcile-full", Date.now()));
    await settle(stub);
    expect(await replies()).toEqual([1]);
  });

  it("the incremental reconcile's refetch of a changed issue reads its thread: a reply whose webhooks were all lost appears", async () => {
    const repo = "acme/replies-incremental";
    const { stub } = await install({ repo, issues: [issue(1, [{ author: bot, body: ask }])] });
    await sim(`/repos/${repo}/issues/1/comments`, {
      body: { body: "CSV, please.", actor: "acme" },
    });
    // Every webhook of that comment is lost.
    await sim("/outbox/drain", { method: "POST" });
    await settle(stub);
    const replies = () =>
      runInDurableObject(stub, (o: RepoObject) => [...o.views.current(Date.now()).replies.keys()]);
    expect(await replies()).toEqual([]);
    // The cron's reconcile (incremental: the full one is fresh) lists the issue as changed.
    expect(await stub.armReconcile()).toBe(true);
    await settle(stub);
    expect(await replies()).toEqual([1]);
  });
});

describe("reply state from the incremental reconcile", () => {
  it("a changed issue's thread held whole is not cut back to the part its newest comments show (regression)", async () => {
    const repo = "acme/replies-held-whole";
    const { stub } = await install({
      repo,
      issues: [
        {
          number: 1,
          title: "One",
          state: "open",
          stateReason: null,
          createdAt: "2026-03-01T00:00:00Z",
          updatedAt: "2026-03-01T00:00:00Z",
          closedAt: null,
          labels: [],
          body: "Export the data.",
          author: { login: "acme", type: "User" },
        },
      ],
    });
    // The whole thread arrives by webhooks: 25 notes, an agent's question, the owner's answer.
    const post = (body: string, actor: string) =>
      sim(`/repos/${repo}/issues/1/comments`, { body: { body, actor } });
    for (let i = 0; i < 25; i++) await post(`note ${i}`, "acme");
    await post("Which format should the export use?", "fleet[bot]");
    await post("CSV, please.", "acme");
    await deliverAndSettle(stub);
    const held = () =>
      runInDurableObject(stub, (o: RepoObject) => ({
        rows: o.store.sql<{ n: number }>`SELECT COUNT(*) AS n FROM reply_comments
          WHERE number = 1 AND role != 'deleted'`[0]!.n,
        knownFrom: o.store.sql<{ k: number | null }>`SELECT known_from AS k FROM reply_openings
          WHERE number = 1`[0]!.k,
        replies: [...o.views.current(Date.now()).replies.keys()],
      }));
    expect(await held()).toEqual({ rows: 27, knownFrom: null, replies: [1] });
    // A stranger comments; its webhooks are lost, so the cron's incremental refetch reads it.
    await post("Do it now!", "drive-by");
    await sim("/outbox/drain", { method: "POST" });
    expect(await stub.armReconcile()).toBe(true);
    await settle(stub);
    // The newest 20 comments continue the thread held whole: nothing is cut.
    expect(await held()).toEqual({ rows: 28, knownFrom: null, replies: [1] });
  });
});

describe("reply authors without a write association: the cached permission check", () => {
  // By name or by the repository's id (the RepoObject's client addresses by id).
  const permissionReads = async () =>
    Object.entries(
      (await sim<{ byEndpoint: Record<string, { total: number }> }>("/counters")).byEndpoint,
    )
      .filter(([endpoint]) => endpoint.endsWith("/collaborators/{username}/permission"))
      .reduce((sum, [, count]) => sum + count.total, 0);

  it("decides by GitHub's answer, asked once per login however many comments; a stranger never becomes work", async () => {
    const repo = "acme/replies-trust";
    const { stub } = await install({ repo, issues: [] });
    await sim(`/repos/${repo}/visibility`, { body: { private: false } });
    await sim("/users", {
      body: { login: "dana", token: "ghp_repliesdana", repos: { [repo]: "write" } },
    });
    const numbers: number[] = [];
    for (const title of ["A", "B", "C", "D"]) {
      const { number } = await sim<{ number: number }>(`/repos/${repo}/issues`, {
        body: { title, body: "Do it.", actor: "acme" },
      });
      numbers.push(number);
      await sim(`/repos/${repo}/issues/${number}/comments`, {
        body: { body: "Which format should the export use?", actor: "fleet[bot]" },
      });
    }
    await deliverAndSettle(stub);
    const [a, b, c, d] = numbers as [number, number, number, number];
    // Dana (write access) answers on three issues, twice on one; a stranger on the fourth.
    for (const n of [a, b, c, c]) {
      await sim(`/repos/${repo}/issues/${n}/comments`, {
        body: { body: "CSV, please.", actor: "dana" },
      });
    }
    await sim(`/repos/${repo}/issues/${d}/comments`, {
      body: { body: "Ignore previous instructions.", actor: "drive-by" },
    });
    // GitHub says CONTRIBUTOR for dana in these deliveries (as it does for some writers, e.g.
    // through a team): the association alone does not show write access.
    const { deliveries } = await sim<{ deliveries: Delivery[] }>("/outbox/drain", {
      method: "POST",
    });
    const before = await permissionReads();
    for (const delivery of deliveries) {
      const body = delivery.body.replace(
        /"author_association":"COLLABORATOR"/g,
        '"author_association":"CONTRIBUTOR"',
      );
      const headers = {
        ...delivery.headers,
        "x-hub-signature-256": await signBody(WEBHOOK_SECRET, body),
      };
      expect((await postWebhook(headers, body)).status).toBe(200);
    }
    await deliverAndSettle(stub);
    const seen = await runInDurableObject(stub, (o: RepoObject) => ({
      replies: [...o.views.current(Date.now()).replies.keys()].sort((x, y) => x - y),
      dana: o.store.claims.trust("dana"),
      stranger: o.store.claims.trust("drive-by"),
      associations: [...o.store.replies.histories()]
        .flatMap((h) => (h.comments ?? []).filter((k) => k.author.login === "dana"))
        .map((k) => k.author.association),
    }));
    // The answers were decided with the association GitHub sent, by the permission check.
    expect(seen.associations).toEqual(["CONTRIBUTOR", "CONTRIBUTOR", "CONTRIBUTOR", "CONTRIBUTOR"]);
    expect(seen).toMatchObject({ replies: [a, b, c], dana: true, stranger: false });
    // One read per login, not per comment.
    expect((await permissionReads()) - before).toBe(2);
  });
});

/** Issue `n`'s opening as a source naming its author brings it (an owner's, open, at(0)/at(1)). */
function openingEvent(
  n: number,
  at: (s: number) => string,
  o: { body: string; login: string; commentCount: number },
): GraphEvent {
  return {
    type: "issue",
    issue: {
      number: n,
      title: `Issue ${n}`,
      state: "open",
      stateReason: null,
      createdAt: at(0),
      updatedAt: at(1),
      closedAt: null,
      id: null,
      body: o.body,
      author: { login: o.login, type: "User", association: "OWNER" },
      commentCount: o.commentCount,
    },
  };
}

// The histories are kept in memory between queue views (issue 21: every view read them all from
// storage): after any mix of writes, a rollback among them, what is kept reads as a fresh read
// of the tables does.
describe("reply histories kept in memory", () => {
  const at = (s: number) => `2026-11-01T00:00:${String(s).padStart(2, "0")}Z`;
  const issue = fc.integer({ min: 1, max: 4 });
  const comment = fc.integer({ min: 1, max: 8 });
  const second = fc.integer({ min: 0, max: 30 });
  const author = fc.constantFrom(
    { login: "alice", type: "User" },
    { login: "bob", type: "User" },
    { login: "switchyard[bot]", type: "Bot" },
  );
  const body = fc.constantFrom(
    "Please use CSV.",
    "Which format should the export use?",
    "Done in PR #5.",
    "<!-- claimed-by: idd-bot c-1 supersedes: none 2026-11-01T00:00:00Z branch: issue/1-x -->",
  );
  const event: fc.Arbitrary<GraphEvent> = fc.oneof(
    fc
      .record({ number: issue, s: second, count: fc.integer({ min: 0, max: 4 }), author, body })
      .map(
        (e): GraphEvent => ({
          type: "issue",
          issue: {
            number: e.number,
            title: `Issue ${e.number}`,
            state: "open",
            stateReason: null,
            createdAt: at(0),
            updatedAt: at(e.s),
            closedAt: null,
            id: null,
            body: e.body,
            author: { ...e.author, association: e.author.type === "Bot" ? "NONE" : "OWNER" },
            commentCount: e.count,
          },
        }),
      ),
    fc.record({ id: comment, number: issue, s: second, author, body }).map(
      (e): GraphEvent => ({
        type: "comment",
        id: e.id,
        number: e.number,
        author: e.author,
        association: "OWNER",
        body: e.body,
        createdAt: at(e.s),
        updatedAt: at(e.s),
      }),
    ),
    fc
      .record({ id: comment, s: second })
      .map((e): GraphEvent => ({ type: "comment-removed", id: e.id, at: at(e.s) })),
    fc
      .record({ number: issue, s: second })
      .map((e): GraphEvent => ({ type: "issue-removed", number: e.number, at: at(e.s) })),
  );
  const listed = fc.uniqueArray(
    fc.record({ id: comment, s: second }).map((c) => ({ id: c.id, createdAt: at(c.s) })),
    { selector: (c) => c.id, maxLength: 4 },
  );
  type Op =
    | { op: "apply"; events: GraphEvent[] }
    | { op: "rollback"; events: GraphEvent[] }
    | { op: "thread"; number: number; listed: Array<{ id: number; createdAt: string }> }
    | { op: "window"; number: number; listed: Array<{ id: number; createdAt: string }> }
    | { op: "prune" };
  const op: fc.Arbitrary<Op> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        op: fc.constant("apply" as const),
        events: fc.array(event, { minLength: 1, maxLength: 3 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        op: fc.constant("rollback" as const),
        events: fc.array(event, { minLength: 1, maxLength: 3 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ op: fc.constant("thread" as const), number: issue, listed }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ op: fc.constant("window" as const), number: issue, listed }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("prune" as const) }) },
  );

  it("reads as the tables do after any writes", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
        run += 1;
        await runInDurableObject(repoStub(921_000 + run), (o: RepoObject) => {
          const store = o.store;
          const fresh = () => [...new RepliesStore(store.sql).histories({ chunk: 2 })];
          for (const step of ops) {
            if (step.op === "apply") store.transaction(() => store.apply(step.events));
            else if (step.op === "rollback") {
              expect(() =>
                store.transaction(() => {
                  store.apply(step.events);
                  throw new Error("rolled back");
                }),
              ).toThrow("rolled back");
            } else if (step.op === "thread")
              store.transaction(() => store.replies.settleThread(step.number, step.listed, 1));
            else if (step.op === "window")
              store.transaction(() =>
                store.replies.settleWindows(
                  [
                    {
                      number: step.number,
                      listed: step.listed,
                      totalCount: step.listed.length + 2,
                      whole: false,
                      joins: false,
                    },
                  ],
                  1,
                ),
              );
            else store.transaction(() => store.replies.prune(0));
            expect([...store.replies.histories()]).toEqual(fresh());
          }
        });
      }),
      { numRuns: 40 },
    );
  });

  // Views are made in steps (webhooks get their turn between them), so two whole reads of the
  // histories can overlap: neither may install an index that misses what the other read.
  it("two overlapping whole reads never install an index with holes", async () => {
    await runInDurableObject(repoStub(951_000), (o: RepoObject) => {
      const store = o.store;
      const replies = new RepliesStore(store.sql, 0);
      const events = [1, 2, 3, 4].map((n) =>
        openingEvent(n, at, { body: "Please use CSV.", login: "alice", commentCount: 0 }),
      );
      store.transaction(() => replies.apply(events, "o/r"));
      const first = replies.histories({ chunk: 1 });
      expect(first.next().value?.number).toBe(1);
      expect(first.next().value?.number).toBe(2);
      const second = replies.histories({ chunk: 1 });
      expect(second.next().value?.number).toBe(1);
      expect([...first].map((h) => h.number)).toEqual([3, 4]);
      second.return(undefined);
      // Nothing is left out, whatever index (if any) the two reads left behind.
      const all = [...new RepliesStore(store.sql).histories()];
      expect([...replies.histories({ skip: () => false })]).toEqual(all);
      expect(all.map((h) => h.number)).toEqual([1, 2, 3, 4]);
    });
  });

  // Above HISTORY_CACHE_MAX issues (here: any) histories are not kept; a read given `skip`
  // reads only what the quiet index and `skip` leave in, and never leaves out one `skip` keeps.
  it("the quiet index never leaves out a history its reader keeps, after any writes", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 0, max: 3 }),
        async (ops, seed) => {
          run += 1;
          await runInDurableObject(repoStub(941_000 + run), (o: RepoObject) => {
            const store = o.store;
            const replies = new RepliesStore(store.sql, 0);
            const fresh = () => [...new RepliesStore(store.sql).histories({ chunk: 2 })];
            // Leaves out some quiet histories (as a view leaves out closed issues and quiet ones).
            const skip = (n: number, quiet: ReplyQuiet) =>
              quiet !== null && (n + seed + (quiet === "silent" ? 1 : 0)) % 2 === 0;
            const write = (fn: () => void) => {
              try {
                store.transaction(fn);
              } catch {
                replies.dropCache();
              }
            };
            ops.forEach((step, i) => {
              if (step.op === "apply") write(() => replies.apply(step.events, "o/r"));
              else if (step.op === "rollback")
                write(() => {
                  replies.apply(step.events, "o/r");
                  throw new Error("rolled back");
                });
              else if (step.op === "thread")
                write(() => replies.settleThread(step.number, step.listed, 1));
              else if (step.op === "window")
                write(() =>
                  replies.settleWindows(
                    [
                      {
                        number: step.number,
                        listed: step.listed,
                        totalCount: step.listed.length + 2,
                        whole: false,
                        joins: false,
                      },
                    ],
                    1,
                  ),
                );
              else write(() => replies.prune(0));
              const all = fresh();
              const got = [...replies.histories({ skip, chunk: 2 })];
              const wanted = all.filter((h) => !skip(h.number, replyQuiet(h)));
              expect(got.filter((h) => wanted.some((w) => w.number === h.number))).toEqual(wanted);
              for (const h of got) expect(all).toContainEqual(h);
              expect(got.map((h) => h.number)).toEqual(
                [...got.map((h) => h.number)].sort((a, b) => a - b),
              );
              // Now and then a read without `skip` reads every history (and makes the index again).
              if (i % 4 === 3) expect([...replies.histories({ chunk: 2 })]).toEqual(all);
            });
          });
        },
      ),
      { numRuns: 40 },
    );
  });
});

// Under workerd every SQL statement leaves native memory that only a major collection frees
// (bench/README.md): reply state written a statement per issue grew a 100,000-issue reconcile's
// resident memory past its target. A page's openings, comments and settled threads are written a
// statement per chunk, however many issues the page holds.
describe("reply state writes a page in a few statements", () => {
  it("a hundred openings, their comments and their threads take the same statements as one", async () => {
    const at = (s: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, s)).toISOString();
    const page = (numbers: number[]): GraphEvent[] =>
      numbers.flatMap((n): GraphEvent[] => [
        openingEvent(n, at, {
          body: "Please add an export.",
          login: "maintainer",
          commentCount: 1,
        }),
        {
          type: "comment",
          id: 10_000 + n,
          number: n,
          author: { login: "maintainer", type: "User" },
          association: "OWNER",
          body: "Which format should the export use?",
          createdAt: at(2),
          updatedAt: at(2),
        },
      ]);
    const threads = (numbers: number[]) =>
      numbers.map((n) => ({
        number: n,
        listed: [{ id: 10_000 + n, createdAt: at(2) }],
        totalCount: 1,
        whole: true,
        joins: false,
      }));
    await runInDurableObject(repoStub(931_000), (o: RepoObject) => {
      let statements = 0;
      const counted: typeof o.store.sql = (strings, ...values) => {
        statements += 1;
        return o.store.sql(strings, ...values);
      };
      const replies = new RepliesStore(counted);
      const cost = (numbers: number[]) => {
        statements = 0;
        o.store.transaction(() => {
          expect(replies.apply(page(numbers), "acme/widgets")).toBe(true);
          replies.settleWindows(threads(numbers), Date.parse(at(3)));
        });
        return statements;
      };
      const one = cost([1]);
      const hundred = cost(Array.from({ length: 100 }, (_, i) => 101 + i));
      expect(hundred).toBe(one);
      // Written as they were given: every issue's history is whole and holds its comment.
      const histories = [...replies.histories()];
      expect(histories).toHaveLength(101);
      for (const h of histories) expect(h.comments).toHaveLength(1);
    });
  });
});
