// Paced full reconciles (issue 25): a repository's full reconcile waits for its installation's
// permit; meanwhile webhooks apply, the graph API says where it waits, the queue is partial.
import { runDurableObjectAlarm } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { PERMIT_BOUND } from "../../shared/budget/reconcile-permits.ts";
import { deliverAll, installationStub, repoStub, seed, seedIssue, settle, sim } from "./helpers.ts";

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

const spent = { requests: 4, durationMs: 50, reading: null, completed: true };

describe("a full reconcile under the installation's permit", () => {
  it("waits its turn (graph API: waiting, position; queue: partial), webhooks apply meanwhile", async () => {
    const seeded = await seed({ repo: "paced/app", issues: [seedIssue(1), seedIssue(2)] });
    const inst = installationStub(seeded.installationId);
    // Every permit is taken (holders that are not repositories here, hence never told).
    const holders = Array.from({ length: PERMIT_BOUND }, (_, i) => 9_900_000 + i);
    for (const id of holders) expect((await inst.askPermit(id)).granted).toBe(true);

    await deliverAll();
    await runDurableObjectAlarm(inst);
    const stub = repoStub(seeded.repoId);
    await settle(stub);
    let graph = await stub.graph();
    expect(graph.firstReconcile).toEqual({ state: "waiting", position: 1 });
    expect(graph.stats.issues).toBe(0);
    expect(graph.installation).toMatchObject({ reconciled: 0, waiting: 1, inFlight: PERMIT_BOUND });
    // It waits by alarm (asking again after a lease's time at the latest), not in a loop.
    const reconcileAt = (await stub.status()).schedules.find((s) => s.name === "reconcile-full");
    expect(reconcileAt?.dueMs).toBeGreaterThan(Date.now() + 9 * 60_000);
    const queue = (await stub.workQueue({ limit: 20 })).body as { partial?: true };
    expect(queue.partial).toBe(true);

    // A webhook while it waits is applied at once.
    await sim("/repos/paced/app/issues", { body: { title: "arrived while waiting" } });
    const delivered = await deliverAll();
    expect(delivered.map((d) => d.status)).toEqual([200]);
    graph = await stub.graph();
    expect(graph.stats.issues).toBe(1);
    expect(graph.firstReconcile).toEqual({ state: "waiting", position: 1 });

    // A holder gives its permit back: the installation tells the repository, which reconciles.
    await inst.releasePermit(holders[0]!, spent);
    await runDurableObjectAlarm(inst);
    await settle(stub);
    graph = await stub.graph();
    expect(graph.firstReconcile).toMatchObject({ state: "done" });
    expect(graph.stats.issues).toBe(3);
    expect(graph.installation).toMatchObject({
      reconciled: 1,
      waiting: 0,
      inFlight: PERMIT_BOUND - 1,
    });
    expect(
      ((await stub.workQueue({ limit: 20 })).body as { partial?: true }).partial,
    ).toBeUndefined();
    // Its permit went back with the run.
    expect((await inst.pacing(seeded.repoId)).holding).toBe(false);
    for (const id of holders.slice(1)) await inst.releasePermit(id, spent);
  });
});
