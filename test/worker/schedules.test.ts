// A RepoObject's schedules (functions/objects/repo/schedules-store.ts) on real Durable Object storage: a
// failing one backs off and counts its attempts, and none is lost by a handler rescheduling itself
// or by a run cut short.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { sim } from "./helpers.ts";

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

describe("schedules", () => {
  it("a failing schedule backs off with doubling delays and counts its attempts", async () => {
    // A repository GitHub does not know: every reconcile fails (404).
    const stub = env.REPO.get(env.REPO.idFromName("880001"));
    await runInDurableObject(stub, async (o: RepoObject) => {
      o.store.setIdentity({
        repoId: 880001,
        fullName: "nobody/nothing",
        installationId: 1,
        status: "active",
      });
      o.schedules.at("reconcile-full", Date.now());
      await o.schedules.rearm();
    });
    // Each retry made due at once and run (no waiting on the clock for the 20, 40, 80 and
    // 160 ms of the test's backoff base): every failure counts and doubles the next delay.
    for (let i = 0; i < 4; i++) {
      await runInDurableObject(stub, async (o: RepoObject) => {
        o.schedules.at("reconcile-full", Date.now());
        await o.schedules.rearm();
      });
      await runDurableObjectAlarm(stub);
    }
    const retries = (await stub.auditLog(50))
      .filter((a) => a.kind === "error")
      .reverse()
      .map((a) => a.detail as { attempts: number; retryInMs: number });
    expect(retries.length).toBeGreaterThanOrEqual(4);
    retries.forEach((r, i) => {
      expect(r.attempts).toBe(i + 1);
      expect(r.retryInMs).toBe(20 * 2 ** i);
    });
    // Stop the retries so they do not run on through the rest of this file.
    await stub.setLifecycle({
      repoId: 880001,
      fullName: "nobody/nothing",
      installationId: 1,
      status: "suspended",
    });
    const total = (await stub.auditLog(100)).filter((a) => a.kind === "error").length;
    expect(total).toBeGreaterThanOrEqual(retries.length);
  });

  it("a handler rescheduling itself beyond its lease keeps its row", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("880008"));
    const later = Date.now() + 2 * 3_600_000;
    const rows = await runInDurableObject(stub, (o: RepoObject) => {
      o.schedules.at("outbox", Date.now());
      const [due] = o.schedules.takeDue(Date.now());
      o.schedules.at("outbox", later); // the budget is spent for an hour or two
      o.schedules.complete(due!);
      return o.schedules.list();
    });
    expect(rows).toEqual([{ name: "outbox", dueMs: later, attempts: 0 }]);
  });

  it("a run cut short leaves its schedule leased, not lost", async () => {
    const stub = env.REPO.get(env.REPO.idFromName("880002"));
    await runInDurableObject(stub, (o: RepoObject) => {
      o.store.setIdentity({
        repoId: 880002,
        fullName: "nobody/lease",
        installationId: 1,
        status: "active",
      });
      o.schedules.at("prune", Date.now());
      // Taken (as an alarm run does) but never completed: the isolate died mid-run.
      o.schedules.takeDue(Date.now());
    });
    const rows = (await stub.status()).schedules;
    expect(rows.map((r) => r.name)).toEqual(["prune"]);
    expect(rows[0]!.dueMs).toBeGreaterThan(Date.now());
  });
});
