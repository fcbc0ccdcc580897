import { type Config, ConfigSchema, DEFAULT_CONFIG } from "../../../shared/config/schema.ts";
import { CompactGraph } from "../../../shared/graph/compact.ts";
import type { IssueRef } from "../../../shared/graph/refs.ts";
import type { Snapshot } from "../../../shared/graph/snapshot.ts";
import type { GraphEvent } from "../../../shared/ingest/events.ts";
import { mergeEvent, rowsTouched } from "../../../shared/ingest/merge-event.ts";
import type { RetentionCutoffs } from "../../../shared/schedule/retention.ts";
import { type AuditDetail, type AuditEntry, Journal } from "../journal-store.ts";
import { migrate, type Sql, sqlTag } from "../sql.ts";
import { CiStore } from "./ci-store.ts";
import { ClaimsStore } from "./claims-store.ts";
import { GraphReads, type MarkerCommentRow } from "./graph-reads.ts";
import { GraphStore } from "./graph-store.ts";
import { KeysStore } from "./keys-store.ts";
import { type MetaKey, MetaStore, type RepoIdentity, type Watermarks } from "./meta-store.ts";
import { Outbox } from "./outbox-store.ts";
import { PriorityStore } from "./priority-store.ts";
import { type ReconcileProgress, ReconcileProgressStore } from "./reconcile-progress-store.ts";
import { RepliesStore } from "./replies-store.ts";
import { REPO_MIGRATIONS } from "./repo-schema.ts";
import { Schedules } from "./schedules-store.ts";
import { WriteRecordsStore } from "./write-records-store.ts";

export type { AuditDetail, MarkerCommentRow, RepoIdentity, Watermarks };

const EMPTY_WATERMARKS: Watermarks = {
  lastEventAt: null,
  incremental: null,
  lastFullReconcileAt: null,
  producer: { seq: 0, at: null },
};

/**
 * The RepoObject's storage: one transaction boundary over the table-family stores, each the
 * only code that runs SQL on its tables (meta-store, graph-store, graph-reads, journal-store,
 * outbox-store; claims-store, keys-store and schedules-store for the fleet and the alarm). How events
 * change the graph is decided by shared/ingest/merge-event.ts; this facade only wires.
 */
export class RepoStore {
  /** The connection every table family's store shares (tests read tables through it too). */
  readonly sql: Sql;
  readonly meta: MetaStore;
  readonly journal: Journal;
  readonly outbox: Outbox;
  readonly reads: GraphReads;
  /** The full reconcile in progress (reconcile-fetch.ts streams it page by page). */
  readonly reconcileRuns: ReconcileProgressStore;
  /** The object's schedules, multiplexed on its one alarm. */
  readonly schedules: Schedules;
  /** The fleet tables: claims, the fencing counter, per-issue fleet state, idempotency keys. */
  readonly claims: ClaimsStore;
  /** Fleet keys, stored as hashes. */
  readonly keys: KeysStore;
  /** Fenced write records: a holder's GitHub write, bounded by a deadline (write-records-store.ts). */
  readonly writes: WriteRecordsStore;
  /** The circuit breaker's view of the default branch's CI. */
  readonly ci: CiStore;
  /** Priority options from an organization project's field. */
  readonly priority: PriorityStore;
  /** What the reply rules read of each issue's thread (classified, no bodies). */
  readonly replies: RepliesStore;
  private readonly graph: GraphStore;
  private readonly storage: DurableObjectStorage;
  private parsedConfig: Config | null = null;
  /**
   * Bumped (in memory) by every change to what the graph, labels, comments or config say, so
   * derived views (the fleet queue) know when to rebuild. Starts anew with each instance.
   */
  version = 0;
  /**
   * Bumped with `version` except by events that only retitle issues: what the analyses (the
   * graph scan, the queue view) depend on. A stream of title edits does not void them; titles
   * are read from the compact graph when shown.
   */
  rulesVersion = 0;
  /** Called when an issue's state changes (a close or a reopen), inside the change's transaction. */
  onStateChange: ((number: number, state: "open" | "closed") => void) | null = null;

