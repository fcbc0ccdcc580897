// Any order of the same events, with duplicates and drops, followed by one reconcile,
// converges to what a full read of GitHub gives (spec 9, reliability).
import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import type { Snapshot } from "../../shared/graph/snapshot.ts";
import { type Delivery, install, postWebhook, seedIssue, settle, sim } from "./helpers.ts";
import { facts, N, op, perform } from "./random-ops.ts";

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

describe("convergence", () => {
  let run = 0;
  it("random events, delivered shuffled with duplicates and drops, then one reconcile, equal a full read", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 10 }),
        fc.array(fc.constantFrom("deliver", "drop", "duplicate"), { minLength: 40, maxLength: 40 }),
        fc.infiniteStream(fc.nat()),
        async (ops, fates, seeds) => {
          run += 1;
          const repo = `conv${run}/app`;
          const { stub } = await install({
            repo,
            issues: Array.from({ length: N }, (_, i) => seedIssue(i + 1)),
          });
          for (const o of ops) {
            await perform(repo, o);
          }
          const { deliveries } = await sim<{ deliveries: Delivery[] }>("/outbox/drain", {
            method: "POST",
          });
          const plan: Delivery[] = [];
          deliveries.forEach((d, i) => {
            const fate = fates[i % fates.length];
            if (fate !== "drop") plan.push(d);
            if (fate === "duplicate") plan.push(d);
          });
          const shuffled = plan
            .map((d) => ({ d, k: seeds.next().value }))
            .sort((a, b) => a.k - b.k)
            .map((x) => x.d);
          for (const d of shuffled) {
            const response = await postWebhook(d.headers, d.body);
            expect(response.status).toBeLessThan(500);
            await response.arrayBuffer();
          }
          await settle(stub);
          expect(await stub.armReconcile()).toBe(true);
          await settle(stub);
          const stored = await runInDurableObject(stub, (o: RepoObject) => o.store.snapshot());
          const truth = await sim<Snapshot>(`/repos/${repo}/snapshot`);
          expect(facts(stored)).toEqual(facts(truth));
        },
      ),
      { numRuns: 12 },
    );
    // Twelve installs and their reconciles: a few seconds alone, more on a loaded CI machine.
  }, 120_000);
});
