// Per-label concurrency limits (`claims.maxActiveByLabel`, spec 6.4) on real storage: under
// racing claim-next calls (fast-check: random batches of concurrent agents and releases), at
// every grant the live claims of issues with each of the issue's labels stay within the limit;
// a direct claim over a limit is 409 `label-limit` naming the label; claim-next skips such
// issues; a label added to a claimed issue later does not end the claim but counts from then on.
import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import { deliverAndSettle, install, type repoStub, seedIssue, sim } from "./helpers.ts";

type Stub = ReturnType<typeof repoStub>;
type Grant = { claimId: string; fence: number; issue: { number: number } };

const LIMITS: Record<string, number> = { "area:db": 1, "area:ui": 2 };
/** Issue n's labels: a fixed mix of limited, unlimited and no labels. */
const labelsOf = (n: number): string[] =>
  [["area:db"], ["area:ui"], ["area:db", "Area:UI"], [], ["area:ui", "bug"], ["AREA:DB"]][n % 6]!;

const CONFIG = `claims:
  maxAttempts: 100
  maxActiveByLabel:
    "area:db": 1
    "area:ui": 2
`;

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

/** Every claim's fence, issue, grant and end, oldest first. */
async function claimRows(stub: Stub) {
  return runInDurableObject(
    stub,
    (o: RepoObject) =>
      o.store.sql<{
        fence: number;
        number: number;
        granted_ms: number;
        ended_ms: number | null;
        expires_ms: number;
      }>`SELECT fence, number, granted_ms, ended_ms, expires_ms FROM claims ORDER BY fence`,
  );
}

describe("per-label concurrency limits", () => {
  it("under racing claim-next, every grant keeps each label's live claims within its limit", async () => {
    const issues = Array.from({ length: 12 }, (_, k) =>
      seedIssue(k + 1, { labels: ["agent:ready", ...labelsOf(k + 1)] }),
    );
    const { stub } = await install(
      { repo: "limits-race/app", issues },
      {
        ".github/switchyard.yml": CONFIG,
      },
    );
    await deliverAndSettle(stub);
    let agent = 0;

    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({
              kind: fc.constant("claim" as const),
              agents: fc.integer({ min: 1, max: 6 }),
            }),
            fc.record({ kind: fc.constant("release" as const), pick: fc.nat(10) }),
          ),
          { minLength: 1, maxLength: 6 },
        ),
        async (steps) => {
          const live: Grant[] = [];
          for (const step of steps) {
            if (step.kind === "claim") {
              const results = await Promise.all(
                Array.from({ length: step.agents }, () =>
                  stub.claim(null, { agentId: `agent-${agent++}` }),
                ),
              );
              for (const r of results) {
                expect([201, 204]).toContain(r.status);
                if (r.status === 201) live.push(r.body as unknown as Grant);
              }
            } else if (live.length > 0) {
              const [gone] = live.splice(step.pick % live.length, 1);
              const released = await stub.release(gone!.issue.number, {
                claimId: gone!.claimId,
                fence: gone!.fence,
                outcome: "abandoned",
              });
              expect(released.status).toBe(200);
            }
          }
          // At every grant: the claims live at that moment, per label of the granted issue.
          const rows = await claimRows(stub);
          for (const c of rows) {
            const others = rows.filter(
              (d) =>
                d.fence < c.fence &&
                (d.ended_ms === null || d.ended_ms > c.granted_ms) &&
                d.expires_ms > c.granted_ms,
            );
            for (const label of Object.keys(LIMITS)) {
              const has = (n: number) => labelsOf(n).some((l) => l.toLowerCase() === label);
              if (!has(c.number)) continue;
              expect(others.filter((d) => has(d.number)).length + 1).toBeLessThanOrEqual(
                LIMITS[label]!,
              );
            }
          }
          // Next run starts with no live claims.
          for (const g of live) {
            await stub.release(g.issue.number, {
              claimId: g.claimId,
              fence: g.fence,
              outcome: "abandoned",
            });
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 120_000);

  it("a direct claim over a limit is 409 label-limit; claim-next skips it; a label added later counts but ends nothing", async () => {
    const { stub } = await install(
      {
        repo: "limits-direct/app",
        issues: [
          seedIssue(1, { labels: ["agent:ready", "area:db"] }),
          seedIssue(2, { labels: ["agent:ready", "area:db"] }),
          seedIssue(3, { labels: ["agent:ready"] }),
          seedIssue(4, { labels: ["agent:ready", "area:db"] }),
        ],
      },
      { ".github/switchyard.yml": CONFIG },
    );
    await deliverAndSettle(stub);
    const first = await stub.claim(1, { agentId: "a" });
    expect(first.status).toBe(201);
    const refused = await stub.claim(2, { agentId: "b" });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ reason: "label-limit", label: "area:db" });
    // The queue leaves out what is over a limit; claim-next takes #3.
    const listed = (await stub.workQueue({ limit: 20 })).body as {
      items: Array<{ number: number }>;
    };
    expect(listed.items.map((i) => i.number)).toEqual([3]);
    const next = await stub.claim(null, { agentId: "b" });
    expect((next.body as Grant).issue.number).toBe(3);

    // #1 is released; #3 (claimed) gets area:db: its claim goes on, and it now fills the limit.
    const g = first.body as unknown as Grant;
    await stub.release(1, { claimId: g.claimId, fence: g.fence, outcome: "abandoned" });
    await sim("/repos/limits-direct/app/issues/3/labels", { body: { labels: ["area:db"] } });
    await deliverAndSettle(stub);
    const live = (await stub.liveClaims()).body as { claims: Array<{ number: number }> };
    expect(live.claims.map((c) => c.number)).toEqual([3]);
    expect((await stub.claim(4, { agentId: "c" })).body).toMatchObject({ reason: "label-limit" });
    expect((await stub.claim(null, { agentId: "c" })).status).toBe(204);
  });
});
