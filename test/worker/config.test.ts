// `.github/switchyard.yml`: read on install, re-read when a push touches it (spec 6.5).
import { runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import {
  deliverAll,
  labelsOf,
  repoStub,
  runInstallation,
  seed,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

async function settleAll(stub: ReturnType<typeof repoStub>) {
  for (let i = 0; i < 4; i++) {
    await deliverAll();
    await settle(stub);
  }
}

describe("repository configuration", () => {
  it("uses the config found at install, follows a pushed change, and keeps the last good one on a bad push", async () => {
    const seeded = await seed(
      { repo: "cfg/app", issues: [seedIssue(1), seedIssue(2, { blockedBy: [1] }), seedIssue(3)] },
      undefined,
      { ".github/switchyard.yml": "labels:\n  ready: queue:go\n" },
    );
    await runInstallation(seeded.installationId);
    const stub = repoStub(seeded.repoId);
    await settleAll(stub);
    expect((await stub.graph()).config.status.error).toBeNull();

    // The configured label name is the one the producer writes.
    await sim("/repos/cfg/app/issues/1/close", { body: {} });
    await settleAll(stub);
    expect(await labelsOf("cfg/app", 2)).toEqual(["queue:go"]);

    // A push switching to mode all: every ready issue joins the queue.
    await sim("/repos/cfg/app/contents/.github/switchyard.yml", {
      method: "PUT",
      body: { text: "labels:\n  ready: queue:go\nqueue:\n  mode: all\n" },
    });
    await settleAll(stub);
    expect(await labelsOf("cfg/app", 3)).toEqual(["queue:go"]);

    // A bad push: the last good config stays in force, and the error is shown.
    await sim("/repos/cfg/app/contents/.github/switchyard.yml", {
      method: "PUT",
      body: { text: "queue:\n  mode: sometimes\n" },
    });
    await settleAll(stub);
    let graph = await stub.graph();
    expect(graph.config.status.error).toContain("queue.mode");
    expect(graph.config.effective.queue.mode).toBe("all");
    expect(graph.config.effective.labels.ready).toBe("queue:go");
    const audit = await stub.auditLog(40);
    expect(
      audit.some(
        (a) => a.kind === "config" && (a.detail as { outcome: string }).outcome === "invalid",
      ),
    ).toBe(true);

    // An unchanged file costs a free 304 and changes nothing.
    const before = (await stub.auditLog(100)).filter((a) => a.kind === "config").length;
    await stub.armReconcile();
    await runInDurableObject(stub, (o: RepoObject) => o.schedules.at("reconcile-full", Date.now()));
    await settleAll(stub);
    expect((await stub.auditLog(100)).filter((a) => a.kind === "config").length).toBe(before);

    // The file removed: back to the defaults.
    await sim("/repos/cfg/app/contents/.github/switchyard.yml", { method: "DELETE", body: {} });
    await settleAll(stub);
    graph = await stub.graph();
    expect(graph.config.status.error).toBeNull();
    expect(graph.config.effective.queue.mode).toBe("events");
    expect(graph.config.effective.labels.ready).toBe("agent:ready");
  });
});
