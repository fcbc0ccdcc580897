import {
  type ClaimKind,
  labelAtLimit,
  labelLimits,
  liveByLabel,
  pausedFor,
} from "../../../shared/claims/policy.ts";
import { stuckLabelRemovedByHand } from "../../../shared/claims/rules.ts";
import { compactOf, releaseAnalysis } from "../../../shared/graph/compact-analysis.ts";
import { orderQueue } from "../../../shared/queue/order.ts";
import {
  capabilitySet,
  DEFAULT_CLAIM_KINDS,
  hasCapabilities,
  isAvailable,
  QUEUE_KINDS,
  type QueueItem,
  type QueueKind,
} from "../../../shared/queue/queue.ts";
import type { Pause } from "./breaker.ts";
import type { ClaimsStore } from "./claims-store.ts";
import type { FleetResult, QueueRequest } from "./fleet-api.ts";
import {
  buildQueueView,
  buildQueueViewSteps,
  type QueueView,
  VIEW_MAX_AGE_MS,
} from "./queue-view.ts";
import type { RepoStore } from "./repo-store.ts";
import type { Schedules } from "./schedules-store.ts";

/** What an item is handed out as when no kinds are asked for: a reply item for its reply. */
const as = (item: QueueItem): ClaimKind => (item.kind === "reply" ? "reply" : "work");

/**
 * The fleet's queue inside a RepoObject: the queue view (rebuilt once per graph change, made
 * in steps ahead of synchronous readers), what one caller may claim from it, and the queue
 * answer (`GET .../queue`). Grants read the same view (claims.ts).
 */
export class QueueViews {
  private view: QueueView | null = null;
  private readonly store: RepoStore;
  private readonly rows: ClaimsStore;
  private readonly schedules: Schedules;
  private readonly htmlBase: () => string;
  /** Asks for the fleet writes a change implies (a stuck label taken off by hand). */
  private readonly owe: (nowMs: number) => void;
  /** The circuit breaker's pause now (breaker.ts), null while it is not red. */
  readonly paused: (nowMs: number) => Pause | null;

  constructor(
    store: RepoStore,
    schedules: Schedules,
    options: {
      htmlBase: () => string;
      owe: (nowMs: number) => void;
      paused: (nowMs: number) => Pause | null;
    },
  ) {
    this.store = store;
    this.rows = store.claims;
    this.schedules = schedules;
    this.htmlBase = options.htmlBase;
    this.owe = options.owe;
    this.paused = options.paused;
  }

  /** Whether the kept queue view still holds at `nowMs`. */
  private holds(nowMs: number): boolean {
    const v = this.view;
    return (
      v !== null &&
      v.version === this.store.rulesVersion &&
      // A graph dropped and made anew without a rule change (the prune) has other titles.
      v.graph === this.store.keptCompactGraph() &&
      nowMs - v.builtMs <= VIEW_MAX_AGE_MS &&
      nowMs >= v.builtMs
    );
  }

  /**
   * The kept view's plain lists (replies, IDD holders) if it was built at most `maxAgeMs` before
   * `nowMs`, whatever changed since: what graph readers may see while a full reconcile streams
   * pages in, when every page would otherwise void the view (graph-api.ts). Its analysis is not
   * offered: its arrays go back to the pool once the view is replaced.
   */
  recent(nowMs: number, maxAgeMs: number): Pick<QueueView, "replies" | "idd"> | null {
    const v = this.view;
    return v !== null && v.builtMs <= nowMs && nowMs - v.builtMs <= maxAgeMs
      ? { replies: v.replies, idd: v.idd }
      : null;
  }

  /** The queue view, rebuilt when the graph changed or it has aged. */
  current(nowMs: number): QueueView {
    if (this.holds(nowMs)) return this.view!;
    const built = this.store.transaction(() => {
      this.noticeStuckLabelsRemoved(nowMs);
      return buildQueueView(this.store, this.rows, nowMs);
    });
    return this.keep(built, nowMs);
  }

  /**
   * Builds the queue view ahead of a synchronous reader, pausing between its steps so webhook
   * acknowledgements go first. A change landing during a pause voids the work: it starts again,
   * and after three tries the reader builds it at once (`current`).
   */
  async prepare(nowMs: number, pause: () => Promise<void>): Promise<void> {
    for (let attempt = 0; attempt < 3 && !this.holds(nowMs); attempt++) {
      const version = this.store.rulesVersion;
      const steps = buildQueueViewSteps(this.store, this.rows, nowMs);
      let built: QueueView | null = null;
      for (;;) {
        const step = steps.next();
        if (step.done) {
          built = step.value;
          break;
        }
        await pause();
        if (this.store.rulesVersion !== version) {
          // Void: its scratch arrays go back for the next attempt (shared/graph/scratch.ts).
          steps.return(undefined as never);
          break;
        }
      }
      if (built === null) continue;
      // The stuck-label check is short and writes: it runs at once, in its transaction.
      this.store.transaction(() => this.noticeStuckLabelsRemoved(nowMs));
      if (this.store.rulesVersion !== version) {
        // Void too, and never seen by a reader: its arrays go back for the next attempt.
        releaseAnalysis(compactOf(built.analysis));
        continue;
      }
      this.keep(built, nowMs);
    }
  }

