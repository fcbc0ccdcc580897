import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../../shared/config/schema.ts";
import { analyzeSnapshotCompact } from "../../../shared/graph/analyze.ts";
import { parseSnapshot } from "../../../shared/graph/snapshot.ts";
import { isTrustedReplyAuthor } from "../../../shared/queue/reply-authors.ts";
import {
  type ClassifiedHistory,
  classifyReplyHistory,
  decideReply,
  quietFor,
  type ReplyComment,
  type ReplyHistory,
  replyAuthorScope,
  replyAuthorToCheck,
  replyLeftOut,
  replyQuiet,
  replyState,
  summarizeClassified,
  summarizeReplies,
} from "../../../shared/queue/reply-state.ts";
import { scanReplies } from "../../../shared/queue/scan-replies.ts";
import { runCli } from "../../support/cli.ts";
import { fixtureConfig, loadReplyFixtures } from "../../support/reply-fixtures.ts";
import { oracleSummarizeReplies } from "../../support/reply-oracle.ts";

const fixtures = await loadReplyFixtures();

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "switchyard-replies-"));
});

const owner = { login: "founder", type: "User", association: "OWNER" };
const bot = { login: "fleet[bot]", type: "Bot" };
const at = (day: number) => `2026-11-${String(day).padStart(2, "0")}T00:00:00Z`;
const comment = (day: number, author: ReplyComment["author"], body: string): ReplyComment => ({
  author,
  body,
  createdAt: at(day),
  url: `https://github.com/o/r/issues/1#issuecomment-${day}`,
});
const history = (comments: ReplyComment[] | undefined, extra: Partial<ReplyHistory> = {}) => ({
  url: "https://github.com/o/r/issues/1",
  createdAt: at(1),
  title: "An issue",
  body: "Please look at this.",
  author: owner,
  comments,
  ...extra,
});
const config = (queue: Record<string, unknown> = {}) => ConfigSchema.parse({ queue });

describe("golden reply histories (the seed's archetypes), decided by the shared rules", () => {
  it("has the archetypes", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(10);
  });

  it.each(fixtures.map((f) => [f.name, f] as const))("%s", (_, fixture) => {
    const snapshot = parseSnapshot(fixture.snapshot);
    const cfg = fixtureConfig(fixture);
    const analysis = analyzeSnapshotCompact(snapshot, { config: cfg });
    expect(scanReplies(snapshot, analysis, cfg)).toEqual(fixture.expected.replies);
  });
});