  constructor(storage: DurableObjectStorage) {
    this.storage = storage;
    this.sql = sqlTag(storage.sql);
    migrate(storage, REPO_MIGRATIONS);
    this.meta = new MetaStore(this.sql);
    this.meta.onChange = (key: MetaKey) => {
      if (key !== "config") return;
      this.parsedConfig = null;
      this.noteChange();
    };
    this.journal = new Journal(this.sql);
    this.outbox = new Outbox(this.sql);
    this.graph = new GraphStore(this.sql);
    this.reads = new GraphReads(this.sql, storage.sql);
    this.reconcileRuns = new ReconcileProgressStore(this.sql);
    this.schedules = new Schedules(this.sql, storage);
    this.claims = new ClaimsStore(this.sql);
    this.keys = new KeysStore(this.sql);
    this.writes = new WriteRecordsStore(this.sql);
    this.ci = new CiStore(this.sql);
    this.priority = new PriorityStore(this.sql);
    this.replies = new RepliesStore(this.sql);
    // An answered input changes the queue's replies: the queue view is made again.
    this.replies.onChange = () => this.noteChange();
    // A project option is read by the queue's order: the queue view is made again.
    this.priority.onChange = () => this.noteChange();
  }

  /** A change derived views must see: `rules` false when the analyses still hold (a retitling). */
  noteChange(rules = true): void {
    this.version += 1;
    if (rules) this.rulesVersion += 1;
  }

  transaction<T>(fn: () => T): T {
    try {
      return this.storage.transactionSync(fn);
    } catch (error) {
      this.meta.clearCache();
      this.replies.dropCache();
      this.parsedConfig = null;
      // The rows rolled back; the compact graph kept in step with them did not.
      this.graph.drop();
      this.noteChange();
      throw error;
    }
  }

  // --- meta -------------------------------------------------------------------------------

  /**
   * Bumped when the repository stops being active (suspended, removed): work that began before
   * (a fetch, a write) checks it did not change before it lands.
   */
  generation(): number {
    return this.meta.get("generation") ?? 0;
  }

  bumpGeneration(): void {
    this.meta.set("generation", this.generation() + 1);
  }

  /** True while the repository is active and still in `generation`. */
  stillActive(generation: number): boolean {
    return this.identity()?.status === "active" && this.generation() === generation;
  }

  /**
   * Drops queued producer writes and the run they belong to (the repository stopped being
   * active). Parked writes stay: the next plan after a full reconcile plans them again.
   */
  dropProducerQueue(): void {
    this.outbox.dropQueued();
    this.meta.delete("producerRun");
  }

  /** Operational counters (deliveries applied, duplicates seen). */
  count(name: string): void {
    this.meta.set(`counter:${name}`, this.counter(name) + 1);
  }

  counter(name: string): number {
    return this.meta.get(`counter:${name}`) ?? 0;
  }

  identity(): RepoIdentity | undefined {
    return this.meta.get("identity");
  }

  setIdentity(identity: RepoIdentity): void {
    this.meta.set("identity", identity);
  }

  /** The full reconcile in progress (pages done, issues seen, when it began); null when none is. */
  reconcileProgress(): ReconcileProgress | null {
    return this.reconcileRuns.progress();
  }

  watermarks(): Watermarks {
    return { ...EMPTY_WATERMARKS, ...this.meta.get("watermarks") };
  }

  updateWatermarks(patch: Partial<Watermarks>): Watermarks {
    const next = { ...this.watermarks(), ...patch };
    this.meta.set("watermarks", next);
    return next;
  }

  config(): Config {
    if (this.parsedConfig) return this.parsedConfig;
    const stored = this.meta.get("config");
    const parsed = stored === undefined ? null : ConfigSchema.safeParse(stored);
    this.parsedConfig = parsed?.success ? parsed.data : DEFAULT_CONFIG;
    return this.parsedConfig;
  }

  configStatus(): { error: string | null; at: string | null } {
    return this.meta.get("configStatus") ?? { error: null, at: null };
  }

  /**
   * A valid file replaces the config; an invalid one keeps the last good config and its error
   * is shown until a good one arrives; `null` (no file) means the defaults.
   */
  setConfig(
    result: { ok: true; config: Config | null } | { ok: false; error: string },
    at: string,
  ): void {
    if (!result.ok) {
      this.meta.set("configStatus", { error: result.error, at });
      return;
    }
    if (result.config === null) this.meta.delete("config");
    else this.meta.set("config", result.config);
    this.meta.set("configStatus", { error: null, at });
  }

  /** When switchyard began watching: closes before it are history, not kicks. */
  watchingSince(): string | null {
    return this.meta.get("watchingSince") ?? null;
  }

  setWatchingSince(at: string): void {
    if (this.watchingSince() === null) this.meta.set("watchingSince", at);
  }

  // --- deliveries and audit ---------------------------------------------------------------

  hasDelivery(id: string): boolean {
    return this.journal.hasDelivery(id);
  }

  recordDelivery(id: string, receivedMs: number): void {
    this.journal.recordDelivery(id, receivedMs);
  }