  private keep(built: QueueView, nowMs: number): QueueView {
    if (built.unknownAuthors.length > 0 || built.unknownReplyAuthors.length > 0)
      this.schedules.at("trust", nowMs);
    if (built.unreadThreads.length > 0) this.schedules.at("replies", nowMs);
    // A new view: what anyone may claim may have changed, so the owner's head is pushed again.
    this.schedules.at("owner", nowMs);
    const before = this.view;
    this.view = built;
    // Read only synchronously once obtained (never across an await): nobody holds it still.
    if (before !== null && before !== built) releaseAnalysis(compactOf(before.analysis));
    return built;
  }

  /** A human took the stuck label off an issue switchyard dead-lettered: attempts start over. */
  private noticeStuckLabelsRemoved(nowMs: number): void {
    const stuckLabel = this.store.config().labels.stuck;
    for (const f of this.rows.fleetRows()) {
      if (!f.stuck || !f.stuckLabeled || f.stuckMs === null) continue;
      const labels = this.store.issueLabels(f.number);
      if (
        labels !== null &&
        stuckLabelRemovedByHand({
          labels,
          stuckLabel,
          labeledMs: f.stuckMs,
          updatedMs: this.store.issueUpdatedMs(f.number) ?? 0,
          unlabeledMs: this.store.lastUnlabeledMs(f.number, stuckLabel),
        })
      ) {
        this.rows.resetAttempts(f.number);
        this.store.audit("stuck-reset", { number: f.number }, nowMs);
        this.owe(nowMs);
      }
    }
  }

  /**
   * Live switchyard claims per limited label (`claims.maxActiveByLabel`), counted on the claimed
   * issues' labels now. IDD marker claims do not count.
   */
  liveByLabel(view: QueueView, nowMs: number): Map<string, number> {
    const limits = labelLimits(view.config.claims);
    if (limits.size === 0) return new Map();
    const graph = view.analysis.graph;
    return liveByLabel(
      limits,
      this.rows.live(nowMs).map((c) => graph.issue(c.number)?.labels ?? []),
    );
  }

  /**
   * Excluded per request: live claims, open write records, live IDD claims, dead letters, `done`
   * until kicked, and issues with a label whose live claims reached its
   * `claims.maxActiveByLabel` limit. A reply is not parked by its issue's dead letter or `done`
   * (those are about the work).
   */
  availability(nowMs: number, view: QueueView): (item: QueueItem, as: ClaimKind) => boolean {
    const live = new Set(this.rows.live(nowMs).map((c) => c.number));
    // An issue with a write of an earlier claim still open is granted to nobody yet.
    for (const n of this.store.writes.openIssues(nowMs)) live.add(n);
    const parked = new Set<number>();
    for (const f of this.rows.fleetRows()) if (f.stuck || f.doneSuppressed) parked.add(f.number);
    const unparked = new Set<number>();
    const limits = labelLimits(view.config.claims);
    const counts = this.liveByLabel(view, nowMs);
    return (item: QueueItem, as: ClaimKind) =>
      isAvailable(item.number, {
        live,
        parked: as === "work" ? parked : unparked,
        idd: view.idd,
        nowMs,
      }) && labelAtLimit(item.labels, limits, counts) === null;
  }

  /**
   * What a caller asking for `kinds` may take `item` as now: its work (its kind was asked for),
   * else its reply (`reply` was asked for and the issue has one), or nothing.
   */
  private selection(
    view: QueueView,
    nowMs: number,
    kinds: ReadonlySet<QueueKind>,
    capabilities: ReadonlySet<string>,
  ): (item: QueueItem) => ClaimKind | null {
    const available = this.availability(nowMs, view);
    return (item) => {
      if (!hasCapabilities(item, capabilities)) return null;
      if (item.kind !== "reply" && kinds.has(item.kind) && available(item, "work")) return "work";
      if (kinds.has("reply") && item.reply !== null && available(item, "reply")) return "reply";
      return null;
    };
  }

  /** Whether the breaker holds `item` back now (red, and not repair work; replies go on). */
  private holdsBack(
    view: QueueView,
    pause: Pause | null,
  ): (item: QueueItem, as: ClaimKind) => boolean {
    const repairLabel = view.config.breaker?.repairLabel ?? "";
    return (item, as) => pausedFor(pause !== null, { kind: as, labels: item.labels, repairLabel });
  }

