import { compactOf } from "../../../shared/graph/compact-analysis.ts";
import { crossEdgesToPush, viaOf } from "../../../shared/org/cross-impact.ts";
import {
  HEAD_CLAIMS,
  HEAD_SIZE,
  nextHeadVersion,
  type RepoHead,
} from "../../../shared/org/head.ts";
import { crossWaitsOf, waitGraphOf } from "../../../shared/org/wait-graph.ts";
import { ownerObject } from "../owner/owner-object.ts";
import type { RepoContext } from "./context.ts";
import { pause } from "./pause.ts";
import type { QueueView } from "./queue-view.ts";
import type { RepoIdentity } from "./repo-store.ts";

// The org queue's feed (spec 6.2): the repository pushes the head of its queue to its owner's
// object whenever what anyone may claim changes (a new queue view, a grant, a release, an
// expiry, a lifecycle change), versioned so a late push changes nothing there. The `owner`
// schedule coalesces bursts and retries a failed push with the usual backoff.

/** Asks for a push (coalesced: one push serves every change before it runs). */
export function owePush(c: RepoContext, nowMs: number): void {
  c.schedules.at("owner", nowMs);
}

/** The head as it stands now (an inactive repository pushes its status and nothing else). */
async function headOf(c: RepoContext, identity: RepoIdentity, nowMs: number): Promise<RepoHead> {
  const version = nextHeadVersion(c.store.meta.get("ownerHeadVersion") ?? 0, nowMs);
  // A removed repository keeps no row but its identity and generation (lifecycle.ts `wipe`):
  // its last push is stamped by the clock alone, which is past every earlier version anyway.
  if (identity.status === "active") c.store.meta.set("ownerHeadVersion", version);
  const base = {
    repoId: identity.repoId,
    fullName: identity.fullName,
    installationId: identity.installationId,
    version,
    status: identity.status,
  };
  if (identity.status !== "active") return { ...base, items: [], total: 0, claims: [] };
  await c.store.prepareGraph(pause);
  await c.views.prepare(nowMs, pause);
  const { items, total, view } = c.views.head(nowMs, HEAD_SIZE);
  const attempts = c.store.claims.attemptCounts();
  const claims = (c.claims.list(nowMs).body as { claims: RepoHead["claims"] }).claims;
  const cross = crossOf(
    c,
    view.analysis,
    identity.fullName,
    items.map((i) => i.item.number),
  );
  return {
    ...base,
    items: items.map(({ item, work, reply }) => ({
      number: item.number,
      title: view.analysis.graph.issue(item.number)?.title ?? item.title,
      // What it may be claimed for now: the owner matches `kinds` as the repository's queue does.
      kind: item.kind,
      work,
      reply: reply ? item.reply : null,
      section: item.section,
      reason: item.reason,
      requires: [...item.requires],
      impact: item.impact,
      priority: item.priority,
      attempts: attempts.get(item.number) ?? 0,
      url: c.views.issueUrl(item.number),
      ...(cross.via.has(item.number) ? { via: cross.via.get(item.number) } : {}),
    })),
    total,
    claims: claims.slice(0, HEAD_CLAIMS),
    ...(cross.edges.length > 0 ? { crossEdges: cross.edges } : {}),
    ...(cross.told.length > 0 ? { crossBlockers: cross.told } : {}),
  };
}

/**
 * `order=impact` across repositories (shared/org/cross-impact.ts): this repository's edges to
 * other repositories of the owner, and per item which of the issues others wait on (as the
 * owner told, `crossBlockers`) it reaches. Read synchronously from the queue view's analysis.
 */
function crossOf(
  c: RepoContext,
  analysis: QueueView["analysis"],
  fullName: string,
  items: readonly number[],
) {
  const told = c.store.meta.get("crossBlockers") ?? [];
  const compact = compactOf(analysis);
  if (compact === undefined) return { edges: [], via: new Map<number, number[]>(), told };
  const graph = waitGraphOf(compact);
  return {
    edges: crossEdgesToPush(graph, crossWaitsOf(compact, fullName)),
    via: told.length > 0 ? viaOf(graph, told, items) : new Map<number, number[]>(),
    told,
  };
}

/**
 * The owner's object tells which of this repository's issues other repositories wait on: kept,
 * and a push owed when it changed (the items' `via` depend on it).
 */
export function tellCrossBlockers(c: RepoContext, numbers: readonly number[], nowMs: number) {
  const next = [...new Set(numbers)].sort((a, b) => a - b);
  const held = c.store.meta.get("crossBlockers") ?? [];
  if (held.length === next.length && held.every((n, i) => n === next[i])) return false;
  c.store.transaction(() => {
    if (next.length > 0) c.store.meta.set("crossBlockers", next);
    else c.store.meta.delete("crossBlockers");
    owePush(c, nowMs);
  });
  return true;
}

/** The `owner` schedule, and a lifecycle change's push: the head sent to the owner's object. */
export async function pushHead(c: RepoContext, identity: RepoIdentity, nowMs: number) {
  const head = await headOf(c, identity, nowMs);
  const owner = identity.fullName.split("/")[0]!;
  await ownerObject(c.env, owner).push(head, Date.now());
}
