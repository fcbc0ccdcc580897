import type { GitHubClient } from "../../shared/github/client.ts";
import { GitHubApiError } from "../../shared/github/errors.ts";
import { addLabels, removeLabel } from "../../shared/github/writes.ts";
import { analyzeGraph } from "../../shared/graph/analyze.ts";
import { formatInstant } from "../../shared/graph/time.ts";
import { type LabelChange, planFromAnalysis } from "../../shared/producer/plan.ts";
import type { RepoStore } from "./repo-store.ts";

export interface LabelOp extends LabelChange {
  action: "add" | "remove";
}

interface ProducerRun {
  fence: number;
  /** The producer watermark this run advances to once all its writes succeeded. */
  throughSeq: number;
  at: string;
}

/** Whether a failed write can succeed later (retry) or never will (drop it, and say so). */
export function retryable(error: unknown): boolean {
  if (!(error instanceof GitHubApiError)) return true;
  return !["not-found", "invalid", "bad-response"].includes(error.kind);
}

/**
 * The producer's durable half: plans go into an outbox under a fence, so two runs never
 * interleave their writes, a failed write is retried (never duplicated), and the watermark
 * moves only after every write of its run succeeded.
 */
export class Producer {
  private readonly store: RepoStore;
  constructor(store: RepoStore) {
    this.store = store;
  }

  private run(): ProducerRun | null {
    return this.store.getMeta<ProducerRun>("producerRun") ?? null;
  }

  pending(): LabelOp[] {
    return this.store.sql<{ op: string }>`SELECT op FROM outbox ORDER BY seq`.map(
      (r) => JSON.parse(r.op) as LabelOp,
    );
  }

  /**
   * Plans from the stored graph and queues the writes. Returns the number queued; does nothing
   * while a previous run still has writes outstanding (they go first).
   */
  plan(nowMs: number): number {
    return this.store.transaction(() => {
      if (this.run() !== null) return 0;
      const watermark = this.store.watermarks().producer;
      const { causes, maxSeq } = this.store.pendingCloses(watermark.seq);
      const now = formatInstant(nowMs);
      const analysis = analyzeGraph(this.store.snapshot(now), {
        now,
        causes,
        config: this.store.config(),
      });
      const labelPlan = planFromAnalysis(analysis);
      const ops: LabelOp[] = [
        ...labelPlan.add.map((c) => ({ ...c, action: "add" as const })),
        ...labelPlan.remove.map((c) => ({ ...c, action: "remove" as const })),
      ];
      if (ops.length === 0) {
        this.store.updateWatermarks({ producer: { seq: maxSeq, at: now } });
        return 0;
      }
      const fence = (this.store.getMeta<number>("producerFence") ?? 0) + 1;
      const run: ProducerRun = { fence, throughSeq: maxSeq, at: now };
      this.store.setMeta("producerFence", fence);
      this.store.setMeta("producerRun", run);
      for (const op of ops)
        this.store.sql`INSERT INTO outbox (fence, op) VALUES (${fence}, ${JSON.stringify(op)})`;
      this.store.audit(
        "producer-plan",
        { fence, causes, add: labelPlan.add, remove: labelPlan.remove },
        nowMs,
      );
      return ops.length;
    });
  }

  /**
   * Performs up to `granted` queued writes of the current run, in order. Stops at the first
   * retryable failure (the rest stay queued); drops a write GitHub will never accept. When the
   * outbox empties, the run ends and the watermark advances.
   */
  async flush(
    client: GitHubClient,
    granted: number,
    nowMs: () => number,
  ): Promise<{ done: number; failed: GitHubApiError | Error | null; left: number }> {
    const run = this.run();
    const identity = this.store.identity();
    if (run === null || !identity) return { done: 0, failed: null, left: 0 };
    const rows = this.store.sql<{ seq: number; fence: number; op: string }>`
      SELECT seq, fence, op FROM outbox ORDER BY seq LIMIT ${granted}`;
    let done = 0;
    let failed: GitHubApiError | Error | null = null;
    for (const row of rows) {
      // A row from an older fence belongs to an abandoned run; it must not be written now.
      if (row.fence !== run.fence) {
        this.store.sql`DELETE FROM outbox WHERE seq = ${row.seq}`;
        continue;
      }
      const op = JSON.parse(row.op) as LabelOp;
      try {
        if (op.action === "add") await addLabels(client, identity.fullName, op.number, [op.label]);
        else await removeLabel(client, identity.fullName, op.number, op.label);
        this.store.transaction(() => {
          this.store.sql`DELETE FROM outbox WHERE seq = ${row.seq}`;
          this.store.applyOwnLabelWrite(op.number, op.label, op.action, nowMs());
          this.store.audit("producer-write", { fence: run.fence, ...op }, nowMs());
        });
        done += 1;
      } catch (error) {
        if (retryable(error)) {
          this.store
            .sql`UPDATE outbox SET attempts = attempts + 1, last_error = ${String((error as Error).message)} WHERE seq = ${row.seq}`;
          failed = error as Error;
          break;
        }
        this.store.transaction(() => {
          this.store.sql`DELETE FROM outbox WHERE seq = ${row.seq}`;
          this.store.audit(
            "producer-write-dropped",
            { fence: run.fence, ...op, error: (error as Error).message },
            nowMs(),
          );
        });
      }
    }
    const left = this.store.sql<{ n: number }>`SELECT COUNT(*) AS n FROM outbox`[0]?.n ?? 0;
    if (left === 0) {
      this.store.transaction(() => {
        this.store.deleteMeta("producerRun");
        this.store.updateWatermarks({ producer: { seq: run.throughSeq, at: run.at } });
      });
    }
    return { done, failed, left };
  }
}
