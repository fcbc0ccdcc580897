// Cross-repository closes, told at once. GitHub sends a repository no webhook when an issue it
// depends on closes in another repository; the incremental reconcile would learn it within 15
// minutes. When that other repository is installed too (same installation), its RepoObject knows
// first: it records each close or reopen it ingests (durably, in `meta`), and the `cross-repo`
// schedule tells the other active repositories of the installation. Each applies the state as an
// `external` event (the merge rule reconcile uses: order and replays are harmless) only where one
// of its present blocker edges names the issue, and then runs its producer. The rules are in
// shared/ingest/cross-repo.ts; this module wires them to storage and the other objects.
import {
  type CrossRepoDelivery,
  type CrossRepoNotice,
  externalEventsFor,
  queueNotices,
  withoutDelivered,
} from "../../../shared/ingest/cross-repo.ts";
import type { Env } from "../../env.ts";
import { directory } from "../directory/directory-object.ts";
import type { RepoIdentity, RepoStore } from "./repo-store.ts";
import type { Schedules } from "./schedules-store.ts";

export type { CrossRepoDelivery, CrossRepoNotice };

/**
 * Inside an ingest transaction: queues the state changes of this repository's issues for the
 * other repositories and schedules their delivery. No call to another object here (this is the
 * acknowledgement path).
 */
export function recordStateChanges(
  store: RepoStore,
  schedules: Schedules,
  changes: ReadonlyArray<{ number: number }>,
  nowMs: number,
): void {
  if (changes.length === 0) return;
  const updates: CrossRepoNotice[] = [];
  for (const { number } of changes) {
    const issue = store.issueState(number);
    if (issue) {
      updates.push({ number, state: issue.state, closedAt: issue.closedAt, at: issue.updatedAt });
    }
  }
  if (updates.length === 0) return;
  store.meta.set(
    "crossRepoNotices",
    queueNotices(store.meta.get("crossRepoNotices") ?? [], updates),
  );
  schedules.at("cross-repo", nowMs);
}

/** A repository that can be told (RepoObject.externalStates). */
export interface CrossRepoReceiver {
  externalStates(delivery: CrossRepoDelivery): Promise<{ applied: number }>;
}

/**
 * The `cross-repo` schedule: delivers the queued notices to every other active repository of
 * the installation, then drops the ones delivered (a notice replaced meanwhile stays). A failure
 * throws, so the schedule is retried with backoff; a receiver told twice changes nothing.
 */
export async function deliverNotices(
  store: RepoStore,
  identity: RepoIdentity,
  env: Env,
  receiver: (repoId: number) => CrossRepoReceiver,
): Promise<{ repositories: number; notices: number }> {
  const notices = store.meta.get("crossRepoNotices") ?? [];
  if (notices.length === 0) return { repositories: 0, notices: 0 };
  const others = (
    await directory(env).list({ installationId: identity.installationId, status: "active" })
  ).filter((e) => e.repoId !== identity.repoId);
  const delivery: CrossRepoDelivery = {
    from: {
      repoId: identity.repoId,
      fullName: identity.fullName,
      installationId: identity.installationId,
    },
    notices,
  };
  for (const other of others) await receiver(other.repoId).externalStates(delivery);
  store.transaction(() => {
    const left = withoutDelivered(store.meta.get("crossRepoNotices") ?? [], notices);
    if (left.length > 0) store.meta.set("crossRepoNotices", left);
    else store.meta.delete("crossRepoNotices");
  });
  return { repositories: others.length, notices: notices.length };
}

/**
 * A receiving repository applies the states it tracks (in one transaction); a change wakes its
 * producer when `producerDue` says. Another installation's notices change nothing.
 */
export function receiveNotices(
  store: RepoStore,
  schedules: Schedules,
  delivery: CrossRepoDelivery,
  nowMs: number,
  producerDue: (atMs: number) => number,
): { applied: number } {
  return store.transaction(() => {
    const identity = store.identity();
    if (identity?.status !== "active") return { applied: 0 };
    if (identity.installationId !== delivery.from.installationId) return { applied: 0 };
    const named = store.presentBlockerRefs(
      delivery.notices.map((n) => `${delivery.from.fullName}#${n.number}`),
    );
    const events = externalEventsFor(delivery, named);
    if (events.length === 0) return { applied: 0 };
    const { changes, graphChanged } = store.applyEvents(events);
    if (changes.length > 0) {
      store.audit("cross-repo", { from: delivery.from.fullName, changes }, nowMs);
    }
    if (graphChanged) schedules.at("producer", producerDue(nowMs));
    return { applied: changes.length };
  });
}
