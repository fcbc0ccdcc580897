import type { BudgetDecision } from "../../../shared/budget/write-budget.ts";
import type { GitHubClient } from "../../../shared/github/client.ts";
import { addLabels, removeLabel } from "../../../shared/github/writes.ts";
import { formatInstant, instantMs } from "../../../shared/graph/time.ts";
import { planFromAnalysis } from "../../../shared/producer/plan.ts";
import { writeFailureVerdict } from "../../../shared/producer/write-failure.ts";
import { producerDueMs, producerWindowMs } from "../../../shared/schedule/policy.ts";
import type { RepoContext } from "./context.ts";
import { GraphScans } from "./graph-scans.ts";
import type { ProducerRun } from "./meta-store.ts";
import { type LabelOp, type ParkedWrite, writeKey } from "./outbox-store.ts";
import { pause } from "./pause.ts";
import type { RepoStore } from "./repo-store.ts";

export type { LabelOp };

/** A parked write as the graph API shows it. */
export interface ParkedWriteView {
  number: number;
  label: string;
  action: "add" | "remove";
  reason: string;
  attempts: number;
  lastError: string | null;
  parkedAt: string;
}

export interface FlushResult {
  done: number;
  /** A failure that can pass; the write stays queued. */
  failed: Error | null;
  /** Writes still queued (parked ones are not). */
  left: number;
  /** Writes parked by this flush. */
  parked: number;
  /** Set when the budget ran out: when there is room again. */
  retryAtMs: number | null;
  /**
   * The run is over without finishing: the repository stopped being active meanwhile, or the
   * run was dropped (and maybe replaced) while a write was in flight.
   */
  stopped: boolean;
}

/** What the fleet API asks of the producer: issues not to label ready, and kicks that lift that. */
export interface ProducerFleetHooks {
  exclusions(): { suppressed: ReadonlySet<number>; excluded: ReadonlySet<number> };
  liftSuppression(numbers: Iterable<number>): void;
}

/**
 * The producer's durable half: plans go into an outbox under a fence, so two runs never
 * interleave their writes, a failed write is retried (never duplicated) a bounded number of
 * times and then parked, and the watermark moves only after every write of its run succeeded
 * or was parked, and only while the run is still the current one.
 */

export class Producer {
  private readonly store: RepoStore;
  private readonly fleet: ProducerFleetHooks | null;
  private readonly scans: GraphScans;
  constructor(
    store: RepoStore,
    fleet: ProducerFleetHooks | null = null,
    scans: GraphScans = new GraphScans(store),
  ) {
    this.store = store;
    this.fleet = fleet;
    this.scans = scans;
  }

  private run(): ProducerRun | null {
    return this.store.meta.get("producerRun") ?? null;
  }

  pending(): LabelOp[] {
    return this.store.outbox.ops();
  }

  /**
   * Writes set aside after they kept failing; planned again after the next full reconcile. With
   * `limit`, the most recent `limit` of them (`parkedCount` says how many there are).
   */
  parked(limit?: number): ParkedWriteView[] {
    return this.store.outbox.parked(limit).map((p: ParkedWrite) => ({
      number: p.op.number,
      label: p.op.label,
      action: p.op.action,
      reason: p.op.reason,
      attempts: p.attempts,
      lastError: p.lastError,
      parkedAt: formatInstant(p.parkedMs),
    }));
  }

  parkedCount(): number {
    return this.store.outbox.parkedCount();
  }

  /** True while `run` is the recorded run and the repository is active in its generation. */
  private current(run: ProducerRun): boolean {
    return this.store.stillActive(run.generation) && this.run()?.fence === run.fence;
  }

