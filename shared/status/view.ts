// The repository page's view-model: what the RepoObject answered (its graph read and its status
// read), turned into the lists, links and figures the page shows. Pure: the Worker and any
// other host build the same model from the same answers, and render the same page.
import type { Attempt } from "../claims/rules.ts";
import type { Diagnostic } from "../graph/analyze.ts";
import type { IssueRef } from "../graph/refs.ts";
import { type EndedClaim, type Figures, figuresOf } from "./figures.ts";
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
  deliveries?: { applied: number; duplicate: number };
  /** Reconcile progress, when the RepoObject reports it. */
  reconcile?: unknown;
  reconcileProgress?: unknown;
}

/** The part of `RepoObject.statusView()` the page reads. */
export interface StatusRead {
  picture: Picture;
  queue: {
    total: number;
    items: Array<{ number: number; title: string; reason: string; attempts: number }>;
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
  queue: Array<{ issue: Link; title: string; reason: string; attempts: number }>;
  queueTotal: number;
  claims: Array<{
    issue: Link;
    agentId: string;
    machine: string | null;
    fence: number | null;
    expiresAt: string;
    source: "fleet" | "idd";
  }>;
  blocked: Array<{ issue: Link; title: string; blockers: Link[] }>;
  rollupCandidates: Array<{ issue: Link; title: string; children: Link[] }>;
  deadLetters: Array<{ issue: Link; title: string; stuckAt: string | null; attempts: Attempt[] }>;
  cycles: Link[][];
  unresolved: Array<{ issue: Link; ref: string }>;
  configError: string | null;
  configCheckedAt: string | null;
  config: string;
  watermarks: string;
  reconcile: string | null;
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
    })),
    queueTotal: status.queue.total,
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
    audit: status.audit.map((a) => ({ at: a.at, kind: a.kind, detail: JSON.stringify(a.detail) })),
  };
}
