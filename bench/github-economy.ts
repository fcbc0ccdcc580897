// API economy (spec 9): requests for a full graph fetch of N issues by GraphQL versus a
// one-call-per-issue REST baseline, and requests for an incremental reconcile, all against
// the simulator's request counter in one run.
import {
  createGitHubSimulator,
  type GitHubSimulator,
  simulatorFetch,
} from "../infra/github-sim/app.ts";
import { seedSnapshot } from "../infra/github-sim/seed.ts";
import { GitHubClient } from "../shared/github/client.ts";
import { fetchIssueComments } from "../shared/github/comments.ts";
import {
  emptyReport,
  fetchSnapshot,
  fetchSnapshotPage,
  type SnapshotPage,
} from "../shared/github/fetch-snapshot.ts";
import { fetchChanges } from "../shared/github/incremental.ts";
import { refTo } from "../shared/github/to-snapshot.ts";
import type { IssueRef } from "../shared/graph/refs.ts";
import type { SnapshotInput } from "../shared/graph/snapshot.ts";
import type { Benchmark } from "./benchmark.ts";

const REPO = "bench/graph";
const SIZES = [100, 1000, 5000];

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * A repository shaped like a real backlog without overflowing connections: epics of 20
 * children, a few blockers per issue (some in another repository), a third closed, 1% locked.
 */
export function syntheticRepo(n: number): SnapshotInput {
  const t0 = Date.parse("2026-01-01T00:00:00Z");
  const issues: SnapshotInput["issues"] = [];
  for (let i = 1; i <= n; i++) {
    const closed = i % 3 === 0;
    const blockedBy: IssueRef[] = [];
    if (i > 5 && i % 2 === 0) blockedBy.push(i - 3);
    if (i > 10 && i % 5 === 0) blockedBy.push(i - 7);
    if (i % 50 === 0) blockedBy.push("bench/lib#1");
    issues.push({
      number: i,
      title: `Issue ${i}`,
      state: closed ? "closed" : "open",
      stateReason: closed ? "completed" : null,
      createdAt: iso(t0 + i * 60_000),
      updatedAt: iso(t0 + i * 120_000),
      closedAt: closed ? iso(t0 + i * 120_000) : null,
      labels: i % 100 === 7 ? ["agent:processing"] : i % 4 === 0 ? ["agent:ready"] : [],
      parent: i % 21 === 0 || i < 21 ? undefined : Math.floor(i / 21) * 21,
      blockedBy,
    });
  }
  return {
    repo: REPO,
    issues,
    external: [{ ref: "bench/lib#1", state: "closed", closedAt: iso(t0) }],
  };
}

/** The benchmark's token: the simulator's unrestricted user (`userTokens`), which reads everything. */
const BENCH_TOKEN = "bench";

function client(sim: GitHubSimulator, received?: { bytes: number }): GitHubClient {
  const inner = simulatorFetch(sim);
  return new GitHubClient({
    auth: { kind: "token", token: BENCH_TOKEN },
    baseUrl: "http://sim.bench",
    fetch: received
      ? async (input, init) => {
          const res = await inner(input, init);
          received.bytes += (await res.clone().arrayBuffer()).byteLength;
          return res;
        }
      : inner,
  });
}

interface RestIssue {
  number: number;
  parent_issue_url?: string | null;
}