  /**
   * Plans from the stored graph and queues the writes. Returns the number queued. Does nothing
   * while a previous run still has writes outstanding (they go first), and nothing before the
   * first full reconcile: kicks planned on a partial graph would be spent without effect.
   */
  plan(nowMs: number): number {
    return this.store.transaction(() => {
      if (this.run() !== null) return 0;
      const watermarks = this.store.watermarks();
      if (watermarks.lastFullReconcileAt === null) return 0;
      // The scan the graph API shows, kept since the last change (made now if there was one).
      const scan = this.scans.current(nowMs);
      const { causes, maxSeq } = scan;
      // Writes parked before the last full reconcile are planned again (if still needed) now.
      const retried = this.store.outbox.takeParked(instantMs(watermarks.lastFullReconcileAt));
      const retryAdds = new Map(
        retried.filter((p) => p.op.action === "add").map((p) => [p.op.number, p.op.reason]),
      );
      const now = formatInstant(nowMs);
      const analysis = scan.analysis();
      const exclusions = this.fleet?.exclusions();
      const labelPlan = planFromAnalysis(analysis, { ...exclusions, retryAdds });
      // A kick brings an issue released `done` back: the next plan may label it again.
      if (exclusions && exclusions.suppressed.size > 0) {
        this.fleet!.liftSuppression(
          analysis.kicks.map((k) => k.target).filter((n) => exclusions.suppressed.has(n)),
        );
      }
      // A write parked since the last full reconcile is not planned again (it would only be
      // refused and parked again, run after run): the plan after the next full one retries it.
      const parked = new Set(this.store.outbox.parked().map((p) => writeKey(p.op)));
      const add = labelPlan.add.filter((c) => !parked.has(writeKey({ ...c, action: "add" })));
      const remove = labelPlan.remove.filter(
        (c) => !parked.has(writeKey({ ...c, action: "remove" })),
      );
      const ops: LabelOp[] = [
        ...add.map((c) => ({ ...c, action: "add" as const })),
        ...remove.map((c) => ({ ...c, action: "remove" as const })),
      ];
      if (ops.length === 0) {
        this.store.updateWatermarks({ producer: { seq: maxSeq, at: now } });
        return 0;
      }
      const fence = (this.store.meta.get("producerFence") ?? 0) + 1;
      const run: ProducerRun = {
        fence,
        throughSeq: maxSeq,
        at: now,
        generation: this.store.generation(),
      };
      this.store.meta.set("producerFence", fence);
      this.store.meta.set("producerRun", run);
      this.store.outbox.enqueue(fence, ops);
      this.store.audit(
        "producer-plan",
        {
          fence,
          causes,
          add,
          remove,
          ...(retried.length > 0 ? { retriedParked: retried.map((p) => p.op) } : {}),
        },
        nowMs,
      );
      return ops.length;
    });
  }

  /**
   * Performs the current run's queued writes in order, each after reserving room in the
   * installation's write budget. Stops when the budget is spent or at the first failure that can
   * pass (the rest stay queued); parks a write that failed `MAX_WRITE_ATTEMPTS` times or was
   * refused with a 403 and goes on with the next; drops a write GitHub will never accept, and
   * says so. When the queue empties, the run ends and the watermark advances, unless the run
   * stopped being the current one meanwhile (a suspension or removal landed while a write was
   * in flight): then its kicks are planned again later.
   */
  async flush(
    client: GitHubClient,
    reserve: () => Promise<BudgetDecision>,
    nowMs: () => number,
  ): Promise<FlushResult> {
    const run = this.run();
    const identity = this.store.identity();
    const result: FlushResult = {
      done: 0,
      failed: null,
      left: 0,
      parked: 0,
      retryAtMs: null,
      stopped: false,
    };
    if (run === null || !identity) return result;
    const abandon = () => {
      // Planned before a suspension or removal: its writes may be wrong now; plan anew later.
      // (A suspension drops the queue itself; a newer run's queue is not this run's to drop.)
      this.store.transaction(() => {
        if (this.run()?.fence === run.fence) this.store.dropProducerQueue();
      });
      result.failed = null;
      result.left = this.store.outbox.count();
      result.stopped = true;
      return result;
    };
    for (;;) {
      if (!this.current(run)) return abandon();
      const row = this.store.outbox.first();
      if (!row) break;
      // A row from an older fence belongs to an abandoned run; it must not be written now.
      if (row.fence !== run.fence) {
        this.store.outbox.remove(row.seq);
        continue;
      }
      const budget = await reserve();
      if (!this.current(run)) return abandon();
      if (budget.granted === 0) {
        result.retryAtMs = budget.retryAtMs;
        break;
      }
      const { op } = row;
      try {
        if (op.action === "add") await addLabels(client, identity.fullName, op.number, [op.label]);
        else await removeLabel(client, identity.fullName, op.number, op.label);
        this.store.transaction(() => {
          this.store.outbox.remove(row.seq);
          this.store.applyOwnLabelWrite(op.number, op.label, op.action);
          this.store.audit("producer-write", { fence: run.fence, ...op }, nowMs());
        });
        result.done += 1;
      } catch (error) {
        // Suspended, removed or replaced while the write was in flight: nothing to count.
        if (!this.current(run)) return abandon();
        const message = error instanceof Error ? error.message : String(error);
        const verdict = this.store.transaction(() => {
          const attempts = this.store.outbox.recordFailure(row.seq, message);
          const verdict = writeFailureVerdict(error, attempts);
          if (verdict === "park") {
            this.store.outbox.park(row.seq, nowMs());
            this.store.audit(
              "producer-write-parked",
              { fence: run.fence, ...op, attempts, error: message },
              nowMs(),
            );
          } else if (verdict === "drop") {
            this.store.outbox.remove(row.seq);
            this.store.audit(
              "producer-write-dropped",
              { fence: run.fence, ...op, error: message },
              nowMs(),
            );
          }
          return verdict;
        });
        if (verdict === "retry") {
          result.failed = error instanceof Error ? error : new Error(message);
          break;
        }
        if (verdict === "park") result.parked += 1;
      }
    }
    const finished = this.store.transaction(() => {
      if (!this.current(run)) return null;
      const left = this.store.outbox.count();
      if (left === 0) {
        this.store.meta.delete("producerRun");
        this.store.updateWatermarks({ producer: { seq: run.throughSeq, at: run.at } });
      }
      return left;
    });
    if (finished === null) return abandon();
    result.left = finished;
    return result;
  }
}