  /**
   * The daily prune of the graph tables and the journal (bounds in docs/worker.md); the caller
   * prunes the fleet's tables.
   */
  prune(cutoffs: RetentionCutoffs): void {
    this.graph.prune(cutoffs);
    this.replies.prune(cutoffs.tombstonesMs);
    this.journal.prune(cutoffs);
  }

  audit(kind: string, detail: unknown, atMs: number): void {
    this.journal.audit(kind, detail, atMs);
  }

  auditLog(limit = 100): AuditEntry[] {
    return this.journal.auditLog(limit);
  }

  // --- applying events --------------------------------------------------------------------

  /**
   * Applies events with the merge rule of shared/ingest: nothing older than what is stored
   * overwrites it. Returns a description of each change that took effect (empty: no change).
   */
  apply(events: readonly GraphEvent[]): string[] {
    return this.applyEvents(events).changes;
  }

  /**
   * Like `apply`, and says whether anything the graph rules read changed (an issue's state or
   * labels, an edge, a cross-repository state): a title edit or a comment does not wake the
   * producer.
   */
  applyEvents(events: readonly GraphEvent[]): {
    changes: string[];
    graphChanged: boolean;
    /** Issues of this repository whose state changed (closed or reopened), in order. */
    stateChanges: Array<{ number: number; state: "open" | "closed" }>;
  } {
    const changes: string[] = [];
    const stateChanges: Array<{ number: number; state: "open" | "closed" }> = [];
    let graphChanged = false;
    const { labels } = this.config();
    const watchedLabels = new Set([
      labels.ready,
      labels.needsHuman,
      labels.processing,
      labels.stuck,
    ]);
    const repo = this.identity()?.fullName ?? null;
    const closedSeqBefore = this.meta.get("closedSeq") ?? 0;
    let closedSeq = closedSeqBefore;
    // One batch: the rows every event touches read up front and the writes carried out together
    // at the end, a few statements for a whole page of a full reconcile instead of ten an issue.
    const touched = events.map(rowsTouched);
    // Whether the analyses still hold afterwards: only when every write was an issue row whose
    // change, in the compact graph kept alongside, was a retitling.
    const compact = this.graph.mirror;
    const ruleChangesBefore = compact?.ruleChanges;
    let issueRowsOnly = true;
    this.graph.batch(touched, () => {
      events.forEach((event, i) => {
        const stored = { ...this.graph.read(touched[i]!), repo, watchedLabels, closedSeq };
        const { writes, change, stateChange } = mergeEvent(event, stored);
        if (stateChange) {
          stateChanges.push(stateChange);
          this.onStateChange?.(stateChange.number, stateChange.state);
        }
        for (const write of writes) {
          if (write.table === "meta") closedSeq = write.value;
          if (write.table !== "issues" || write.op !== "upsert") issueRowsOnly = false;
        }
        this.graph.write(writes);
        if (change) {
          changes.push(change.description);
          graphChanged ||= change.graph;
        }
      });
    });
    if (closedSeq !== closedSeqBefore) this.meta.set("closedSeq", closedSeq);
    // Reply state reads the same events (a comment's text is classified here, then dropped).
    const repliesChanged = this.replies.apply(events, repo);
    if (changes.length > 0 || repliesChanged) {
      const retitledOnly =
        !repliesChanged &&
        issueRowsOnly &&
        compact !== null &&
        this.graph.mirror === compact &&
        this.graph.building === null &&
        compact.ruleChanges === ruleChangesBefore;
      this.noteChange(!retitledOnly);
    }
    return { changes, graphChanged, stateChanges };
  }

  /**
   * Records a label write switchyard itself made, so the next plan sees it at once. No label
   * event is invented: GitHub's own (with GitHub's time) arrives by webhook or reconcile.
   */
  applyOwnLabelWrite(number: number, label: string, action: "add" | "remove"): void {
    if (this.graph.applyOwnLabelWrite(number, label, action)) this.noteChange();
  }

  setExternalEtag(ref: string, etag: string | null): void {
    this.graph.setExternalEtag(ref, etag);
  }

  // --- reading ----------------------------------------------------------------------------

  /**
   * The compact graph the rules run on (shared/graph/compact.ts): streamed from the tables on
   * first use, then kept current by every write (graph-store.ts). Rebuilt only when the
   * repository's name or the label names it was built for changed, after a failed transaction,
   * or after a prune.
   */
  /** The compact graph if it is built and current, else null (never builds one). */
  keptCompactGraph(): CompactGraph | null {
    const kept = this.graph.mirror;
    const repo = this.identity()?.fullName ?? "unknown/unknown";
    return kept?.fits(repo, this.config().labels) ? kept : null;
  }

