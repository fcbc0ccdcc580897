// Webhooks alone, in any order and with duplicates, converge to GitHub's state when every event
// carries its own time (no reconcile needed: the merge rule orders them).
import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo-object.ts";
import type { Snapshot, SnapshotInput } from "../../shared/graph/snapshot.ts";
import { type Delivery, install, postWebhook, settle, sim } from "./helpers.ts";

const T0 = new Date(Date.now() - 3 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "Z");
const issue = (number: number): SnapshotInput["issues"][number] => ({
  number,
  title: `Issue ${number}`,
  state: "open",
  stateReason: null,
  createdAt: T0,
  updatedAt: T0,
  closedAt: null,
  labels: [],
});

const N = 5;
const num = fc.integer({ min: 1, max: N });
type Op = { path: string; method?: string; body?: unknown };
const op: fc.Arbitrary<Op> = fc.oneof<fc.Arbitrary<Op>[]>(
  num.map((n) => ({ path: `issues/${n}/close`, body: {} })),
  num.map((n) => ({ path: `issues/${n}/reopen`, body: {} })),
  fc
    .tuple(num, fc.constantFrom("agent:hold", "bug", "agent:ready"))
    .map(([n, l]) => ({ path: `issues/${n}/labels`, body: { labels: [l] } })),
  fc
    .tuple(num, fc.constantFrom("agent:hold", "bug"))
    .map(([n, l]) => ({ path: `issues/${n}/labels/${encodeURIComponent(l)}`, method: "DELETE" })),
  fc.tuple(num, num).map(([p, c]) => ({ path: `issues/${p}/sub-issues`, body: { child: c } })),
  fc.tuple(num, num).map(([p, c]) => ({ path: `issues/${p}/sub-issues/${c}`, method: "DELETE" })),
  fc.tuple(num, num).map(([x, b]) => ({ path: `issues/${x}/blocked-by`, body: { blocker: b } })),
  fc.tuple(num, num).map(([x, b]) => ({ path: `issues/${x}/blocked-by/${b}`, method: "DELETE" })),
);

/** The facts reconciliation promises to get right, per issue. */
function facts(snapshot: Pick<Snapshot, "issues">) {
  return [...snapshot.issues]
    .sort((a, b) => a.number - b.number)
    .map((i) => ({
      number: i.number,
      state: i.state,
      labels: [...i.labels].sort(),
      parent: i.parent ?? null,
      blockedBy: [...(i.blockedBy ?? [])].map(String).sort(),
    }));
}

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
            issues: Array.from({ length: N }, (_, i) => issue(i + 1)),
          });
          for (const o of ops) {
            // GitHub stamps to the second: one op a second keeps every event's time distinct.
            await sim("/clock", { body: { advanceSeconds: 1 } });
            await fetchSim(`/repos/${repo}/${o.path}`, o.method ?? "POST", o.body);
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
          await settle(stub);
          const stored = await runInDurableObject(stub, (o: RepoObject) => o.store.snapshot());
          const truth = await sim<Snapshot>(`/repos/${repo}/snapshot`);
          expect(facts(stored)).toEqual(facts(truth));
        },
      ),
      { numRuns: 12 },
    );
  });
});

async function fetchSim(path: string, method: string, body?: unknown) {
  // Invalid operations (a cycle, a missing edge) are refused by GitHub too; that is fine here.
  try {
    await sim(path, { method, ...(body !== undefined ? { body } : {}) });
  } catch {
    // refused
  }
}
