// GitHub faults during reconciliation and the producer: retried without duplicate writes,
// and no kick is lost (spec 9, reliability).
import { runDurableObjectAlarm } from "cloudflare:test";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  backoffsOver,
  deliverAll,
  failLabelWrites,
  install,
  labelsOf,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";

type LabelEvents = {
  issues: Array<{ number: number; labelEvents?: Array<{ label: string; action: string }> }>;
};

async function labeledCount(repo: string, number: number, label: string) {
  const snapshot = await sim<LabelEvents>(
    `/repos/${repo}/snapshot?labelEventsFor=${encodeURIComponent(label)}`,
  );
  const events = snapshot.issues.find((i) => i.number === number)?.labelEvents ?? [];
  return events.filter((e) => e.label === label && e.action === "labeled").length;
}

/** Runs alarms (and delivers webhooks) until switchyard has nothing left to do. */
async function drive(stub: Parameters<typeof settle>[0], rounds = 6) {
  for (let i = 0; i < rounds; i++) {
    await deliverAll();
    // Answers GitHub is still sending (a delay a client gave up on) land before the next round.
    await sim("/settled");
    await settle(stub);
  }
}

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});
beforeEach(async () => {
  await sim("/faults", { method: "DELETE" });
});

describe("GitHub faults", () => {
  it("reconcile survives 502, a secondary rate limit and a timeout", async () => {
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          { method: "POST", path: "/graphql", status: 502, times: 1 },
          {
            method: "POST",
            path: "/graphql",
            status: 403,
            retryAfter: 1,
            body: { message: "You have exceeded a secondary rate limit." },
            times: 1,
          },
          { method: "POST", path: "/graphql", delayMs: 2_500, times: 1 },
        ],
      },
    });
    const { stub } = await install({
      repo: "fault-rec/app",
      issues: [seedIssue(1), seedIssue(2, { blockedBy: [1] })],
    });
    await drive(stub);
    expect((await stub.graph()).blocked).toEqual([{ number: 2, blockers: [1] }]);
    expect((await stub.graph()).watermarks.lastFullReconcileAt).not.toBeNull();
  });

  it("a label write whose response is lost is not duplicated", async () => {
    const { stub, repo } = await install({
      repo: "fault-lost/app",
      issues: [seedIssue(1), seedIssue(2, { blockedBy: [1] })],
    });
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          {
            method: "POST",
            path: `/repos/${repo}/issues/2/labels`,
            status: 502,
            phase: "after",
            times: 1,
          },
        ],
      },
    });
    await sim(`/repos/${repo}/issues/1/close`, { body: {} });
    await drive(stub);
    expect(await labelsOf(repo, 2)).toContain("agent:ready");
    expect(await labeledCount(repo, 2, "agent:ready")).toBe(1);
  });

  it("writes failing for a while are retried by the alarm; the kick is not lost and the watermark waits", async () => {
    const { stub, repo } = await install({
      repo: "fault-down/app",
      issues: [seedIssue(1), seedIssue(2, { blockedBy: [1] })],
    });
    const before = (await stub.graph()).watermarks.producer;
    await failLabelWrites(repo, 2, 500, 12);
    await sim(`/repos/${repo}/issues/1/close`, { body: {} });
    await deliverAll();
    await runDurableObjectAlarm(stub);
    // The write failed past the client's retries: still queued, watermark unchanged.
    const during = await stub.graph();
    expect(during.watermarks.producer).toEqual(before);
    expect(await labelsOf(repo, 2)).not.toContain("agent:ready");
    const audit = await stub.auditLog(20);
    expect(audit.some((a) => a.kind === "error")).toBe(true);
    // Each retry waits out its backoff: the object's clock moves past it (no sleep), so the
    // retries do not depend on how fast the rounds run (on a fast machine they ran out first).
    for (let round = 0; round < 8; round++) {
      await backoffsOver(stub);
      await drive(stub, 1);
    }
    expect(await labelsOf(repo, 2)).toContain("agent:ready");
    expect(await labeledCount(repo, 2, "agent:ready")).toBe(1);
    expect((await stub.graph()).watermarks.producer.seq).toBeGreaterThan(before.seq);
  });

  it("a 429 on the incremental listing is waited out", async () => {
    const { stub, repo } = await install({
      repo: "fault-429/app",
      issues: [seedIssue(1), seedIssue(2, { blockedBy: [1] })],
    });
    await sim("/faults", {
      method: "PUT",
      body: {
        requests: [
          { method: "GET", path: `/repos/${repo}/issues`, status: 429, retryAfter: 1, times: 1 },
        ],
      },
    });
    // A close whose webhook is lost: only the reconcile can find it.
    await sim("/faults", {
      method: "POST",
      body: { webhooks: [{ event: "issues", action: "closed", kind: "drop", times: 1 }] },
    });
    await sim(`/repos/${repo}/issues/1/close`, { body: {} });
    await deliverAll();
    await stub.armReconcile();
    await drive(stub);
    expect((await stub.graph()).blocked).toEqual([]);
    expect(await labelsOf(repo, 2)).toContain("agent:ready");
    const audit = await stub.auditLog(30);
    const reconcile = audit.find(
      (a) => a.kind === "reconcile" && (a.detail as { kind: string }).kind === "incremental",
    );
    expect(
      (reconcile?.detail as { corrected: string[] } | undefined)?.corrected.length,
    ).toBeGreaterThan(0);
  });
});
