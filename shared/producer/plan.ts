import { analyzeSnapshot, type GraphAnalysis, type IssueFacts } from "../graph/analyze.ts";
import type { Kick } from "../graph/kicks.ts";
import type { ScanOptions } from "../graph/options.ts";
import type { IssueRef } from "../graph/refs.ts";
import type { Snapshot } from "../graph/snapshot.ts";

export interface LabelChange {
  number: number;
  label: string;
  reason: string;
}

export interface LabelPlan {
  add: LabelChange[];
  remove: LabelChange[];
}

export interface PlanOptions extends ScanOptions {
  /** `events` (default from config): only kick targets; `all`: every ready issue too. */
  mode?: "events" | "all";
  /** In mode `all`, only ready issues carrying this label are added (besides kick targets). */
  approvalLabel?: string | null;
  /** Released `done` by the fleet API: not added again until a kick targets them. */
  suppressed?: ReadonlySet<number>;
  /** Never added (dead-lettered by the fleet API, even before its label lands). */
  excluded?: ReadonlySet<number>;
  /**
   * Adds of an earlier plan that were parked (GitHub kept refusing them), by issue, with their
   * reasons: planned again like kick targets while the issue is still ready.
   */
  retryAdds?: ReadonlyMap<number, string>;
}

const ref = (r: IssueRef) => (typeof r === "number" ? `#${r}` : r);

export function kickReason(kicks: readonly Kick[]): string {
  return `kick: ${kicks.map((k) => `${k.kind} by ${k.causes.map(ref).join(", ")}`).join("; ")}`;
}

/** Why the producer takes the ready label off, or null when it must leave it alone. */
function removalReason(state: string, facts: IssueFacts | undefined): string | null {
  if (state === "closed") return "closed";
  if (!facts) return null;
  if (facts.epicManaged) return "epic-managed";
  if (facts.held) return "held";
  if (facts.stuck) return "stuck";
  if (facts.openBlockers.length > 0) return `blocked by ${facts.openBlockers.map(ref).join(", ")}`;
  return null;
}

/**
 * The ready issues an add may go to. In mode `events` only kick targets and retried adds can get
 * one, so only those are looked at: walking every ready issue would make facts for each of them
 * (tens of thousands at 100k issues) on every producer run, inside the object's one thread.
 */
function addCandidates(
  analysis: GraphAnalysis,
  mode: "events" | "all",
  kicksByTarget: ReadonlyMap<number, Kick[]>,
  retryAdds: ReadonlyMap<number, string> | undefined,
): readonly IssueFacts[] {
  if (mode === "all") return analysis.readyFacts();
  const numbers = new Set(kicksByTarget.keys());
  for (const number of retryAdds?.keys() ?? []) numbers.add(number);
  const out: IssueFacts[] = [];
  for (const number of [...numbers].sort((a, b) => a - b)) {
    const facts = analysis.factsOf(number);
    if (facts?.ready) out.push(facts);
  }
  return out;
}

/**
 * The `agent:ready` label plan of spec 4. Adds go to ready kick targets (and in mode `all` to
 * ready issues); removals only from closed, held, stuck, blocked or epic-managed issues — finished work
 * is the consumer's to unlabel. Planning again after applying a plan yields an empty plan.
 */
export function planFromAnalysis(analysis: GraphAnalysis, options: PlanOptions = {}): LabelPlan {
  const { graph, factsOf } = analysis;
  const { config } = analysis.options;
  const readyLabel = config.labels.ready;
  const mode = options.mode ?? config.queue.mode;
  const approval =
    options.approvalLabel !== undefined ? options.approvalLabel : config.queue.approvalLabel;

  const kicksByTarget = new Map<number, Kick[]>();
  for (const kick of analysis.kicks) {
    const list = kicksByTarget.get(kick.target);
    if (list) list.push(kick);
    else kicksByTarget.set(kick.target, [kick]);
  }

  const add: LabelChange[] = [];
  for (const facts of addCandidates(analysis, mode, kicksByTarget, options.retryAdds)) {
    const number = facts.number;
    if (options.excluded?.has(number)) continue;
    const { labels } = graph.issue(number)!;
    if (labels.includes(readyLabel)) continue;
    const kicks = kicksByTarget.get(number);
    if (!kicks && options.suppressed?.has(number)) continue;
    const retried = options.retryAdds?.get(number);
    if (kicks) {
      add.push({ number, label: readyLabel, reason: kickReason(kicks) });
    } else if (retried !== undefined) {
      add.push({ number, label: readyLabel, reason: `retry of a parked write (${retried})` });
    } else if (mode === "all") {
      if (approval === null) add.push({ number, label: readyLabel, reason: "mode all: ready" });
      else if (labels.includes(approval)) {
        add.push({ number, label: readyLabel, reason: `mode all: ready and labeled ${approval}` });
      }
    }
  }

  const remove: LabelChange[] = [];
  // Only the labeled issues: a compact analysis makes issue objects one at a time, on demand.
  for (const number of graph.withLabel(readyLabel)) {
    const issue = graph.issue(number)!;
    const reason = removalReason(issue.state, factsOf(number));
    if (reason !== null) remove.push({ number, label: readyLabel, reason });
  }

  add.sort((a, b) => a.number - b.number);
  remove.sort((a, b) => a.number - b.number);
  return { add, remove };
}

export function plan(snapshot: Snapshot, options: PlanOptions = {}): LabelPlan {
  return planFromAnalysis(analyzeSnapshot(snapshot, options), options);
}
