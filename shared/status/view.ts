// The repository page's view-model: what the RepoObject answered (its graph read and its status
// read), turned into the lists, links and figures the page shows. Pure: the Worker and any
// other host build the same model from the same answers, and render the same page.
import type { FirstReconcile, InstallProgress } from "../budget/reconcile-permits.ts";
import type { Attempt } from "../claims/rules.ts";
import type { Diagnostic } from "../graph/analyze.ts";
import type { IssueRef } from "../graph/refs.ts";
import { type ReplyListEntry, replyReasonText } from "../queue/reply-list.ts";
import { type EndedClaim, type Figures, figuresOf, formatDuration } from "./figures.ts";
import type { Picture } from "./picture.ts";
import { renderGraphSvg } from "./svg.ts";

/** The part of `RepoObject.graph()` the page reads. */
export interface GraphRead {
  repo: string;
  kicks: Array<{ target: number; kind: string; causes: IssueRef[] }>;
  rollupCandidates: Array<{ number: number; children: number[] }>;
  blocked: Array<{ number: number; blockers: IssueRef[] }>;
  diagnostics: Diagnostic[];
  stats: { issues: number; open: number; edges: number };
  watermarks: object;
  config: { status: { error: string | null; at: string | null }; effective: object };
  repository?: { archived?: boolean; private?: boolean | null; writes?: string };
  parkedWritesCount?: number;
  /** Issues whose trusted human input waits for an agent (first page), and how many in all. */
  replies?: ReplyListEntry[];
  pages?: { replies?: { total: number } };
  deliveries?: { applied: number; duplicate: number };
  /** Reconcile progress, when the RepoObject reports it. */
  reconcile?: unknown;
  reconcileProgress?: unknown;
  /** The first full reconcile's state, and the installation's pacing (issue 25). */
  firstReconcile?: FirstReconcile;
  installation?: InstallProgress | null;
  /** The circuit breaker (functions/objects/repo/breaker.ts `BreakerView`). */
  breaker?: {
    state: string;
    reason: string | null;
    head: { sha: string; since: string } | null;
    paused: {
      since: string;
      sha: string;
      failing: Array<{ name: string; url: string | null }>;
    } | null;
    pending: string[];
  };
  /** Priority sources (functions/objects/repo/priority.ts `PriorityView`). */
  priority?: {
    labels: Record<string, number>;
    project: {
      number: number;
      field: string;
      state: string;
      reason: string | null;
      ranked: number;
    } | null;
  };
}

/** The part of `RepoObject.statusView()` the page reads. */
export interface StatusRead {
  picture: Picture;
  queue: {
    total: number;
    items: Array<{
      number: number;
      title: string;
      reason: string;
      attempts: number;
      /** Priority rank (null: unranked). */
      priority?: number | null;
      /** Held back while the breaker is red. */
      paused?: boolean;
    }>;
  };
  claims: Array<{
    number: number;
    agentId: string;
    machine: string | null;
    fence: number | null;
    grantedAt: string | null;
    expiresAt: string;
    source: "fleet" | "idd";
  }>;
  deadLetters: Array<{
    number: number;
    title: string;
    stuckAt: string | null;
    attempts: Attempt[];
  }>;
  /** Fenced write records open now: their issues are granted to nobody until they close. */
  writes?: Array<{
    number: number;
    agentId: string | null;
    fence: number;
    kind: string;
    deadline: string;
    closesAt: string;
    /** Null while the write runs; `no-answer` while GitHub may still apply it. */
    outcome: string | null;
  }>;
  ended: EndedClaim[];
  audit: Array<{ seq: number; at: string; kind: string; detail: unknown }>;
}

export interface Link {
  label: string;
  url: string;
}

