import { formatInstant } from "../../../shared/graph/time.ts";
import type { GraphEvent } from "../../../shared/ingest/events.ts";
import type { RepositoryAction } from "../../../shared/ingest/from-webhook.ts";
import type { RepoContext } from "./context.ts";
import { type CrossRepoDelivery, receiveNotices, recordStateChanges } from "./cross-repo.ts";
import { adoptFromWebhook } from "./lifecycle.ts";
import { producerDue } from "./producer.ts";
import { reportedChanges, reportLateChanges, reportLateWrites } from "./write-records.ts";

// The acknowledgement path (spec 6.1): a webhook delivery's events applied in one transaction,
// never a call to GitHub. How an event changes the graph is shared/ingest/merge-event.ts.

export interface Delivery {
  id: string;
  event: string;
  receivedMs: number;
}

export type IngestOutcome = "applied" | "unchanged" | "duplicate" | "ignored";

/**
 * Applies one webhook delivery's events atomically: a delivery seen before changes nothing,
 * and a failure leaves no partial state. Never calls GitHub (this is the acknowledgement path).
 */
export async function ingest(
  c: RepoContext,
  delivery: Delivery,
  repo: { id: number; fullName: string; installationId: number },
  events: GraphEvent[],
  extra: { repositoryAction?: RepositoryAction; confirmIssueRemoved?: number } = {},
): Promise<IngestOutcome> {
  const { store, schedules } = c;
  const { repositoryAction, confirmIssueRemoved } = extra;
  const outcome = store.transaction((): IngestOutcome | "moved" => {
    if (store.hasDelivery(delivery.id)) {
      store.count("deliveriesDuplicate");
      return "duplicate";
    }
    const identity = store.identity();
    if (identity && identity.installationId !== repo.installationId) {
      // An event of another installation: the repository moved (and its `added` has not
      // arrived), or a late or replayed event of a former installation. Nothing is applied;
      // `sync` asks GitHub whether that installation covers it now and, if so, moves it there
      // (a full reconcile then learns what this event said).
      store.meta.set("installationCandidate", repo.installationId);
      schedules.at("sync", delivery.receivedMs);
      store.audit(
        "webhook-other-installation",
        { delivery: delivery.id, installation: repo.installationId },
        delivery.receivedMs,
      );
      return "moved";
    }
    if (identity?.status === "removed" || identity?.status === "suspended") return "ignored";
    // A deletion of a repository never seen says nothing worth keeping.
    if (!identity && repositoryAction === "deleted") return "ignored";
    if (!identity) {
      adoptFromWebhook(
        c,
        {
          repoId: repo.id,
          fullName: repo.fullName,
          installationId: repo.installationId,
          status: "active",
        },
        delivery.receivedMs,
      );
    } else if (identity.fullName !== repo.fullName) {
      // Another name in a payload is a hint, not a fact (a replayed delivery carries an old
      // name): the name changes only when GitHub, asked by id, says so (`sync`).
      schedules.at("sync", delivery.receivedMs);
    }
    store.recordDelivery(delivery.id, delivery.receivedMs);
    if (repositoryAction !== undefined || confirmIssueRemoved !== undefined) {
      // Destructive or identity-changing claims: recorded now, applied by `sync` once GitHub,
      // asked by id, confirms them.
      if (confirmIssueRemoved !== undefined) {
        const pending = store.meta.get("pendingIssueRemovals") ?? [];
        if (!pending.includes(confirmIssueRemoved)) {
          store.meta.set("pendingIssueRemovals", [...pending, confirmIssueRemoved]);
        }
      }
      store.count("deliveriesApplied");
      store.audit(
        "webhook",
        {
          delivery: delivery.id,
          event: delivery.event,
          ...(repositoryAction ? { action: repositoryAction } : {}),
          ...(confirmIssueRemoved ? { toConfirm: { issueRemoved: confirmIssueRemoved } } : {}),
        },
        delivery.receivedMs,
      );
      schedules.at("sync", delivery.receivedMs);
      return "applied";
    }
    // A label renamed or deleted is a hint, not a fact: it carries no time to order it against
    // issue events, and a replayed one would take a hold or needs-human label off every issue.
    // Stored labels are not rewritten (the producer and the fleet queue keep them); a full
    // read, now, learns what GitHub says.
    const isHint = (e: GraphEvent) => e.type === "label-renamed" || e.type === "label-deleted";
    const hints = events.filter(isHint);
    const facts = hints.length === 0 ? events : events.filter((e) => !isHint(e));
    // A fenced comment GitHub applied after its write's record closed is reported.
    reportLateWrites(
      store,
      facts.flatMap((e) => (e.type === "comment" ? [e] : [])),
      delivery.receivedMs,
    );
    // So is a fenced label change or close GitHub applied after its record closed.
    reportLateChanges(store, reportedChanges(facts), delivery.receivedMs);
    const { changes, graphChanged, stateChanges } = store.applyEvents(facts);
    // A thread a comment event left not seen whole is read from GitHub (reply-reads.ts).
    if (facts.some((e) => e.type === "comment" || e.type === "comment-removed"))
      schedules.at("replies", delivery.receivedMs);
    // Closes and reopens here are told to the installation's other repositories (cross-repo.ts).
    recordStateChanges(store, schedules, stateChanges, delivery.receivedMs);
    store.updateWatermarks({ lastEventAt: formatInstant(delivery.receivedMs) });
    if (events.some((e) => e.type === "config-changed"))
      schedules.at("config", delivery.receivedMs);
    if (hints.length > 0) {
      store.meta.set("fullReconcileRestartMs", delivery.receivedMs);
      schedules.at("reconcile-full", delivery.receivedMs);
    }
    store.count("deliveriesApplied");
    if (changes.length === 0 && hints.length === 0) return "unchanged";
    store.audit(
      "webhook",
      {
        delivery: delivery.id,
        event: delivery.event,
        changes,
        ...(hints.length > 0 ? { toConfirm: { labels: hints } } : {}),
      },
      delivery.receivedMs,
    );
    if (graphChanged) schedules.at("producer", producerDue(c, delivery.receivedMs));
    return "applied";
  });
  if (outcome === "moved") {
    await schedules.rearm();
    return "ignored";
  }
  if (outcome === "applied" || outcome === "unchanged") await schedules.rearm();
  return outcome;
}

/**
 * Another repository of the installation says one of its issues closed or reopened: applied
 * where a blocker edge here names it, then the producer runs (cross-repo.ts).
 */
export async function externalStates(
  c: RepoContext,
  delivery: CrossRepoDelivery,
): Promise<{ applied: number }> {
  const result = receiveNotices(c.store, c.schedules, delivery, Date.now(), (atMs) =>
    producerDue(c, atMs),
  );
  await c.schedules.rearm();
  return result;
}