  compactGraph(): CompactGraph {
    const repo = this.identity()?.fullName ?? "unknown/unknown";
    const labels = this.config().labels;
    const kept = this.graph.mirror;
    if (kept?.fits(repo, labels)) return kept;
    // A build in progress (`prepareGraph`) is finished now, at once.
    const building = this.building;
    if (
      building !== null &&
      this.graph.building === building.graph &&
      building.graph.fits(repo, labels)
    ) {
      for (const _ of building.chunks) {
        // the remaining chunks, without pausing
      }
      this.building = null;
      this.graph.building = null;
      this.graph.mirror = building.graph;
      return building.graph;
    }
    this.graph.drop();
    const built = this.reads.compact(repo, labels);
    this.graph.mirror = built;
    return built;
  }

  private building: { graph: CompactGraph; chunks: Generator<void, void, void> } | null = null;

  /**
   * Makes sure the compact graph is built, reading the tables a chunk at a time and pausing
   * between chunks (`pause`), so the object answers other requests (webhook acknowledgements)
   * while a large repository's graph is read after the object started. Changes that land
   * meanwhile reach the graph being built (graph-store.ts). A no-op when it is built already.
   */
  async prepareGraph(pause: () => Promise<void>, chunk?: number): Promise<void> {
    for (;;) {
      const repo = this.identity()?.fullName ?? "unknown/unknown";
      const labels = this.config().labels;
      if (this.graph.mirror?.fits(repo, labels)) return;
      let current = this.building;
      if (
        current === null ||
        this.graph.building !== current.graph ||
        !current.graph.fits(repo, labels)
      ) {
        const graph = new CompactGraph(repo, labels);
        current = { graph, chunks: this.reads.fillCompact(graph, chunk) };
        this.building = current;
        this.graph.building = graph;
      }
      if (current.chunks.next().done) {
        if (this.building === current && this.graph.building === current.graph) {
          this.building = null;
          this.graph.building = null;
          this.graph.mirror = current.graph;
        }
        continue;
      }
      await pause();
    }
  }

  /** The stored graph in the snapshot format of spec 3.1, issues ascending. */
  snapshot(now?: string): Snapshot {
    return this.reads.snapshot(this.identity()?.fullName ?? null, now);
  }

  /**
   * Closes learned after `afterSeq` (the producer watermark) that happened after switchyard
   * began watching: the causes the producer has not materialized yet.
   */
  pendingCloses(afterSeq: number): { causes: IssueRef[]; maxSeq: number } {
    return this.reads.pendingCloses(afterSeq, this.watchingSince());
  }

  externalProbes(): Array<{ ref: string; etag: string | null }> {
    return this.reads.externalProbes();
  }

  issueStamps(): Array<{ number: number; updatedMs: number }> {
    return this.reads.issueStamps();
  }

  issueUpdatedMs(number: number): number | null {
    return this.reads.issueUpdatedMs(number);
  }

  lastUnlabeledMs(number: number, label: string): number | null {
    return this.reads.lastUnlabeledMs(number, label);
  }

  issueLabels(number: number): string[] | null {
    return this.reads.issueLabels(number);
  }

  markerComments(number: number): MarkerCommentRow[] {
    return this.reads.markerComments(number);
  }

  openMarkerComments(): MarkerCommentRow[] {
    return this.reads.openMarkerComments();
  }

  issueState(
    number: number,
  ): { state: "open" | "closed"; closedAt: string | null; updatedAt: string } | null {
    return this.reads.issueState(number);
  }

  /** The stored spelling of each cross-repository blocker named by a present edge, by lower-cased ref. */
  presentBlockerRefs(refs: readonly string[]): Map<string, string> {
    return this.reads.presentBlockerRefs(refs);
  }

  /** Open issues with a stored marker comment or carrying `label`: whose comments a full reconcile re-reads. */
  openIssuesWithMarkersOrLabel(label: string): number[] {
    return this.reads.openIssuesWithMarkersOrLabel(label);
  }

  /** Which of `numbers` are stored open issues. */
  openAmong(numbers: readonly number[]): number[] {
    return this.reads.openAmong(numbers);
  }

  /**
   * Deletes every stored row of these tables (the graph, the outbox, deliveries and audit, meta
   * but the identity and generation): the App was uninstalled or the repository removed from
   * it. The caller (lifecycle.ts `wipe`) wipes the fleet's and the schedules' tables.
   */
  wipe(): void {
    this.graph.wipe();
    this.replies.clear();
    this.outbox.clear();
    this.journal.wipe();
    this.reconcileRuns.wipe();
    this.meta.wipe();
    this.parsedConfig = null;
    this.noteChange();
  }
}