export interface RepoPageModel {
  repo: string;
  repoUrl: string;
  /** Who is logged in (null: a public page seen without login). */
  viewer: string | null;
  now: string;
  svg: string;
  drawn: number;
  leftOut: number;
  figures: Figures;
  queue: Array<{
    issue: Link;
    title: string;
    reason: string;
    attempts: number;
    priority: number | null;
    paused: boolean;
  }>;
  queueTotal: number;
  /** The breaker's pause while the default branch is red: which checks, since when, links. */
  pause: { since: string; sha: string; commit: Link; failing: Link[] } | null;
  /** The breaker's state in words (null: not configured), with why it is off if it is. */
  breaker: { state: string; reason: string | null; head: string | null; pending: string[] } | null;
  /** The priority sources: label ranks, and the project field's state. */
  priority: {
    labels: string;
    project: { what: string; state: string; reason: string | null; ranked: number } | null;
  };
  claims: Array<{
    issue: Link;
    agentId: string;
    machine: string | null;
    fence: number | null;
    expiresAt: string;
    source: "fleet" | "idd";
  }>;
  blocked: Array<{ issue: Link; title: string; blockers: Link[] }>;
  /** "Waiting for an agent's answer": the input (who wrote it, when, a link), why it counts. */
  replies: Array<{
    issue: Link;
    title: string;
    author: string;
    at: string;
    /** The input's page: the comment, or the issue for its opening. */
    url: string;
    why: string;
    /** Who holds the issue now, in words (null: nobody). */
    claim: string | null;
  }>;
  repliesTotal: number;
  rollupCandidates: Array<{ issue: Link; title: string; children: Link[] }>;
  deadLetters: Array<{ issue: Link; title: string; stuckAt: string | null; attempts: Attempt[] }>;
  writes: Array<{
    issue: Link;
    agentId: string | null;
    fence: number;
    kind: string;
    closesAt: string;
    state: string;
  }>;
  cycles: Link[][];
  unresolved: Array<{ issue: Link; ref: string }>;
  configError: string | null;
  configCheckedAt: string | null;
  config: string;
  watermarks: string;
  reconcile: string | null;
  /** Until the first full reconcile is done: where it stands (null once done). */
  firstReconcile: string | null;
  /** The installation's pacing of full reconciles, in a sentence (null: not known). */
  installation: string | null;
  repository: { archived: boolean; private: boolean | null; writes: string };
  parkedWrites: number;
  audit: Array<{ at: string; kind: string; detail: string }>;
}

