import type { BudgetDecision } from "../../../shared/budget/write-budget.ts";
import { stuckComment } from "../../../shared/claims/rules.ts";
import type { LabelNames } from "../../../shared/config/schema.ts";
import type { GitHubClient } from "../../../shared/github/client.ts";
import { isRetryable } from "../../../shared/github/errors.ts";
import { addLabels, createComment, removeLabel } from "../../../shared/github/writes.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import { renderClaimedBy, renderUnclaimedBy } from "../../../shared/idd/comment-markers.ts";
import { truncateToSecond } from "../../../shared/idd/timestamp.ts";
import { Fleet, type FleetWrite } from "./fleet.ts";
import type { Schedules } from "./schedules-store.ts";

export interface FleetWriteContext {
  client: () => GitHubClient;
  installation: { reserveWrites(n: number): Promise<BudgetDecision> | BudgetDecision };
  /** The repository's current name, read right before each write (a rename may land meanwhile). */
  fullName: () => string;
  schedules: Schedules;
  labels: () => LabelNames;
  stillActive: (generation: number) => boolean;
  generation: number;
}

/** How many writes one alarm run performs at most before yielding to the next. */
const WRITES_PER_RUN = 50;

const second = (ms: number) => truncateToSecond(formatInstant(ms));

/** Content writes a fleet write makes (a renewal removes and adds the label). */
const costOf = (write: FleetWrite) => (write.kind === "processing-renew" ? 2 : 1);

async function perform(
  write: FleetWrite,
  client: GitHubClient,
  repo: string,
  labels: LabelNames,
): Promise<void> {
  switch (write.kind) {
    case "claimed-marker": {
      const c = write.claim;
      const body = renderClaimedBy({
        agentId: c.agentId,
        claimId: c.claimId,
        supersedes: null,
        timestamp: second(c.grantedMs),
        branch: c.branch,
      });
      await createComment(client, repo, c.number, body);
      return;
    }
    case "unclaimed-marker": {
      const c = write.claim;
      const body = renderUnclaimedBy({
        agentId: c.agentId,
        claimId: c.claimId,
        timestamp: second(c.endedMs ?? c.expiresMs),
      });
      await createComment(client, repo, c.number, body);
      return;
    }
    case "processing-add":
      await addLabels(client, repo, write.number, [labels.processing]);
      return;
    case "processing-renew":
      // Sweep agents read the label's age from its `labeled` event: only a new one renews it.
      await removeLabel(client, repo, write.number, labels.processing);
      await addLabels(client, repo, write.number, [labels.processing]);
      return;
    case "processing-remove":
      await removeLabel(client, repo, write.number, labels.processing);
      return;
    case "remove-ready":
      await removeLabel(client, repo, write.number, labels.ready);
      return;
    case "add-ready":
      await addLabels(client, repo, write.number, [labels.ready]);
      return;
    case "stuck-label":
      await addLabels(client, repo, write.number, [labels.stuck]);
      return;
    case "stuck-comment":
      await createComment(client, repo, write.number, stuckComment(write.attempts, labels.stuck));
      return;
  }
}

/**
 * The `fleet` schedule: performs the writes the fleet owes GitHub, one at a time, each inside
 * the installation's write budget (shared with the producer, on a queue of its own so neither
 * waits behind the other). What became pointless while waiting is never written.
 */
export async function flushFleetWrites(fleet: Fleet, ctx: FleetWriteContext): Promise<void> {
  for (let i = 0; i < WRITES_PER_RUN; i++) {
    if (!ctx.stillActive(ctx.generation)) return;
    const { write, renewAtMs } = fleet.nextWrite(Date.now());
    if (write === null) {
      if (renewAtMs !== null) ctx.schedules.at("fleet", renewAtMs);
      return;
    }
    const cost = costOf(write);
    const budget = await ctx.installation.reserveWrites(cost);
    if (budget.granted < cost) {
      ctx.schedules.at("fleet", budget.retryAtMs ?? Date.now() + 60_000);
      return;
    }
    if (!ctx.stillActive(ctx.generation)) return;
    // What is owed now: a release while waiting for the budget may have made `write` pointless;
    // the room reserved goes to whatever is owed instead, if it fits.
    const current = fleet.nextWrite(Date.now()).write;
    if (current === null) return;
    const next = Fleet.sameWrite(current, write) || costOf(current) <= cost ? current : null;
    if (next === null) continue;
    // Name and client read together, after the budget wait: both address this repository now.
    const repo = ctx.fullName();
    const client = ctx.client();
    try {
      await perform(next, client, repo, ctx.labels());
      fleet.writeDone(next, Date.now());
    } catch (error) {
      if (isRetryable(error)) throw error;
      // GitHub will never accept it (the issue is gone, say): drop it rather than wedge the queue.
      fleet.writeDone(next, Date.now(), error instanceof Error ? error.message : String(error));
    }
  }
  ctx.schedules.at("fleet", Date.now());
}
