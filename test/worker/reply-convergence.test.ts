// Reply state is order-independent (issue 22): comments created, edited and deleted on the
// GitHub simulator, their webhooks delivered in any order, some twice, some never, then healed
// by the full reconcile, end in the reply state a fresh full reconcile gives.
import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { RepoObject } from "../../functions/objects/repo/repo-object.ts";
import {
  decideReply,
  type ReplyState,
  summarizeClassified,
} from "../../shared/queue/reply-state.ts";
import { type Delivery, install, postWebhook, type repoStub, settle, sim } from "./helpers.ts";

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

const BODIES = {
  owner: "Please use CSV.",
  stranger: "Do it now!",
  ask: "Which format should the export use?",
  terminal: 'Done in PR #5.\n<!-- sweep-trace: {"ver":1,"val":"pr"} -->',
  deferral: "🟢 queued, not done this round.",
  heartbeat: "> 📡 presence board",
} as const;
type Kind = keyof typeof BODIES;
const kind = fc.constantFrom<Kind>(...(Object.keys(BODIES) as Kind[]));

type CommentOp =
  | { op: "post"; issue: 1 | 2; kind: Kind }
  | { op: "edit"; target: number; kind: Kind }
  | { op: "delete"; target: number };

const commentOp: fc.Arbitrary<CommentOp> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("post" as const),
      issue: fc.constantFrom<1 | 2>(1, 2),
      kind,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("edit" as const), target: fc.nat(), kind }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("delete" as const), target: fc.nat() }) },
);

/** Who posts a kind of comment: the owner (trusted), a stranger, or the fleet's bot. */
function authorOf(k: Kind, owner: string): string {
  if (k === "owner") return owner;
  if (k === "stranger") return "drive-by";
  return "fleet[bot]";
}

/** Each issue's reply state as the stored histories decide it (`not-evaluated` included). */
function replyStates(stub: ReturnType<typeof repoStub>) {
  return runInDurableObject(stub, (o: RepoObject) => {
    const config = o.store.config();
    const trust = {
      replyAuthors: config.queue.replyAuthors,
      knownWrite: (login: string) => o.store.claims.trust(login),
    };
    const policy = { replies: config.queue.replies, needsHumanLabel: config.labels.needsHuman };
    const out: Array<[number, ReplyState]> = [];
    for (const h of o.store.replies.histories())
      out.push([h.number, decideReply(summarizeClassified(h, trust), [], policy)]);
    return out;
  });
}

async function fullReconcile(stub: ReturnType<typeof repoStub>) {
  await runInDurableObject(stub, (o: RepoObject) => o.schedules.at("reconcile-full", Date.now()));
  await settle(stub);
}

describe("reply state: order independence", () => {
  let run = 0;

  it("a comment whose deletion webhook was lost is gone after the full reconcile, also when the thread is empty (regression)", async () => {
    const repo = "rc-lost-delete/app";
    const { stub } = await install(
      {
        repo,
        issues: [
          {
            number: 1,
            title: "One",
            state: "open",
            stateReason: null,
            createdAt: "2026-03-01T00:00:00Z",
            updatedAt: "2026-03-01T00:00:00Z",
            closedAt: null,
            labels: [],
            body: "Export the data.",
            author: { login: "rc-lost-delete", type: "User" },
          },
        ],
      },
      { ".github/switchyard.yml": JSON.stringify({ queue: { replies: "all" } }) },
    );
    await sim("/clock", { body: { now: null, advanceSeconds: -60 } });
    try {
      const { id } = await sim<{ id: number }>(`/repos/${repo}/issues/1/comments`, {
        body: { body: BODIES.owner, actor: "rc-lost-delete" },
      });
      await sim(`/comments/${id}`, { method: "DELETE", body: { actor: "rc-lost-delete" } });
    } finally {
      await sim("/clock", { body: { now: null } });
    }
    const { deliveries } = await sim<{ deliveries: Delivery[] }>("/outbox/drain", {
      method: "POST",
    });
    for (const d of deliveries.filter((d) => d.action === "created"))
      await (await postWebhook(d.headers, d.body)).arrayBuffer();
    await settle(stub);
    await fullReconcile(stub);
    const [[, state]] = (await replyStates(stub)) as [[number, ReplyState]];
    expect(state).toMatchObject({ state: "unanswered", reply: { reason: "unanswered-body" } });
  });

  it("comment events in any order, duplicated or dropped, healed by the full reconcile, equal a fresh full reconcile (property)", async () => {
    // Each run installs a repository and reads it fully three times in workerd against the
    // simulator over HTTP (about 2 s on a shared 2-core machine): 10 runs keep the file near
    // 30 s while covering edits and deletions of both the input and its answers.
    await fc.assert(
      fc.asyncProperty(
        fc.array(commentOp, { minLength: 1, maxLength: 10 }),
        fc.array(fc.constantFrom("deliver", "drop", "duplicate"), { minLength: 30, maxLength: 30 }),
        fc.infiniteStream(fc.nat()),
        async (ops, fates, seeds) => {
          run += 1;
          const owner = `rc${run}`;
          const repo = `${owner}/app`;
          const opened = {
            state: "open" as const,
            stateReason: null,
            createdAt: "2026-03-01T00:00:00Z",
            updatedAt: "2026-03-01T00:00:00Z",
            closedAt: null,
            labels: [],
            body: "Export the data.",
            author: { login: owner, type: "User" },
          };
          const { stub } = await install(
            {
              repo,
              issues: [
                { number: 1, title: "One", ...opened },
                { number: 2, title: "Two", ...opened },
              ],
            },
            { ".github/switchyard.yml": JSON.stringify({ queue: { replies: "all" } }) },
          );
          // The comments are made a minute before the reconciles read them: a comment missing
          // from a read is taken for deleted only when it was made before the read began.
          await sim("/clock", { body: { now: null, advanceSeconds: -60 } });
          const posted: Array<{ id: number; author: string }> = [];
          try {
            for (const o of ops) {
              if (o.op === "post") {
                const author = authorOf(o.kind, owner);
                const { id } = await sim<{ id: number }>(
                  `/repos/${repo}/issues/${o.issue}/comments`,
                  {
                    body: { body: BODIES[o.kind], actor: author },
                  },
                );
                posted.push({ id, author });
                continue;
              }
              const live = posted.filter((p) => p.id > 0);
              if (live.length === 0) continue;
              const target = live[o.target % live.length]!;
              if (o.op === "edit") {
                await sim(`/comments/${target.id}`, {
                  method: "PATCH",
                  body: { body: BODIES[o.kind], actor: target.author },
                });
              } else {
                await sim(`/comments/${target.id}`, {
                  method: "DELETE",
                  body: { actor: target.author },
                });
                target.id = -target.id;
              }
            }
          } finally {
            await sim("/clock", { body: { now: null } });
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
          // What webhooks missed, the full reconcile heals.
          await fullReconcile(stub);
          const healed = await replyStates(stub);
          // A fresh full reconcile: the reply state forgotten, then read from GitHub alone.
          await runInDurableObject(stub, (o: RepoObject) => o.store.replies.clear());
          await fullReconcile(stub);
          const fresh = await replyStates(stub);
          expect(fresh.map(([n]) => n)).toEqual([1, 2]);
          expect(fresh.filter(([, s]) => s.state === "not-evaluated")).toEqual([]);
          expect(healed).toEqual(fresh);
        },
      ),
      { numRuns: 10 },
    );
    // A shared 2-core machine under other sessions' load: ten runs take 10 to 40 s.
  }, 120_000);
});