  /**
   * The first item of `view` this caller may claim now, in the repository's order, and what it
   * is taken as (`kinds`: default kick, rollup, ready); while the breaker is red, only repair
   * work and replies.
   */
  next(
    view: QueueView,
    request: Pick<QueueRequest, "machine" | "capabilities" | "kinds">,
    nowMs: number,
  ): { item: QueueItem; kind: ClaimKind } | undefined {
    const kinds = new Set(request.kinds ?? DEFAULT_CLAIM_KINDS);
    const select = this.selection(view, nowMs, kinds, capabilitySet(request.capabilities));
    const held = this.holdsBack(view, this.paused(nowMs));
    for (const item of orderQueue(view.items, view.config.queue.order, request.machine)) {
      const kind = select(item);
      if (kind !== null && !held(item, kind)) return { item, kind };
    }
    return undefined;
  }

  /**
   * The head the owner's object is pushed (functions/objects/repo/owner-push.ts): the first
   * `size` items anyone may claim now, in the repository's own order (no machine rotation),
   * each with what it may be claimed for now (`work`: its work; `reply`: its reply), and how
   * many there are in all. Caller-dependent filters (capabilities, kinds) are the owner's to
   * apply; what the breaker holds back is left out, so a work item held back (or parked) is
   * pushed only for its reply, if it carries one.
   */
  head(
    nowMs: number,
    size: number,
  ): {
    items: Array<{ item: QueueItem; work: boolean; reply: boolean }>;
    total: number;
    view: QueueView;
  } {
    const view = this.current(nowMs);
    const takes = this.takes(view, nowMs);
    const all: Array<{ item: QueueItem; work: boolean; reply: boolean }> = [];
    for (const item of orderQueue(view.items, view.config.queue.order)) {
      const work = item.kind !== "reply" && takes(item, "work");
      const reply = item.reply !== null && takes(item, "reply");
      if (work || reply) all.push({ item, work, reply });
    }
    return { items: all.slice(0, size), total: all.length, view };
  }

  /** Whether anyone may take `item` as `as` now: available, and not held back by the breaker. */
  private takes(view: QueueView, nowMs: number): (item: QueueItem, as: ClaimKind) => boolean {
    const available = this.availability(nowMs, view);
    const held = this.holdsBack(view, this.paused(nowMs));
    return (item, as) => available(item, as) && !held(item, as);
  }

  /**
   * Whether this caller's claim-next could take issue `number` now as `kind` (an org grant of a
   * pushed item): it is in the queue with work (`work`) or unanswered input (`reply`), available
   * for that, within the caller's capabilities and not held back. A pushed item since claimed,
   * closed, released `done`, answered or otherwise out is refused here.
   */
  offers(
    view: QueueView,
    number: number,
    request: Pick<QueueRequest, "capabilities"> & { kind?: ClaimKind },
    nowMs: number,
  ): boolean {
    const item = view.itemOf.get(number);
    if (item === undefined) return false;
    const kind = request.kind ?? as(item);
    if (kind === "work" ? item.kind === "reply" : item.reply === null) return false;
    return (
      hasCapabilities(item, capabilitySet(request.capabilities)) &&
      this.takes(view, nowMs)(item, kind)
    );
  }

  /**
   * `GET .../queue`: what this caller may claim, in order, cut to `limit` (`kinds`: default
   * every kind). While the breaker is red every item is still listed, `paused` says which are
   * held back, and the answer carries the pause.
   */
  answer(request: QueueRequest, nowMs: number): FleetResult {
    const view = this.current(nowMs);
    const order = request.order ?? view.config.queue.order;
    const kinds = new Set(request.kinds ?? QUEUE_KINDS);
    const select = this.selection(view, nowMs, kinds, capabilitySet(request.capabilities));
    const attempts = this.rows.attemptCounts();
    const pause = this.paused(nowMs);
    const held = this.holdsBack(view, pause);
    const items: Array<{ item: QueueItem; as: ClaimKind }> = [];
    for (const item of orderQueue(view.items, order, request.machine)) {
      const as = select(item);
      if (as !== null) items.push({ item, as });
    }
    return {
      status: 200,
      body: {
        repo: this.store.identity()?.fullName ?? null,
        order,
        total: items.length,
        items: items.slice(0, request.limit).map(({ item, as }) => ({
          number: item.number,
          // Read now: a retitling keeps the view (RepoStore.rulesVersion).
          title: view.analysis.graph.issue(item.number)?.title ?? item.title,
          url: this.issueUrl(item.number),
          kind: item.kind,
          reason: item.reason,
          ...(item.reply !== null ? { reply: item.reply } : {}),
          labels: item.labels,
          requires: item.requires,
          impact: item.impact,
          attempts: attempts.get(item.number) ?? 0,
          priority: item.priority,
          ...(pause !== null ? { paused: held(item, as) } : {}),
        })),
        ...(pause !== null ? { paused: pause } : {}),
        // Before the first full reconcile the graph holds only what webhooks brought.
        ...(this.store.watermarks().lastFullReconcileAt === null ? { partial: true } : {}),
      },
    };
  }

  /** The issue's page on GitHub (or GitHub Enterprise, or the simulator). */
  issueUrl(number: number): string {
    return `${this.htmlBase()}/${this.store.identity()?.fullName ?? "unknown/unknown"}/issues/${number}`;
  }
}
