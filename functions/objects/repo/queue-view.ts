import type { Config } from "../../../shared/config/schema.ts";
import type { GraphAnalysis } from "../../../shared/graph/analyze.ts";
import { type CompactGraph, STATE_OPEN } from "../../../shared/graph/compact.ts";
import {
  analyzeCompactSteps,
  asGraphAnalysis,
  type CompactAnalysis,
  releaseAnalysis,
} from "../../../shared/graph/compact-analysis.ts";
import type { Kick } from "../../../shared/graph/kicks.ts";
import { formatInstant, instantMs } from "../../../shared/graph/time.ts";
import { liveHolder, resolveClaims } from "../../../shared/idd/claims.ts";
import { parseCommentMarker } from "../../../shared/idd/comment-markers.ts";
import { trustedMarkerAuthors } from "../../../shared/idd/trust.ts";
import { kickReason } from "../../../shared/producer/plan.ts";
import { impactLookup } from "../../../shared/queue/impact.ts";
import { type QueueItem, queueItems } from "../../../shared/queue/queue.ts";
import {
  decideReply,
  type Reply,
  type ReplyQuiet,
  replyAuthorScope,
  replyAuthorToCheck,
  replyExclusion,
  replyLeftOut,
  summarizeClassified,
} from "../../../shared/queue/reply-state.ts";
import type { ClaimsStore } from "./claims-store.ts";
import type { MarkerCommentRow, RepoStore } from "./repo-store.ts";

/** A live IDD claim by someone other than switchyard, which the fleet API must respect. */
export interface IddHolder {
  agentId: string;
  staleAt: string;
  staleAtMs: number;
}

/** Everything the queue and the grant rules read about the graph, computed once per change. */
export interface QueueView {
  /** `RepoStore.rulesVersion` and the compact graph it was made of (its titles are read live). */
  version: number;
  graph: CompactGraph;
  builtMs: number;
  config: Config;
  analysis: GraphAnalysis;
  /** The queue's candidates, ascending by number (claims, stuck and done filtered per request). */
  items: QueueItem[];
  itemOf: Map<number, QueueItem>;
  idd: Map<number, IddHolder>;
  /** Issues whose holder by IDD's reading is one of switchyard's claims: that claim's id. */
  own: Map<number, string>;
  /** When a trusted IDD agent's marker (not switchyard's) was last posted on an open issue. */
  iddSeenMs: number | null;
  /** Marker authors whose write access is unknown: counted as trusted until GitHub says. */
  unknownAuthors: string[];
  /**
   * Reply authors whose write access is unknown and decides a reply next
   * (`replyAuthorToCheck`): their words count as a stranger's until GitHub says.
   */
  unknownReplyAuthors: string[];
  /**
   * Open issues whose trusted human input waits for an agent (shared/queue/reply-state.ts),
   * minus the sweep's exclusions; issues whose thread was never read whole are not evaluated.
   */
  replies: Map<number, Reply>;
  /** Open issues whose thread was not seen whole: the `replies` schedule reads them. */
  unreadThreads: number[];
}

/** Rebuilt at least this often even without changes: processing locks and IDD claims age. */
export const VIEW_MAX_AGE_MS = 60_000;

/**
 * Builds the view: the graph analysis (switchyard's own processing labels are not locks), the
 * impact of every open issue, the queue candidates with their reasons, and the live IDD claims
 * of other agents by trusted authors.
 */