// --- the producer in its RepoObject: when it runs, and the `producer` and `outbox` schedules ---

/** When the producer should run for a change learned at `atMs` (shared/schedule/policy.ts). */
export function producerDue(c: RepoContext, atMs: number): number {
  // Closes learned past the producer watermark are kicks waiting to be materialized.
  const kicksOwed = (c.store.meta.get("closedSeq") ?? 0) > c.store.watermarks().producer.seq;
  return producerDueMs(
    atMs,
    c.lastProducerRunMs,
    producerWindowMs(c.envMs("PRODUCER_DEBOUNCE_MS", 2_000), kicksOwed),
  );
}

/**
 * The `producer` schedule: plan from the scan of the stored graph, refresh the fleet's queue
 * view, and send the plan's label writes. Each analysis is made in steps, webhooks between.
 */
export async function runProducer(c: RepoContext, nowMs: number): Promise<void> {
  c.lastProducerRunMs = nowMs;
  if (c.archived()) return; // read-only on GitHub: nothing to plan for
  // After a start, the graph is read from the tables a chunk at a time, webhooks between.
  await c.store.prepareGraph(pause);
  // The scan is made in steps too; the plan below reads it (unless a change voided it).
  await c.scans.prepare(nowMs, pause);
  c.producer.plan(nowMs);
  // The plan's label writes first: a close's kick must not wait for the queue view (its reply
  // histories make it the longer analysis on a large repository).
  await flushOutbox(c);
  // The queue view is a second analysis: made in steps too, webhooks between.
  await c.views.prepare(nowMs, pause);
  // Notices a stuck label taken off by hand and asks for whatever fleet writes it implies.
  c.views.current(nowMs);
}

/** The `outbox` schedule: sends queued label writes, each within the installation's write budget. */
export async function flushOutbox(c: RepoContext): Promise<void> {
  if (c.archived()) return;
  const bulk = c.store.meta.get("bulkLabelWrites") === true;
  if (c.producer.pending().length === 0) {
    if (bulk) c.store.meta.delete("bulkLabelWrites");
    return;
  }
  const client = c.client(`apply the agent:ready plan of ${c.store.identity()?.fullName}`);
  const installation = c.installation();
  // A full reconcile's plan waits for the hour's budget like the reconciles themselves (never
  // the webhooks' reserve); a close's kick is a webhook's own need: the write budget alone.
  const reserve = bulk
    ? () => installation.reserveLabelWrites(1)
    : () => installation.reserveWrites(1);
  const result = await c.producer.flush(client, reserve, Date.now);
  // Suspended, removed or replaced meanwhile: the run's kicks are planned again later.
  if (result.stopped) return;
  // Retried with the schedule's backoff; after MAX_WRITE_ATTEMPTS the write is parked.
  if (result.failed) throw result.failed;
  if (result.left > 0) {
    // Over budget (or stopped): the writes wait for room, they are not dropped.
    c.schedules.at("outbox", result.retryAtMs ?? Date.now() + 60_000);
  } else {
    if (bulk) c.store.meta.delete("bulkLabelWrites");
    // The run is complete; plan again for whatever changed while it was writing.
    c.schedules.at("producer", Date.now());
  }
}
