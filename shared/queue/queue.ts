import type { GraphAnalysis, IssueFacts } from "../graph/analyze.ts";
import type { ImpactScores } from "./impact.ts";
import type { Orderable, QueueSection } from "./order.ts";
import { priorityRank, rankTable } from "./priority.ts";
import type { Reply } from "./reply-state.ts";

/**
 * What an item is (spec 6.4): `kick` and `rollup` (the ready-label section), `ready` (mode
 * `all`), or `reply`: unanswered trusted human input on an issue with no work item. A work item
 * whose issue also has unanswered input carries it in `reply`.
 */
export const QUEUE_KINDS = ["kick", "rollup", "ready", "reply"] as const;
export type QueueKind = (typeof QUEUE_KINDS)[number];

/** claim-next's kinds when none are asked for: a work loop never starts answering people unasked. */
export const DEFAULT_CLAIM_KINDS: readonly QueueKind[] = ["kick", "rollup", "ready"];

/** Whether `item` is one of `kinds`: by its kind or, for `reply`, by its `reply` field. */
export function matchesKinds(item: QueueItem, kinds: ReadonlySet<QueueKind>): boolean {
  return kinds.has(item.kind) || (kinds.has("reply") && item.reply !== null);
}

/** Why a claim-next of `kinds` took `item`: its work, or the input it carries. */
export function selectedFor(item: QueueItem, kinds: ReadonlySet<QueueKind>): "work" | "reply" {
  return item.kind !== "reply" && kinds.has(item.kind) ? "work" : "reply";
}

/** One claimable issue of the queue, before per-request filtering. */
export interface QueueItem extends Orderable {
  number: number;
  title: string;
  labels: readonly string[];
  requires: readonly string[];
  reason: string;
  kind: QueueKind;
  /** The unanswered trusted input on the issue, if any (shared/queue/reply-state.ts). */
  reply: Reply | null;
  /** 1: a reply only; 2: carries the ready label; 3: ready without it (mode `all`); spec 6.4's numbering. */
  section: QueueSection;
  impact: number;
  /** Priority rank from labels and the project field (shared/queue/priority.ts); null: none. */
  priority: number | null;
}

export interface QueueInputs {
  /** Why the producer put the ready label on an issue, when switchyard did. */
  reasons: ReadonlyMap<number, string>;
  /** Capabilities an issue's body asks for (`<!-- requires: ... -->`). */
  requires: (number: number) => readonly string[];
  impact: ImpactScores;
  /** The issue's option in the configured project field (`priority.project`), if any. */
  projectOption?: (number: number) => string | null;
  /** Open issues whose trusted human input waits for an agent (the queue view's replies). */
  replies?: ReadonlyMap<number, Reply>;
}

/**
 * The queue's sections (spec 6.4): ready issues carrying the ready label (kicks and rollups),
 * then, in mode `all`, the other ready issues (only those with `queue.approvalLabel` when set).
 * Ascending by number; live claims, stuck and done issues are filtered per request
 * (`isAvailable`), capabilities too (`hasCapabilities`).
 */
export function queueItems(analysis: GraphAnalysis, inputs: QueueInputs): QueueItem[] {
  const { config } = analysis.options;
  const readyLabel = config.labels.ready;
  const approval = config.queue.approvalLabel;
  const ranks = rankTable(config.priority);
  const items: QueueItem[] = [];
  for (const facts of candidates(analysis, readyLabel, config.queue.mode)) {
    const issue = analysis.graph.issue(facts.number)!;
    const labeled = issue.labels.includes(readyLabel);
    let section: QueueSection;
    let reason: string;
    let kind: QueueKind;
    if (labeled) {
      section = 2;
      kind = facts.childCount > 0 ? "rollup" : "kick";
      reason =
        inputs.reasons.get(facts.number) ??
        (facts.childCount > 0
          ? `rollup: every sub-issue is closed (${analysis.graph
              .childrenOf(facts.number)
              .map((n) => `#${n}`)
              .join(", ")})`
          : `labeled ${readyLabel}`);
    } else if (config.queue.mode === "all") {
      if (approval !== null && !issue.labels.includes(approval)) continue;
      section = 3;
      kind = "ready";
      reason = approval === null ? "mode all: ready" : `mode all: ready and labeled ${approval}`;
    } else {
      continue;
    }
    items.push({
      number: facts.number,
      title: issue.title,
      labels: issue.labels,
      requires: inputs.requires(facts.number),
      reason,
      kind,
      reply: inputs.replies?.get(facts.number) ?? null,
      section,
      impact: inputs.impact.get(facts.number) ?? 0,
      priority: priorityRank(ranks, issue.labels, inputs.projectOption?.(facts.number) ?? null),
    });
  }
  if (inputs.replies === undefined || inputs.replies.size === 0) return items;
  // Section 1: issues whose only reason is unanswered input (held, waiting, stuck or parent
  // issues included: a person speaking on them is the input that matters most).
  const worked = new Set(items.map((i) => i.number));
  for (const [number, reply] of inputs.replies) {
    const issue = analysis.graph.issue(number);
    if (issue === undefined || worked.has(number)) continue;
    items.push({
      number,
      title: issue.title,
      labels: issue.labels,
      requires: inputs.requires(number),
      reason: `reply: ${reply.reason} by ${reply.author}`,
      kind: "reply",
      reply,
      section: 1,
      impact: inputs.impact.get(number) ?? 0,
      priority: priorityRank(ranks, issue.labels, inputs.projectOption?.(number) ?? null),
    });
  }
  return items.sort((a, b) => a.number - b.number);
}

/**
 * The ready issues the queue may list: in mode `events` only those carrying the ready label, so
 * only those are looked at (making facts and an issue object for every ready issue was most of
 * a queue view's garbage at 100,000 issues); in mode `all` every ready issue.
 */
function candidates(
  analysis: GraphAnalysis,
  readyLabel: string,
  mode: "events" | "all",
): readonly IssueFacts[] {
  if (mode === "all") return analysis.readyFacts();
  const out: IssueFacts[] = [];
  for (const number of analysis.graph.withLabel(readyLabel)) {
    const facts = analysis.factsOf(number);
    if (facts?.ready) out.push(facts);
  }
  return out;
}

/**
 * May the queue hand this issue out now? Not while someone holds it (a live switchyard claim, or
 * a live IDD claim marker by a trusted author until it goes stale), and not while it is parked
 * (dead-lettered, or released `done` until its next kick or reopening).
 */
export function isAvailable(
  number: number,
  state: {
    live: ReadonlySet<number>;
    parked: ReadonlySet<number>;
    idd: ReadonlyMap<number, { staleAtMs: number }>;
    nowMs: number;
  },
): boolean {
  if (state.live.has(number) || state.parked.has(number)) return false;
  const idd = state.idd.get(number);
  return idd === undefined || idd.staleAtMs <= state.nowMs;
}

/** Every capability the issue requires is among the caller's (none given: none held). */
export function hasCapabilities(item: QueueItem, capabilities: ReadonlySet<string>): boolean {
  for (const need of item.requires) if (!capabilities.has(need.toLowerCase())) return false;
  return true;
}

/** Normalises a caller's capability list (`a,b` or an array) for `hasCapabilities`. */
export function capabilitySet(input: string | readonly string[] | undefined): Set<string> {
  const list = typeof input === "string" ? input.split(",") : (input ?? []);
  return new Set(list.map((c) => c.trim().toLowerCase()).filter((c) => c !== ""));
}