export function buildQueueView(store: RepoStore, claims: ClaimsStore, nowMs: number): QueueView {
  const steps = buildQueueViewSteps(store, claims, nowMs);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * `buildQueueView` in steps: it yields between the analysis's passes and after each whole-graph
 * computation, so a caller can let webhook acknowledgements in (at 100,000 issues the view is a
 * few hundred milliseconds of work). A caller that pauses must start over if the graph changed.
 */
export function* buildQueueViewSteps(
  store: RepoStore,
  claims: ClaimsStore,
  nowMs: number,
): Generator<void, QueueView, void> {
  // The graph this view is of: a caller pausing between steps compares it with the store's.
  const version = store.rulesVersion;
  const now = formatInstant(nowMs);
  const config = store.config();
  const graph = store.compactGraph();
  const ownLocks = new Set<number>();
  for (const c of claims.open()) ownLocks.add(c.number);
  for (const f of claims.fleetRows()) if (f.processing) ownLocks.add(f.number);
  // Over the compact graph (typed arrays, no bodies: `requires:` was extracted at ingest).
  const compact = yield* analyzeCompactSteps(graph, { now, config, ownLocks });
  let built = false;
  try {
    const view = yield* viewOf(compact);
    built = true;
    return view;
  } finally {
    // Voided after its analysis finished (a caller called `return()`): its arrays go back too.
    if (!built) releaseAnalysis(compact);
  }

  function* viewOf(compact: CompactAnalysis): Generator<void, QueueView, void> {
    const analysis = asGraphAnalysis(compact);
    yield;
    // Read while the items are made, not kept: nothing reads a score later.
    const impact = impactLookup(analysis);
    yield;

    const kicks = new Map<number, Kick[]>();
    for (const kick of analysis.kicks) {
      const list = kicks.get(kick.target);
      if (list) list.push(kick);
      else kicks.set(kick.target, [kick]);
    }
    const reasons = new Map<number, string>();
    for (const [target, list] of kicks) reasons.set(target, kickReason(list));
    // The project field's options (`priority.project`): a row per ranked issue, read once.
    const options =
      config.priority.project === null ? new Map<number, string>() : store.priority.options();
    const replies = new Map<number, Reply>();
    const unreadThreads: number[] = [];
    const unknownReplyAuthors = new Set<string>();
    if (config.queue.replies !== "off") {
      // One read of the permission cache per login per view, however many comments they wrote.
      const trust = {
        replyAuthors: config.queue.replyAuthors,
        knownWrite: claims.trustReader(nowMs),
      };
      const policy = { replies: config.queue.replies, needsHumanLabel: config.labels.needsHuman };
      // A `done` release answered an input: its reply waits until newer input arrives.
      const answered = store.replies.answered();
      // An input whose reply claims kept ending without `done` is parked until newer input.
      const attempts = store.replies.attempts();
      // What a history gives nothing to is not read (a closed issue; a quiet history under its
      // issue's labels: shared/queue/reply-state.ts, `quietFor`); what is read is decided below.
      const skip = (n: number, quiet: ReplyQuiet) => {
        const slot = graph.presentSlot(n);
        if (slot === -1) return true;
        return replyLeftOut(graph.state[slot] === STATE_OPEN, graph.labelsOf(slot), quiet, policy);
      };
      let read = 0;
      for (const history of store.replies.histories({ skip })) {
        // Every open issue has a history once reconciled: webhooks get their turn in between.
        if (++read % 500 === 0) yield;
        const facts = analysis.factsOf(history.number);
        const summary = summarizeClassified(history, trust);
        // Not seen whole, or a part read backwards that no longer shows its input (edited or
        // deleted since): the `replies` schedule reads the thread.
        if (facts !== undefined && summary === null) unreadThreads.push(history.number);
        if (facts === undefined || replyExclusion(facts) !== null) continue;
        const labels = analysis.graph.issue(history.number)?.labels ?? [];
        const ask = replyAuthorToCheck(history, trust, replyAuthorScope(labels, policy));
        if (ask !== null) unknownReplyAuthors.add(ask.toLowerCase());
        const state = decideReply(summary, labels, policy);
        if (state.state !== "unanswered") continue;
        const done = answered.get(history.number);
        if (done !== undefined && done.url === state.reply.url && done.at === state.reply.at)
          continue;
        const tried = attempts.get(history.number);
        if (
          tried !== undefined &&
          tried.url === state.reply.url &&
          tried.at === state.reply.at &&
          tried.attempts >= config.claims.maxAttempts
        )
          continue;
        replies.set(history.number, state.reply);
      }
    }
    yield;
    const items = queueItems(analysis, {
      reasons,
      requires: (n) => graph.requiresOf(graph.presentSlot(n)),
      impact,
      projectOption: (n) => options.get(n) ?? null,
      replies,
    });

    const byIssue = new Map<number, MarkerCommentRow[]>();
    for (const row of store.openMarkerComments()) {
      const list = byIssue.get(row.number);
      if (list) list.push(row);
      else byIssue.set(row.number, [row]);
    }
    const idd = new Map<number, IddHolder>();
    const own = new Map<number, string>();
    const unknown = new Set<string>();
    let iddSeenMs: number | null = null;
    for (const [number, all] of byIssue) {
      // A bot's comment counts only when it is one of switchyard's own mirrored markers: another
      // App, or anything else posted with switchyard's identity, is never an IDD claim.
      const rows = all.filter(
        (r) => r.author_type !== "Bot" || claims.hasClaimId(claimIdIn(r.body)),
      );
      if (rows.length === 0) continue;
      const trust = trustedMarkerAuthors(
        rows.map((r) => ({
          login: r.author,
          type: r.author_type,
          association: r.author_association,
          ownMarker: r.author_type === "Bot",
        })),
        {
          configured: config.idd.trustedMarkerActors ?? null,
          known: (login) => claims.trust(login),
        },
      );
      for (const login of trust.unknown) unknown.add(login);
      // The latest marker by a trusted IDD agent (not switchyard's own): IDD agents work here.
      const trustedLogins = new Set(trust.trusted.map((l) => l.toLowerCase()));
      for (const r of rows) {
        if (r.author_type === "Bot" || !trustedLogins.has(r.author.toLowerCase())) continue;
        const at = instantMs(r.created_at);
        if (iddSeenMs === null || at > iddSeenMs) iddSeenMs = at;
      }
      try {
        const resolution = resolveClaims(
          rows.map((r) => ({
            id: r.id,
            createdAt: r.created_at,
            author: { login: r.author, type: r.author_type },
            body: r.body,
          })),
          { now, staleHours: config.idd.staleHours, trusted: trust.trusted },
        );
        const holder = liveHolder(resolution);
        // switchyard's own mirrored markers: its claims table already says who holds the issue.
        if (holder?.claimId != null && claims.hasClaimId(holder.claimId)) {
          own.set(number, holder.claimId);
        } else if (holder) {
          idd.set(number, {
            agentId: holder.agentId,
            staleAt: holder.staleAt,
            staleAtMs: instantMs(holder.staleAt),
          });
        }
      } catch {
        // A comment history the IDD rules cannot read holds nothing.
      }
    }
    return {
      version,
      graph,
      builtMs: nowMs,
      config,
      analysis,
      items,
      itemOf: new Map(items.map((i) => [i.number, i])),
      idd,
      own,
      iddSeenMs,
      unknownAuthors: [...unknown].sort(),
      unknownReplyAuthors: [...unknownReplyAuthors].sort(),
      replies,
      unreadThreads,
    };
  }
}

/** The claim-id a comment's marker names (empty when it names none). */
function claimIdIn(body: string): string {
  const read = parseCommentMarker(body);
  if (read.status !== "ok") return "";
  const m = read.marker;
  return m.kind === "claimed-by" || m.kind === "unclaimed-by" || m.kind === "activation-nonce"
    ? m.claimId
    : "";
}