/** The baseline: list issues (100 a page), then one blocked-by request per issue. */
async function restBaseline(
  c: GitHubClient,
): Promise<Map<number, { parent: IssueRef | null; blockedBy: IssueRef[] }>> {
  const [owner, repo] = REPO.split("/") as [string, string];
  const issues: RestIssue[] = [];
  for (let page = 1; ; page++) {
    const res = await c.send<RestIssue[]>({
      operation: "baseline list",
      route: "GET /repos/{owner}/{repo}/issues",
      params: { owner, repo, state: "all", per_page: 100, page },
      idempotent: true,
    });
    issues.push(...res.data);
    if (!/rel="next"/.test(res.headers.link ?? "")) break;
  }
  const graph = new Map<number, { parent: IssueRef | null; blockedBy: IssueRef[] }>();
  for (const issue of issues) {
    const res = await c.send<{ number: number; repository_url: string }[]>({
      operation: "baseline blockers",
      route: "GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by",
      params: { owner, repo, issue_number: issue.number, per_page: 100 },
      idempotent: true,
    });
    const parent = /\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)$/.exec(issue.parent_issue_url ?? "");
    graph.set(issue.number, {
      parent: parent ? refTo(REPO, parent[1]!, Number(parent[2])) : null,
      blockedBy: res.data.map((b) =>
        refTo(REPO, b.repository_url.replace(/^.*\/repos\//, ""), b.number),
      ),
    });
  }
  return graph;
}

function sameGraph(
  a: Map<number, { parent: IssueRef | null; blockedBy: IssueRef[] }>,
  b: Map<number, { parent: IssueRef | null; blockedBy: IssueRef[] }>,
): boolean {
  if (a.size !== b.size) return false;
  for (const [n, x] of a) {
    const y = b.get(n);
    if (!y || x.parent !== y.parent) return false;
    if (
      JSON.stringify([...x.blockedBy].map(String).sort()) !==
      JSON.stringify([...y.blockedBy].map(String).sort())
    )
      return false;
  }
  return true;
}

export const githubEconomy: Benchmark = {
  name: "github-economy",
  async run() {
    const rows: string[] = [];
    const figures: Record<string, unknown> = {};
    const targets: { name: string; ok: boolean }[] = [];
    rows.push(
      "  N      GraphQL req   bound ceil(N/100)+2   REST baseline req   ratio    GraphQL ms   REST ms",
    );
    for (const n of SIZES) {
      const sim = createGitHubSimulator({ rateLimit: 1_000_000, userTokens: [BENCH_TOKEN] });
      seedSnapshot(sim.state, syntheticRepo(n));
      let t = performance.now();
      const { snapshot } = await fetchSnapshot(client(sim), REPO);
      const gqlMs = performance.now() - t;
      const gql = sim.counter.snapshot().total;
      sim.counter.reset();
      t = performance.now();
      const baseline = await restBaseline(client(sim));
      const restMs = performance.now() - t;
      const rest = sim.counter.snapshot().total;
      const fromGraphql = new Map(
        snapshot.issues.map((i) => [
          i.number,
          { parent: i.parent ?? null, blockedBy: i.blockedBy ?? [] },
        ]),
      );
      if (!sameGraph(fromGraphql, baseline))
        throw new Error(`N=${n}: the two fetches disagree about the graph`);
      const bound = Math.ceil(n / 100) + 2;
      const ratio = rest / gql;
      rows.push(
        `  ${String(n).padEnd(6)} ${String(gql).padStart(11)}   ${String(bound).padStart(19)}   ${String(rest).padStart(17)}   ${ratio.toFixed(1).padStart(6)}x ${gqlMs.toFixed(0).padStart(11)} ${restMs.toFixed(0).padStart(9)}`,
      );
      figures[`full_${n}`] = {
        graphql: gql,
        bound,
        rest,
        ratio: Number(ratio.toFixed(1)),
        graphqlMs: Math.round(gqlMs),
        restMs: Math.round(restMs),
      };
      targets.push({
        name: `N=${n}: GraphQL full fetch in at most ceil(N/100)+2 = ${bound} requests (${gql})`,
        ok: gql <= bound,
      });
      if (n === 1000)
        targets.push({
          name: `N=1000: at least 50x fewer requests than the REST baseline (${ratio.toFixed(1)}x)`,
          ok: ratio >= 50,
        });
    }

    // Incremental reconcile on N = 1000.
    const n = 1000;
    const sim = createGitHubSimulator({ rateLimit: 1_000_000, userTokens: [BENCH_TOKEN] });
    seedSnapshot(sim.state, syntheticRepo(n));
    sim.setClock({ now: "2026-06-01T00:00:00Z" });
    const c = client(sim);
    let watermark = (
      await fetchChanges(c, REPO, { since: "2026-01-01T00:00:00Z", etag: null, boundary: [] })
    ).watermark;
    watermark = (await fetchChanges(c, REPO, watermark)).watermark; // settles the ETag for this since
    sim.counter.reset();
    const quiet = await fetchChanges(c, REPO, watermark);
    const quietCounts = sim.counter.snapshot();
    rows.push("");
    rows.push(
      `  incremental, N=${n}, nothing changed: ${quietCounts.total} request(s), ${quietCounts.rateLimited} rate-limited (304: ${quiet.notModified})`,
    );
    targets.push({
      name: "incremental reconcile with nothing changed costs zero rate-limited requests",
      ok: quietCounts.rateLimited === 0,
    });

    const repo = sim.state.repo("bench", "graph")!;
    sim.setClock({ now: "2026-06-01T01:00:00Z" });
    for (let i = 1; i <= n / 100; i++) {
      const issue = repo.issues.get(i * 97)!;
      if (issue.state === "open") sim.state.closeIssue(issue, "completed", "octocat");
      else sim.state.addLabels(issue, ["agent:ready"], "octocat");
    }
    sim.counter.reset();
    const changed = await fetchChanges(c, REPO, quiet.watermark);
    const changedCounts = sim.counter.snapshot();
    rows.push(
      `  incremental, N=${n}, 1% changed (${changed.issues.length} issues): ${changedCounts.total} requests (${changedCounts.rateLimited} rate-limited: ${changed.listRequests} listing, ${changedCounts.total - changed.listRequests} GraphQL)`,
    );
    sim.counter.reset();
    const after = await fetchChanges(c, REPO, changed.watermark);
    const again = await fetchChanges(c, REPO, after.watermark);
    const afterCounts = sim.counter.snapshot();
    rows.push(
      `  next two polls after the change: ${afterCounts.total} requests, ${afterCounts.rateLimited} rate-limited (then 304: ${again.notModified})`,
    );
    figures.incremental = {
      n,
      nothingChanged: { requests: quietCounts.total, rateLimited: quietCounts.rateLimited },
      onePercentChanged: {
        changed: changed.issues.length,
        requests: changedCounts.total,
        rateLimited: changedCounts.rateLimited,
      },
      settleAfterChange: { requests: afterCounts.total, rateLimited: afterCounts.rateLimited },
    };
    targets.push({
      name: `1% changed is reconciled with a handful of requests (${changedCounts.total})`,
      ok: changedCounts.total <= 5,
    });

    // The full reconcile's marker re-read (issue 9, fix 8), N = 1000, counted apart from the
    // graph fetch: the comments of the open issues under a processing lock (1%) or with marker
    // comments (one of them, with 150 comments, needs two pages).
    const markerSim = createGitHubSimulator({ rateLimit: 1_000_000, userTokens: [BENCH_TOKEN] });
    seedSnapshot(markerSim.state, syntheticRepo(n));
    const markerRepo = markerSim.state.repo("bench", "graph")!;
    const marked = markerRepo.issues.get(1)!;
    for (let i = 0; i < 150; i++) {
      markerSim.state.addComment(
        marked,
        i === 0
          ? "<!-- claimed-by: idd-bot c-1 supersedes: none 2026-01-01T00:00:00Z branch: issue/1-x -->"
          : `comment ${i}`,
        "octocat",
      );
    }
    const targetsToRead = [...markerRepo.issues.values()]
      .filter(
        (i) => i.state === "open" && (i.number === 1 || i.labels.includes("agent:processing")),
      )
      .map((i) => i.number);
    const mc = client(markerSim);
    let commentsRead = 0;
    markerSim.counter.reset();
    for (const number of targetsToRead) {
      commentsRead += (await fetchIssueComments(mc, REPO, number)).length;
    }
    const markerCounts = markerSim.counter.snapshot();
    const markerBound = targetsToRead.length + 1; // one page each, one more for the long thread
    rows.push("");
    rows.push(
      `  marker re-read (full reconcile), N=${n}: ${targetsToRead.length} issues, ${commentsRead} comments, ${markerCounts.total} requests (apart from the full fetch's bound)`,
    );
    figures.markerReread = {
      n,
      issues: targetsToRead.length,
      comments: commentsRead,
      requests: markerCounts.total,
    };
    targets.push({
      name: `marker re-read: one request per issue plus one per further 100 comments (${markerCounts.total} <= ${markerBound})`,
      ok: markerCounts.total <= markerBound,
    });
    await replyEconomy(rows, figures, targets);
    return { report: rows, targets, figures };
  },
};

const SAYS = {
  owner: "Please use CSV for the export, and keep the header row.",
  stranger: "Any update on this? Do it now!",
  ask: "Which format should the export use? I can do CSV or JSON lines.",
  neutral: "Looking into the export code now.",
  deferral: "🟢 queued / not done this round.",
  terminal: 'Done in PR #5.\n<!-- sweep-trace: {"ver":1,"val":"pr"} -->',
  heartbeat: "> 📡 presence board: 3 agents active, 2 idle.",
  digest:
    '> 🤖 AI Agent\nDaily digest: 4 issues moved.\n<!-- sweep-trace: {"ver":1,"val":"digest"} -->',
  claim: "<!-- claimed-by: idd-bot c-1 supersedes: none 2026-01-01T00:00:00Z branch: issue/1-x -->",
} as const;
type Said = keyof typeof SAYS;
const WHO: Record<Said, { login: string; type: string }> = {
  owner: { login: "bench", type: "User" },
  stranger: { login: "drive-by", type: "User" },
  ask: { login: "fleet[bot]", type: "Bot" },
  neutral: { login: "fleet[bot]", type: "Bot" },
  deferral: { login: "fleet[bot]", type: "Bot" },
  terminal: { login: "fleet[bot]", type: "Bot" },
  heartbeat: { login: "fleet[bot]", type: "Bot" },
  digest: { login: "fleet[bot]", type: "Bot" },
  claim: { login: "idd-bot", type: "User" },
};

/**
 * `syntheticRepo(n)` with comments (issue 22): 0 to 20 per issue, one issue in ten with 50 to 80
 * whose newest part is a tail of heartbeats and digests (0 to 69 of them: some push the last
 * person's words out of the first window, none out of the newest 100). Seeded, deterministic.
 */
export function syntheticRepoWithComments(n: number): SnapshotInput {
  const repo = syntheticRepo(n);
  let seed = 22;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const conversation: Said[] = [
    "owner",
    "owner",
    "owner",
    "ask",
    "ask",
    "neutral",
    "deferral",
    "terminal",
    "stranger",
    "claim",
  ];
  const t0 = Date.parse("2026-02-01T00:00:00Z");
  for (const issue of repo.issues) {
    const long = issue.number % 10 === 3;
    const count = long ? 50 + Math.floor(random() * 31) : Math.floor(random() * 21);
    const tail = long ? Math.floor(random() * 70) : 0;
    const said: Said[] = [];
    for (let i = 0; i < count; i++) {
      said.push(
        i >= count - tail
          ? random() < 0.7
            ? "heartbeat"
            : "digest"
          : conversation[Math.floor(random() * conversation.length)]!,
      );
    }
    issue.body = "Export the data as a file people can open.";
    issue.author = WHO.owner;
    issue.comments = said.map((k, i) => ({
      author: WHO[k],
      body: SAYS[k],
      createdAt: iso(t0 + issue.number * 600_000 + i * 1000),
      url: `https://github.com/${REPO}/issues/${issue.number}#c${i}`,
    }));
  }
  return repo;
}

/**
 * Reply state in the full reconcile (issue 22), N = 1,000 with synthetic comments: the pages a
 * full reconcile reads (`fetchSnapshotPage` page by page, label events with each page, as the
 * RepoObject reads them) without and with each
 * open issue's reply window, GitHub requests compared (SPEC 9: at most 2x), and what one page
 * holds at a time (a page's comment bodies, dropped before the next page; the Worker keeps no
 * body).
 */
async function replyEconomy(
  rows: string[],
  figures: Record<string, unknown>,
  targets: { name: string; ok: boolean }[],
): Promise<void> {
  const n = 1000;
  const sim = createGitHubSimulator({ rateLimit: 1_000_000, userTokens: [BENCH_TOKEN] });
  const input = syntheticRepoWithComments(n);
  seedSnapshot(sim.state, input);
  const open = input.issues.filter((i) => i.state === "open");
  const comments = open.reduce((k, i) => k + (i.comments?.length ?? 0), 0);
  const bodyBytes = open.reduce(
    (k, i) => k + (i.comments ?? []).reduce((b, c) => b + c.body.length, 0),
    0,
  );
  const pass = async (replies: boolean) => {
    const received = { bytes: 0 };
    const c = client(sim, received);
    sim.counter.reset();
    const started = performance.now();
    let cursor: string | null = null;
    let kept = 0;
    let whole = 0;
    let heldMax = 0;
    let total = 0;
    const report = emptyReport();
    do {
      received.bytes = 0;
      const page: SnapshotPage = await fetchSnapshotPage(
        c,
        REPO,
        cursor,
        {
          withBody: true,
          ...(replies ? { replies: { replyAuthors: "write" as const } } : {}),
        },
        report,
      );
      for (const w of page.replies) {
        kept += w.comments.length;
        if (w.whole) whole += 1;
      }
      // What one page holds at once: its responses (the page, its comment reads, label events).
      heldMax = Math.max(heldMax, received.bytes);
      total += received.bytes;
      cursor = page.next;
    } while (cursor !== null);
    const requests = sim.counter.snapshot().total;
    return {
      requests,
      commentRequests: report.commentRequests,
      kept,
      whole,
      total,
      heldMax,
      ms: performance.now() - started,
    };
  };
  const today = await pass(false);
  const withReplies = await pass(true);
  const ratio = withReplies.requests / today.requests;
  rows.push("");
  rows.push(
    `  reply state in the full reconcile, N=${n}: ${open.length} open issues, ${comments} comments (${(bodyBytes / 1024).toFixed(0)} KiB of bodies)`,
  );
  rows.push(
    `    requests: ${today.requests} without, ${withReplies.requests} with (${withReplies.commentRequests} for comments beyond the pages' windows): ${ratio.toFixed(2)}x`,
  );
  rows.push(
    `    comments kept ${withReplies.kept} (${open.length - withReplies.whole} threads from the agent before their input, ${withReplies.whole} whole); largest page's responses ${(today.heldMax / 1024).toFixed(0)} KiB without, ${(withReplies.heldMax / 1024).toFixed(0)} KiB with (of ${(withReplies.total / 1024).toFixed(0)} KiB in all); ${today.ms.toFixed(0)} / ${withReplies.ms.toFixed(0)} ms`,
  );
  figures.replies = {
    n,
    openIssues: open.length,
    comments,
    bodyKiB: Math.round(bodyBytes / 1024),
    requestsWithout: today.requests,
    requestsWith: withReplies.requests,
    commentRequests: withReplies.commentRequests,
    ratio: Number(ratio.toFixed(2)),
    commentsKept: withReplies.kept,
    cutThreads: open.length - withReplies.whole,
    pageKiBWithout: Math.round(today.heldMax / 1024),
    pageKiBWith: Math.round(withReplies.heldMax / 1024),
    allKiBWith: Math.round(withReplies.total / 1024),
  };
  targets.push({
    name: `N=1000 with comments: full-reconcile requests at most 2x without reply state (${withReplies.requests}/${today.requests} = ${ratio.toFixed(2)}x)`,
    ok: ratio <= 2,
  });
  targets.push({
    name: `memory: one page's responses at a time (largest ${(withReplies.heldMax / 1024).toFixed(0)} KiB, under a fifth of the ${(withReplies.total / 1024).toFixed(0)} KiB read)`,
    ok: withReplies.heldMax * 5 < withReplies.total,
  });
  targets.push({
    name: `no bodies kept: ${withReplies.kept} of ${comments} comments handed on to be stored, classified, without bodies`,
    ok: withReplies.kept < comments,
  });
}
