// Webhooks alone, in any order and with duplicates, converge to GitHub's state when every event
// carries its own time (no reconcile needed: the merge rule orders them).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import type { Snapshot } from "../../shared/graph/snapshot.ts";
import type { GraphEvent } from "../../shared/ingest/events.ts";
import {
  type Delivery,
  deliverAll,
  install,
  issueRecord,
  postWebhook,
  type repoStub,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";
import { facts, N, op, perform } from "./random-ops.ts";

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

describe("order-insensitive ingestion", () => {
  let run = 0;
  it("random events a second apart, delivered shuffled with duplicates, equal a full read without any reconcile", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 10 }),
        fc.array(fc.constantFrom("deliver", "duplicate"), { minLength: 40, maxLength: 40 }),
        fc.infiniteStream(fc.nat()),
        async (ops, fates, seeds) => {
          run += 1;
          const repo = `order${run}/app`;
          const { stub } = await install({
            repo,
            issues: Array.from({ length: N }, (_, i) => seedIssue(i + 1)),
          });
          for (const o of ops) {
            // GitHub stamps to the second: one op a second keeps every event's time distinct.
            await sim("/clock", { body: { advanceSeconds: 1 } });
            await perform(repo, o);
          }
          const { deliveries } = await sim<{ deliveries: Delivery[] }>("/outbox/drain", {
            method: "POST",
          });
          const plan: Delivery[] = [];
          deliveries.forEach((d, i) => {
            plan.push(d);
            if (fates[i % fates.length] === "duplicate") plan.push(d);
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
          // switchyard's own label writes (the producer runs meanwhile) are webhooks too; GitHub
          // delivers them like any other, so the comparison waits for them.
          for (let round = 0; round < 3; round++) {
            await settle(stub);
            await deliverAll();
          }
          await settle(stub);
          // Nothing but the install's own full read: the webhooks alone got it right.
          const reconciles = (await stub.auditLog(200)).filter((a) => a.kind === "reconcile");
          expect(reconciles.map((a) => (a.detail as { kind: string }).kind)).toEqual(["full"]);
          const stored = await runInDurableObject(stub, (o: RepoObject) => o.store.snapshot());
          const truth = await sim<Snapshot>(`/repos/${repo}/snapshot`);
          expect(facts(stored)).toEqual(facts(truth));
        },
      ),
      { numRuns: 12 },
    );
    // Twelve installs and their webhooks: ~2 s alone, several times that on a loaded CI machine.
  }, 120_000);
});

describe("late deliveries", () => {
  const apply = (stub: ReturnType<typeof repoStub>, events: GraphEvent[]) =>
    runInDurableObject(stub, (o: RepoObject) => o.store.apply(events));

  it("a deleted marker comment is not brought back by a late edit", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("880004"));
    const comment = (at: string): GraphEvent => ({
      type: "comment",
      id: 77,
      number: 1,
      author: { login: "bot", type: "Bot" },
      body: "<!-- claimed-by: agent-1 claim-1 2026-11-29T10:00:00Z branch: issue/1-x supersedes: none -->",
      createdAt: "2026-11-29T10:00:00Z",
      updatedAt: at,
    });
    await apply(stub, [
      comment("2026-11-29T10:00:00Z"),
      { type: "comment-removed", id: 77, at: "2026-11-29T10:10:00Z" },
      comment("2026-11-29T10:05:00Z"),
    ]);
    expect(await runInDurableObject(stub, (o: RepoObject) => o.store.markerComments(1))).toEqual(
      [],
    );
  });

  it("a removed issue is not re-linked by a late dependency event", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("880005"));
    await apply(stub, [
      { type: "issue", issue: issueRecord(1) },
      { type: "issue", issue: issueRecord(2) },
      { type: "issue-removed", number: 1, at: "2026-11-29T10:00:00Z" },
      { type: "blocked-by", issue: 2, blocker: 1, present: true, at: "2026-11-29T09:00:00Z" },
    ]);
    const snapshot = await runInDurableObject(stub, (o: RepoObject) => o.store.snapshot());
    expect(snapshot.issues.map((i) => [i.number, i.blockedBy])).toEqual([[2, []]]);
  });
});