/** `https://github.com` (or GHE's, or the simulator's) links for a repository's issues. */
export function issueLinker(htmlBase: string, repo: string) {
  const base = htmlBase.replace(/\/+$/, "");
  return (ref: IssueRef): Link => {
    if (typeof ref === "number") return { label: `#${ref}`, url: `${base}/${repo}/issues/${ref}` };
    const m = /^([^/]+\/[^#]+)#(\d+)$/.exec(ref);
    return { label: ref, url: m ? `${base}/${m[1]}/issues/${m[2]}` : `${base}/${repo}` };
  };
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

export function repoPageModel(input: {
  graph: GraphRead;
  status: StatusRead;
  htmlBase: string;
  viewer: string | null;
  nowMs: number;
}): RepoPageModel {
  const { graph, status } = input;
  const repo = graph.repo;
  const link = issueLinker(input.htmlBase, repo);
  const titles = new Map(status.picture.nodes.map((n) => [n.number, n.title]));
  for (const q of status.queue.items) titles.set(q.number, q.title);
  const title = (n: number) => titles.get(n) ?? "";
  const reconcile = graph.reconcileProgress ?? graph.reconcile;
  return {
    repo,
    repoUrl: `${input.htmlBase.replace(/\/+$/, "")}/${repo}`,
    viewer: input.viewer,
    now: new Date(input.nowMs).toISOString().replace(/\.\d{3}Z$/, "Z"),
    svg: renderGraphSvg(status.picture, { issueUrl: (n) => link(n).url }),
    drawn: status.picture.nodes.length,
    leftOut: status.picture.leftOut,
    figures: figuresOf(
      {
        queueLength: status.queue.total,
        liveClaims: status.claims.length,
        ended: status.ended,
      },
      input.nowMs,
    ),
    queue: status.queue.items.map((q) => ({
      issue: link(q.number),
      title: q.title,
      reason: q.reason,
      attempts: q.attempts,
      priority: q.priority ?? null,
      paused: q.paused === true,
    })),
    queueTotal: status.queue.total,
    ...policyModel(graph, input.htmlBase),
    claims: status.claims.map((c) => ({
      issue: link(c.number),
      agentId: c.agentId,
      machine: c.machine,
      fence: c.fence,
      expiresAt: c.expiresAt,
      source: c.source,
    })),
    blocked: graph.blocked.map((b) => ({
      issue: link(b.number),
      title: title(b.number),
      blockers: b.blockers.map(link),
    })),
    replies: (graph.replies ?? []).map((r) => ({
      issue: link(r.number),
      title: title(r.number),
      author: r.author,
      at: r.at,
      url: r.url,
      why: replyReasonText(r.reason),
      claim:
        r.claim === null
          ? null
          : r.claim.kind === "idd"
            ? `${r.claim.agentId} (IDD marker, until ${r.claim.until})`
            : `${r.claim.agentId} (${r.claim.kind === "reply" ? "answering" : "working on it"}, until ${r.claim.until})`,
    })),
    repliesTotal: graph.pages?.replies?.total ?? graph.replies?.length ?? 0,
    rollupCandidates: graph.rollupCandidates.map((r) => ({
      issue: link(r.number),
      title: title(r.number),
      children: r.children.map(link),
    })),
    deadLetters: status.deadLetters.map((d) => ({
      issue: link(d.number),
      title: d.title,
      stuckAt: d.stuckAt,
      attempts: d.attempts,
    })),
    writes: (status.writes ?? []).map((w) => ({
      issue: link(w.number),
      agentId: w.agentId,
      fence: w.fence,
      kind: w.kind,
      closesAt: w.closesAt,
      state:
        w.outcome === null ? `in flight (deadline ${w.deadline})` : "no answer from GitHub yet",
    })),
    cycles: graph.diagnostics.flatMap((d) => (d.kind === "cycle" ? [d.issues.map(link)] : [])),
    unresolved: graph.diagnostics.flatMap((d) =>
      d.kind === "unresolved-ref" ? [{ issue: link(d.issue), ref: String(d.ref) }] : [],
    ),
    configError: graph.config.status.error,
    configCheckedAt: graph.config.status.at,
    config: pretty(graph.config.effective),
    watermarks: pretty(graph.watermarks),
    reconcile: reconcile === undefined || reconcile === null ? null : pretty(reconcile),
    repository: {
      archived: graph.repository?.archived === true,
      private: graph.repository?.private ?? null,
      writes: graph.repository?.writes ?? "on",
    },
    parkedWrites: graph.parkedWritesCount ?? 0,
    firstReconcile: describeFirstReconcile(graph.firstReconcile),
    installation: graph.installation ? describeInstallProgress(graph.installation) : null,
    audit: status.audit.map((a) => ({ at: a.at, kind: a.kind, detail: JSON.stringify(a.detail) })),
  };
}

/** The queue policy's part of the page: the breaker's pause or state, the priority sources. */
function policyModel(
  graph: GraphRead,
  htmlBase: string,
): Pick<RepoPageModel, "pause" | "breaker" | "priority"> {
  const base = `${htmlBase.replace(/\/+$/, "")}/${graph.repo}`;
  const b = graph.breaker;
  const paused = b?.paused ?? null;
  const p = graph.priority;
  return {
    pause:
      paused === null
        ? null
        : {
            since: paused.since,
            sha: paused.sha,
            commit: { label: paused.sha.slice(0, 7), url: `${base}/commit/${paused.sha}` },
            failing: paused.failing.map((f) => ({
              label: f.name,
              url: f.url ?? `${base}/commit/${paused.sha}`,
            })),
          },
    breaker:
      b === undefined || b.state === "unconfigured"
        ? null
        : { state: b.state, reason: b.reason, head: b.head?.sha ?? null, pending: b.pending },
    priority: {
      labels: Object.entries(p?.labels ?? {})
        .sort((x, y) => x[1] - y[1])
        .map(([label, rank]) => `${label} → ${rank}`)
        .join(", "),
      project:
        p?.project == null
          ? null
          : {
              what: `project ${p.project.number}, field ${p.project.field}`,
              state: p.project.state,
              reason: p.project.reason,
              ranked: p.project.ranked,
            },
    },
  };
}

/** A first full reconcile not done yet, in a sentence (null once done or not known). */
export function describeFirstReconcile(first: FirstReconcile | undefined): string | null {
  if (first === undefined || first.state === "done") return null;
  const why = "until then the graph holds only what webhooks brought";
  if (first.state === "running") return `The first full reconcile is under way; ${why}.`;
  return first.position === null
    ? `The first full reconcile waits for the installation's permit; ${why}.`
    : `The first full reconcile waits for the installation's permit (${ordinal(first.position)} in line); ${why}.`;
}

/** The installation's pacing of full reconciles, in a sentence. */
export function describeInstallProgress(p: InstallProgress): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const total = p.reconciled + p.waiting + p.inFlight;
  const rest = p.waiting + p.inFlight;
  return (
    `${n(p.reconciled)} of ${n(total)} repositories reconciled, ${n(p.waiting)} waiting, ${n(p.inFlight)} in progress; ` +
    `${n(p.usedThisHour)} requests spent on reconciles this hour (budget ${n(p.budgetPerHour)} an hour)` +
    (rest === 0 ? "." : `; the rest in about ${formatDuration(p.etaMs)}.`)
  );
}

function ordinal(k: number): string {
  const tens = k % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : (["th", "st", "nd", "rd"][k % 10] ?? "th");
  return `${k}${suffix}`;
}