describe("switchyard scan reports replies", () => {
  it.each(fixtures.map((f) => [f.name, f] as const))("%s", async (name, fixture) => {
    const snapshotPath = join(dir, `${name}.json`);
    const configPath = join(dir, `${name}.yml`);
    await writeFile(snapshotPath, JSON.stringify(fixture.snapshot));
    // JSON is YAML: the fixture's configuration as the file the CLI reads.
    await writeFile(configPath, JSON.stringify(fixture.config));
    const run = await runCli(["scan", "--snapshot", snapshotPath, "--config", configPath]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.replies).toEqual(fixture.expected.replies);
    // `replies` sits after `ready`, the other keys as before.
    expect(Object.keys(out)).toEqual([
      "repo",
      "now",
      "window",
      "kicks",
      "rollupCandidates",
      "blocked",
      "ready",
      "replies",
      "diagnostics",
      "stats",
    ]);
  });

  it("without comments the output is byte-identical to the scan without the reply rules", async () => {
    for (const fixture of fixtures) {
      const stripped = {
        ...fixture.snapshot,
        issues: fixture.snapshot.issues.map(({ comments: _c, author: _a, ...rest }) => rest),
      };
      const withPath = join(dir, `${fixture.name}-with.json`);
      const withoutPath = join(dir, `${fixture.name}-without.json`);
      await writeFile(withPath, JSON.stringify(fixture.snapshot));
      await writeFile(withoutPath, JSON.stringify(stripped));
      const withComments = await runCli(["scan", "--snapshot", withPath]);
      const without = await runCli(["scan", "--snapshot", withoutPath]);
      expect(without.code).toBe(0);
      expect(JSON.parse(without.stdout).replies).toBeUndefined();
      const { replies: _r, ...rest } = JSON.parse(withComments.stdout);
      expect(without.stdout).toBe(`${JSON.stringify(rest, null, 2)}\n`);
    }
  });

  it("the demo snapshot's scan is unchanged (no comments, no replies key)", async () => {
    const run = await runCli(["scan", "--snapshot", "infra/demo/snapshot.json"]);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('"replies"');
  });

  it("a malformed comment exits 2 naming its path", async () => {
    const path = join(dir, "bad-comment.json");
    const bad = structuredClone(fixtures[0]!.snapshot);
    (bad.issues[0]!.comments![0] as { createdAt: string }).createdAt = "yesterday";
    await writeFile(path, JSON.stringify(bad));
    const run = await runCli(["scan", "--snapshot", path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("issues[0].comments[0].createdAt");
  });
});

describe("reply authors", () => {
  const write = { replyAuthors: "write" as const };
  it.each([
    ["OWNER", true],
    ["member", true],
    ["COLLABORATOR", true],
    ["CONTRIBUTOR", false],
    ["NONE", false],
    [undefined, false],
  ])("write: association %s -> %s", (association, trusted) => {
    expect(isTrustedReplyAuthor({ login: "x", type: "User", association }, write)).toBe(trusted);
  });

  it("write: a permission check already made decides an author without association", () => {
    const knownWrite = (login: string) => (login === "alice" ? true : undefined);
    expect(isTrustedReplyAuthor({ login: "alice" }, { ...write, knownWrite })).toBe(true);
    expect(isTrustedReplyAuthor({ login: "bob" }, { ...write, knownWrite })).toBe(false);
  });

  it("write: whom GitHub must be asked about, walking back from the newest input to a trusted one", () => {
    const contributor = (login: string) => ({ login, type: "User", association: "CONTRIBUTOR" });
    const ask = (
      comments: ReplyComment[],
      known: Record<string, boolean> = {},
      replyAuthors: "write" | string[] = "write",
    ) =>
      replyAuthorToCheck(classifyReplyHistory(history(comments)), {
        replyAuthors,
        knownWrite: (login) => known[login],
      });
    const asked = [comment(2, bot, "Which format?")];
    // The newest input's author first; once GitHub said no, the one before.
    const thread = [
      ...asked,
      comment(3, contributor("carol"), "CSV."),
      comment(4, contributor("dan"), "XML!"),
    ];
    expect(ask(thread)).toBe("dan");
    expect(ask(thread, { dan: false })).toBe("carol");
    // A trusted input newer than them: nothing to ask (older words cannot matter).
    expect(ask([...thread, comment(5, owner, "JSON.")])).toBeNull();
    expect(ask(thread, { dan: true })).toBeNull();
    expect(ask(thread, { dan: false, carol: false })).toBeNull();
    // Bots, authors with a write association and listed logins are never asked about.
    expect(ask([...asked, comment(3, { login: "x[bot]", type: "Bot" }, "hi")])).toBeNull();
    expect(ask(thread, {}, ["dan"])).toBeNull();
    // The opening's author, when no comment is input, and only for a human opening.
    expect(
      replyAuthorToCheck(classifyReplyHistory(history(asked, { author: contributor("eve") })), {
        replyAuthors: "write",
      }),
    ).toBe("eve");
    // A partial window's opening is older than input it left out: never asked about.
    const window = classifyReplyHistory(history(asked, { author: contributor("eve") }));
    expect(replyAuthorToCheck({ ...window, partial: true }, { replyAuthors: "write" })).toBeNull();
    // A thread never read asks nothing.
    expect(replyAuthorToCheck(classifyReplyHistory(history(undefined)), write)).toBeNull();
  });

  it("asks only about input that can count: after an agent comment under `answers`, none when off", () => {
    const contributor = (login: string) => ({ login, type: "User", association: "CONTRIBUTOR" });
    // frank spoke before any agent did; gina answered the agent's question.
    const thread = classifyReplyHistory(
      history(
        [
          comment(1, contributor("frank"), "Any news?"),
          comment(2, bot, "Which format?"),
          comment(3, contributor("gina"), "CSV."),
        ],
        { author: contributor("eve") },
      ),
    );
    const known = (answers: Record<string, boolean>) => ({
      replyAuthors: "write" as const,
      knownWrite: (login: string) => answers[login],
    });
    expect(replyAuthorToCheck(thread, known({}), "answers")).toBe("gina");
    // GitHub said no to gina: under `answers` nobody before the agent matters (no request).
    expect(replyAuthorToCheck(thread, known({ gina: false }), "answers")).toBeNull();
    expect(replyAuthorToCheck(thread, known({ gina: false }), "any")).toBe("frank");
    expect(replyAuthorToCheck(thread, known({ gina: false, frank: false }), "any")).toBe("eve");
    expect(replyAuthorToCheck(thread, known({}), "none")).toBeNull();
    // No agent comment at all: under `answers` nothing can count.
    const unasked = classifyReplyHistory(
      history([comment(1, contributor("frank"), "Any news?")], { author: contributor("eve") }),
    );
    expect(replyAuthorToCheck(unasked, known({}), "answers")).toBeNull();
    // The scope follows the policy and the issue's labels.
    const policy = { replies: "answers" as const, needsHumanLabel: "agent:needs-human" };
    expect(replyAuthorScope([], policy)).toBe("answers");
    expect(replyAuthorScope(["Agent:Needs-Human"], policy)).toBe("any");
    expect(replyAuthorScope([], { ...policy, replies: "all" })).toBe("any");
    expect(replyAuthorScope([], { ...policy, replies: "off" })).toBe("none");
  });

  it("a list names exactly its logins (case-insensitive), association or not", () => {
    const list = { replyAuthors: ["Alice"] };
    expect(isTrustedReplyAuthor({ login: "alice" }, list)).toBe(true);
    expect(isTrustedReplyAuthor({ login: "bob", association: "OWNER" }, list)).toBe(false);
    expect(isTrustedReplyAuthor(null, list)).toBe(false);
  });
});

describe("reply state", () => {
  it("an issue whose comments were never read is not evaluated (never unanswered)", () => {
    expect(replyState(history(undefined), [], config({ replies: "all" }))).toEqual({
      state: "not-evaluated",
    });
  });

  it("queue.replies off: nothing is a reply", () => {
    const h = history([comment(2, bot, "Question?"), comment(3, owner, "Answer.")]);
    expect(replyState(h, [], config({ replies: "off" }))).toEqual({
      state: "answered",
      why: "off",
    });
  });

  it("answers: input that follows no agent comment waits for needs-human-confirm", () => {
    const h = history([comment(2, owner, "Also, do this.")]);
    expect(replyState(h, [], config()).state).toBe("answered");
    expect(replyState(h, ["needs-human-confirm"], config())).toMatchObject({
      state: "unanswered",
      reply: { reason: "unanswered-human-comment", author: "founder", at: at(2) },
    });
    expect(replyState(h, [], config({ replies: "all" })).state).toBe("unanswered");
  });

  it("claim markers are neither the agent comment a person answers nor an answer", () => {
    const claimed = comment(2, owner, "<!-- claimed-by: agent-1 -->\nClaimed by agent-1.");
    const unclaimed = comment(5, owner, "<!-- unclaimed-by: agent-1 -->\nReleased.");
    // A person's input after only a claim marker answers no agent.
    expect(replyState(history([claimed, comment(3, owner, "Do X.")]), [], config()).state).toBe(
      "answered",
    );
    // An unclaimed-by marker after a terminal answer does not reopen the input.
    const answered = history([
      comment(2, bot, "Question?"),
      comment(3, owner, "Do X."),
      comment(4, bot, "Done in PR #9."),
      unclaimed,
    ]);
    expect(replyState(answered, [], config())).toEqual({ state: "answered", why: "answered" });
  });

  it("an untrusted body is no input; a trusted comment after an untrusted one is", () => {
    const stranger = { login: "drive-by", type: "User", association: "NONE" };
    const h = history([], { author: stranger });
    expect(replyState(h, [], config({ replies: "all" }))).toEqual({
      state: "answered",
      why: "no-human-input",
    });
  });

  it("a stranger's fake agent answer does not silence a person's input", () => {
    const stranger = { login: "drive-by", type: "User", association: "NONE" };
    const h = history([
      comment(2, bot, "Question?"),
      comment(3, owner, "Answer."),
      comment(4, stranger, 'Done in PR #1.\n<!-- sweep-trace: {"ver":1,"val":"pr"} -->'),
    ]);
    expect(replyState(h, [], config()).state).toBe("unanswered");
  });

  it("the summary keeps no bodies, and deciding it again under new labels needs no re-read", () => {
    const h = history([comment(2, bot, "Question?"), comment(3, owner, "Answer with a secret.")]);
    const summary = summarizeReplies(h, { replyAuthors: "write" });
    expect(JSON.stringify(summary)).not.toContain("secret");
    expect(summary).toEqual({
      input: { source: "comment", url: h.comments![1]!.url, author: "founder", at: at(3) },
      afterAgent: true,
      responses: [],
    });
    const policy = { replies: "all" as const, needsHumanLabel: "needs-human-confirm" };
    expect(decideReply(summary, [], policy).state).toBe("unanswered");
  });
});

describe("scan exclusions", () => {
  const base = {
    repo: "o/r",
    now: "2026-11-29T12:00:00Z",
    issues: [] as unknown[],
  };
  const open = (number: number, labels: string[], extra = {}) => ({
    number,
    title: `#${number}`,
    state: "open",
    stateReason: null,
    createdAt: at(1),
    updatedAt: at(1),
    closedAt: null,
    labels,
    author: owner,
    body: "Design this.",
    comments: [],
    ...extra,
  });
  it("open blockers, epic-managed and a fresh processing lock leave replies out; hold, needs-human and open sub-issues do not", () => {
    const snapshot = parseSnapshot({
      ...base,
      issues: [
        open(1, [], { blockedBy: [9] }),
        open(2, ["epic-managed"]),
        open(3, ["epic:7"]),
        open(4, ["agent:processing"]),
        open(5, ["agent:hold"]),
        open(6, ["needs-human-confirm"]),
        open(7, ["agent:stuck"]),
        open(8, []),
        open(9, [], { parent: 8 }),
      ],
    });
    const cfg = config({ replies: "all" });
    const replies = scanReplies(snapshot, analyzeSnapshotCompact(snapshot, { config: cfg }), cfg);
    expect(replies.map((r) => r.number)).toEqual([5, 6, 7, 8, 9]);
  });
});

describe("the shared rules agree with evaluateSweep reading the bodies (the oracle)", () => {
  const stranger = { login: "drive-by", type: "User", association: "NONE" };
  const collaborator = { login: "maintainer", type: "User", association: "COLLABORATOR" };
  const unknown = { login: "someone", type: "User" };
  const authors = [owner, collaborator, stranger, unknown, bot];
  const bodies = [
    "Please do X.",
    "> 🤖 AI Agent @ m · runner:cron\n\nDecision: take B.",
    "> 📡 presence · 3 agents",
    'Done in PR #5.\n<!-- sweep-trace: {"ver":1,"val":"pr"} -->',
    'Queued, in-progress.\n<!-- sweep-trace: {"ver":1} -->',
    'Noted.\n<!-- sweep-trace: {"ver":1} -->',
    "Closed as completed.\n&lt;!-- sweep-trace: {&quot;ver&quot;:1} --&gt;",
    "<!-- claimed-by: agent-1 -->\nClaimed.",
    "<!-- unclaimed-by: agent-1 -->\nReleased.",
    '```yaml\ncancel-in-progress: false\n```\n<!-- sweep-trace: {"ver":1} -->',
    "",
  ];
  const commentArb = fc.record({
    author: fc.constantFrom(...authors),
    body: fc.constantFrom(...bodies),
    day: fc.integer({ min: 2, max: 6 }),
  });
  const historyArb = fc.record({
    title: fc.constantFrom(undefined, "", "A title"),
    body: fc.constantFrom(
      null,
      "",
      "Design this.",
      "> 📡 board",
      "<!-- spinoff-of: #3 -->\nSpin-off",
    ),
    author: fc.constantFrom(null, ...authors),
    comments: fc.option(fc.array(commentArb, { maxLength: 8 }), { nil: undefined }),
    trust: fc.constantFrom<"write" | string[]>("write", ["someone", "drive-by"], []),
  });

  it("on random histories", () => {
    fc.assert(
      fc.property(historyArb, (h) => {
        const input: ReplyHistory = {
          url: "https://github.com/o/r/issues/1",
          createdAt: at(1),
          ...(h.title !== undefined ? { title: h.title } : {}),
          body: h.body,
          author: h.author,
          comments: h.comments?.map((c, i) => ({
            ...comment(c.day, c.author, c.body),
            url: `https://github.com/o/r/issues/1#issuecomment-${i}`,
          })),
        };
        const trust = { replyAuthors: h.trust };
        expect(summarizeReplies(input, trust)).toEqual(oracleSummarizeReplies(input, trust));
      }),
      { numRuns: 500 },
    );
  });

  it.each(fixtures.map((f) => [f.name, f] as const))("on %s", (_, fixture) => {
    const snapshot = parseSnapshot(fixture.snapshot);
    for (const issue of snapshot.issues) {
      const h: ReplyHistory = {
        url: `https://github.com/${snapshot.repo}/issues/${issue.number}`,
        createdAt: issue.createdAt,
        title: issue.title,
        body: issue.body ?? null,
        author: issue.author ?? null,
        comments: issue.comments,
      };
      const trust = { replyAuthors: fixtureConfig(fixture).queue.replyAuthors };
      expect(summarizeReplies(h, trust)).toEqual(oracleSummarizeReplies(h, trust));
    }
  });
});

// A reader skips a history that `replyQuiet` calls quiet for the issue's scope (the Worker's
// queue view at 100,000 issues reads only the others): sound only if such a history gives the
// queue nothing whatever the trust, the policy and the labels.
describe("a quiet history gives the queue nothing", () => {
  const author = fc.record({
    login: fc.constantFrom("maintainer", "drive-by", "someone", "fleet[bot]"),
    type: fc.constantFrom("User", "Bot"),
    association: fc.constantFrom(undefined, null, "OWNER", "COLLABORATOR", "NONE", "CONTRIBUTOR"),
  });
  const classified = fc.record({
    author,
    day: fc.integer({ min: 2, max: 6 }),
    role: fc.constantFrom(
      "human" as const,
      "agent" as const,
      "heartbeat" as const,
      "claim" as const,
    ),
    verdict: fc.constantFrom("terminal" as const, "deferral" as const, "neutral" as const),
  });
  const historyArb = fc.record({
    author: fc.option(author, { nil: null }),
    openingIsHuman: fc.boolean(),
    comments: fc.option(fc.array(classified, { maxLength: 6 }), { nil: undefined }),
    partial: fc.boolean(),
  });
  const trustArb = fc.record({
    replyAuthors: fc.constantFrom<"write" | string[]>("write", ["someone", "drive-by"], []),
    known: fc.constantFrom(undefined, true, false),
  });
  const policyArb = fc.record({
    replies: fc.constantFrom("off" as const, "answers" as const, "all" as const),
    labels: fc.subarray(["needs-human-confirm", "test-sweep-report", "agent:hold"]),
  });

  it("under every trust, policy and labels", () => {
    fc.assert(
      fc.property(historyArb, trustArb, policyArb, (h, t, p) => {
        const history: ClassifiedHistory = {
          url: "https://github.com/o/r/issues/1",
          createdAt: at(1),
          author: h.author,
          openingIsHuman: h.openingIsHuman,
          comments: h.comments?.map((c, i) => ({
            author: c.author,
            createdAt: at(c.day),
            url: `https://github.com/o/r/issues/1#issuecomment-${i}`,
            role: c.role,
            verdict: c.role === "agent" ? c.verdict : null,
          })),
          ...(h.partial ? { partial: true } : {}),
        };
        const trust = { replyAuthors: t.replyAuthors, knownWrite: () => t.known };
        const policy = { replies: p.replies, needsHumanLabel: "needs-human-confirm" };
        const scope = replyAuthorScope(p.labels, policy);
        // A closed issue is left out too: the view gives closed issues no reply (no facts).
        expect(replyLeftOut(false, p.labels, replyQuiet(history), policy)).toBe(true);
        if (!replyLeftOut(true, p.labels, replyQuiet(history), policy)) return;
        if (p.replies === "off") return; // the reader does not run
        const summary = summarizeClassified(history, trust);
        expect(summary).not.toBeNull(); // else the replies schedule must read the thread
        expect(replyAuthorToCheck(history, trust, scope)).toBeNull();
        expect(decideReply(summary, p.labels, policy).state).not.toBe("unanswered");
      }),
      { numRuns: 3000 },
    );
  });

  it("is not everything: an answer to an agent, a thread never read and a part of one are read", () => {
    const base = {
      url: "u",
      createdAt: at(1),
      author: owner,
      openingIsHuman: true,
    };
    const agent = {
      author: bot,
      createdAt: at(2),
      url: "a",
      role: "agent" as const,
      verdict: "neutral" as const,
    };
    expect(replyQuiet({ ...base, comments: [agent] })).toBeNull();
    expect(replyQuiet({ ...base, comments: undefined })).toBeNull();
    expect(replyQuiet({ ...base, comments: [], partial: true })).toBeNull();
    expect(replyQuiet({ ...base, comments: [] })).toBe("no-agent");
    expect(replyQuiet({ ...base, openingIsHuman: false, comments: [] })).toBe("silent");
    expect(quietFor("no-agent", "any")).toBe(false);
  });
});
