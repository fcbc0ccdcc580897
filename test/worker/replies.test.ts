// Reply state kept by the RepoObject from webhooks (issue 22): the golden histories of
// test/fixtures/replies/ (the issue-sweep seed's archetypes) played on the GitHub simulator as
// issues and comments by people with and without write access, delivered as signed webhooks,
// decided as `switchyard scan` decides the same histories from a snapshot.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import type { ReplyFixture } from "../support/worker-reply-fixture.ts";
import { type Delivery, deliverAndSettle, install, postWebhook, sim } from "./helpers.ts";

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

  it("a thread whose earlier comments were never seen is not evaluated, never unanswered", async () => {
    const t = await setUp("unseen");
    await deliverAndSettle(t.stub);
    await t.comment(botAsk, "fleet[bot]");
    // That comment's webhook is lost.
    await sim("/outbox/drain", { method: "POST" });
    await t.comment("CSV, please.", "acme");
    await deliverAndSettle(t.stub);
    expect(await t.replies()).toEqual([]);
  });
});
