import { type Config, ConfigSchema, DEFAULT_CONFIG } from "../../shared/config/schema.ts";
import { canonicalRef, type IssueRef } from "../../shared/graph/refs.ts";
import type { Snapshot, SnapshotIssue } from "../../shared/graph/snapshot.ts";
import { formatInstant } from "../../shared/graph/time.ts";
import { parseCommentMarker } from "../../shared/idd/comment-markers.ts";
import type { GraphEvent, IssueRecord } from "../../shared/ingest/events.ts";
import { decodeRef, encodeRef, supersedes } from "../../shared/ingest/merge.ts";
import { REPO_MIGRATIONS } from "./repo-schema.ts";
import { migrate, type Sql, sqlTag } from "./sql.ts";

const DAY_MS = 86_400_000;
/** Delivery ids are kept at least this long for deduplication (GitHub redelivers for 3 days). */
export const DELIVERY_RETENTION_MS = 7 * DAY_MS;
export const AUDIT_LIMIT = 2_000;

export interface Watermarks {
  /** Time of the last webhook delivery applied. */
  lastEventAt: string | null;
  /** Incremental reconcile: the listing's `since`, its ETag and the issues seen at `since`. */
  incremental: { since: string; etag: string | null; boundary: number[]; at: string } | null;
  lastFullReconcileAt: string | null;
  /** The producer has materialized every close learned up to `seq` (at time `at`). */
  producer: { seq: number; at: string | null };
}

export interface RepoIdentity {
  repoId: number;
  fullName: string;
  installationId: number;
  status: "active" | "suspended" | "removed";
}

const EMPTY_WATERMARKS: Watermarks = {
  lastEventAt: null,
  incremental: null,
  lastFullReconcileAt: null,
  producer: { seq: 0, at: null },
};

type IssueRow = {
  number: number;
  id: number | null;
  title: string;
  state: string;
  state_reason: string | null;
  created_at: string;
  updated_at: string;
  updated_ms: number;
  closed_at: string | null;
  labels: string;
  body: string | null;
  closed_seq: number | null;
};

const ms = (iso: string) => Date.parse(iso);

export type MarkerCommentRow = {
  id: number;
  number: number;
  author: string;
  author_type: string;
  author_association: string | null;
  body: string;
  created_at: string;
};

/** What the audit log stores for an entry: a JSON object. */
export type AuditDetail = Record<string, string | number | boolean | null | object>;

/** The repository's graph in SQLite: every read and write of RepoObject's tables goes here. */
export class RepoStore {
  readonly sql: Sql;
  private readonly storage: DurableObjectStorage;
  /**
   * Parsed meta values, read on every delivery (identity, config, watermarks). Writes go
   * through; a rolled-back transaction clears the cache. Values are shared: never mutate them.
   */
  private readonly metaCache = new Map<string, unknown>();
  private parsedConfig: Config | null = null;
  private auditInserts = 0;
  /** Set by `upsertIssue` when a field the graph rules read changed. */
  private graphTouched = false;
  /**
   * Bumped (in memory) by every change to what the graph, labels, comments or config say, so
   * derived views (the fleet queue) know when to rebuild. Starts anew with each instance.
   */
  version = 0;
  /** Called when an issue's state changes (a close or a reopen), inside the change's transaction. */
  onStateChange: ((number: number, state: "open" | "closed") => void) | null = null;

  constructor(storage: DurableObjectStorage) {
    this.storage = storage;
    this.sql = sqlTag(storage.sql);
    migrate(storage, REPO_MIGRATIONS);
  }

  transaction<T>(fn: () => T): T {
    try {
      return this.storage.transactionSync(fn);
    } catch (error) {
      this.metaCache.clear();
      this.parsedConfig = null;
      this.version += 1;
      throw error;
    }
  }

  // --- meta -------------------------------------------------------------------------------

  getMeta<T>(key: string): T | undefined {
    if (this.metaCache.has(key)) return this.metaCache.get(key) as T | undefined;
    const row = this.sql<{ value: string }>`SELECT value FROM meta WHERE key = ${key}`[0];
    const value = row ? (JSON.parse(row.value) as T) : undefined;
    this.metaCache.set(key, value);
    return value;
  }

  setMeta(key: string, value: unknown): void {
    const text = JSON.stringify(value);
    this.sql`INSERT INTO meta (key, value) VALUES (${key}, ${text})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
    this.metaCache.set(key, JSON.parse(text));
    if (key === "config") {
      this.parsedConfig = null;
      this.version += 1;
    }
  }

  deleteMeta(key: string): void {
    this.sql`DELETE FROM meta WHERE key = ${key}`;
    this.metaCache.set(key, undefined);
    if (key === "config") {
      this.parsedConfig = null;
      this.version += 1;
    }
  }

  /**
   * Bumped when the repository stops being active (suspended, removed): work that began before
   * (a fetch, a write) checks it did not change before it lands.
   */
  generation(): number {
    return this.getMeta<number>("generation") ?? 0;
  }

  bumpGeneration(): void {
    this.setMeta("generation", this.generation() + 1);
  }

  /** True while the repository is active and still in `generation`. */
  stillActive(generation: number): boolean {
    return this.identity()?.status === "active" && this.generation() === generation;
  }

  /** Drops queued producer writes and the run they belong to (the repository stopped being active). */
  dropProducerQueue(): void {
    this.sql`DELETE FROM outbox`;
    this.deleteMeta("producerRun");
  }

  /** Operational counters (deliveries applied, duplicates seen). */
  count(name: string): void {
    this.setMeta(`counter:${name}`, this.counter(name) + 1);
  }

  counter(name: string): number {
    return this.getMeta<number>(`counter:${name}`) ?? 0;
  }

  identity(): RepoIdentity | undefined {
    return this.getMeta<RepoIdentity>("identity");
  }

  setIdentity(identity: RepoIdentity): void {
    this.setMeta("identity", identity);
  }

  watermarks(): Watermarks {
    return { ...EMPTY_WATERMARKS, ...this.getMeta<Partial<Watermarks>>("watermarks") };
  }

  updateWatermarks(patch: Partial<Watermarks>): Watermarks {
    const next = { ...this.watermarks(), ...patch };
    this.setMeta("watermarks", next);
    return next;
  }

  config(): Config {
    if (this.parsedConfig) return this.parsedConfig;
    const stored = this.getMeta<unknown>("config");
    const parsed = stored === undefined ? null : ConfigSchema.safeParse(stored);
    this.parsedConfig = parsed?.success ? parsed.data : DEFAULT_CONFIG;
    return this.parsedConfig;
  }

  configStatus(): { error: string | null; at: string | null } {
    return this.getMeta("configStatus") ?? { error: null, at: null };
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
      this.setMeta("configStatus", { error: result.error, at });
      return;
    }
    if (result.config === null) this.deleteMeta("config");
    else this.setMeta("config", result.config);
    this.setMeta("configStatus", { error: null, at });
  }

  // --- deliveries and audit ---------------------------------------------------------------

  hasDelivery(id: string): boolean {
    return this.sql`SELECT 1 FROM deliveries WHERE id = ${id}`.length > 0;
  }

  recordDelivery(id: string, receivedMs: number): void {
    this.sql`INSERT OR IGNORE INTO deliveries (id, received_ms) VALUES (${id}, ${receivedMs})`;
  }

  pruneDeliveries(nowMs: number): void {
    this.sql`DELETE FROM deliveries WHERE received_ms < ${nowMs - DELIVERY_RETENTION_MS}`;
  }

  audit(kind: string, detail: unknown, atMs: number): void {
    const text = JSON.stringify(detail);
    this.sql`INSERT INTO audit (at_ms, kind, detail) VALUES (${atMs}, ${kind}, ${text})`;
    // Trimmed every hundred entries: the log stays bounded without a delete per event.
    this.auditInserts += 1;
    if (this.auditInserts % 100 === 1) {
      this.sql`DELETE FROM audit WHERE seq <= (SELECT MAX(seq) FROM audit) - ${AUDIT_LIMIT}`;
    }
  }

  auditLog(limit = 100): Array<{ seq: number; at: string; kind: string; detail: AuditDetail }> {
    return this.sql<{ seq: number; at_ms: number; kind: string; detail: string }>`
      SELECT seq, at_ms, kind, detail FROM audit ORDER BY seq DESC LIMIT ${limit}`.map((r) => ({
      seq: r.seq,
      at: formatInstant(r.at_ms),
      kind: r.kind,
      detail: JSON.parse(r.detail) as AuditDetail,
    }));
  }

  // --- applying events --------------------------------------------------------------------

  private ref(ref: IssueRef): string {
    const fullName = this.identity()?.fullName;
    return encodeRef(fullName ? canonicalRef(ref, fullName) : ref);
  }

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
  applyEvents(events: readonly GraphEvent[]): { changes: string[]; graphChanged: boolean } {
    const changes: string[] = [];
    let graphChanged = false;
    const watched = this.watchedLabels();
    for (const event of events) {
      const before = this.graphTouched;
      this.graphTouched = false;
      const change = this.applyOne(event, watched);
      if (change) {
        changes.push(change);
        graphChanged ||=
          event.type === "issue"
            ? this.graphTouched
            : event.type !== "comment" && event.type !== "comment-removed";
      }
      this.graphTouched = before;
    }
    if (changes.length > 0) this.version += 1;
    return { changes, graphChanged };
  }

  private watchedLabels(): Set<string> {
    const { labels } = this.config();
    return new Set([labels.ready, labels.needsHuman, labels.processing, labels.stuck]);
  }

  private tombstoned(number: number, atMs: number): boolean {
    const row = this.sql<{
      at_ms: number;
    }>`SELECT at_ms FROM tombstones WHERE number = ${number}`[0];
    return row !== undefined && atMs <= row.at_ms;
  }

  /** Events about an issue removed after they happened are stale: they must not bring it back. */
  private aboutRemovedIssue(event: GraphEvent): boolean {
    const check = (ref: IssueRef | null | undefined, at: string) =>
      typeof ref === "number" && this.tombstoned(ref, ms(at));
    switch (event.type) {
      case "parent":
        return check(event.child, event.at) || check(event.parent, event.at);
      case "blocked-by":
        return check(event.issue, event.at) || check(event.blocker, event.at);
      case "blockers":
        return check(event.issue, event.at);
      case "label-event":
        return check(event.number, event.at);
      case "comment":
        return check(event.number, event.updatedAt);
      default:
        return false;
    }
  }

  private applyOne(event: GraphEvent, watched: Set<string>): string | null {
    if (this.aboutRemovedIssue(event)) return null;
    switch (event.type) {
      case "issue":
        return this.upsertIssue(event.issue) ? `issue #${event.issue.number} updated` : null;
      case "issue-removed": {
        const at = ms(event.at);
        const existed = this.sql`SELECT 1 FROM issues WHERE number = ${event.number}`.length > 0;
        const ref = String(event.number);
        this.sql`INSERT INTO tombstones (number, at_ms) VALUES (${event.number}, ${at})
          ON CONFLICT (number) DO UPDATE SET at_ms = MAX(at_ms, excluded.at_ms)`;
        this.sql`DELETE FROM issues WHERE number = ${event.number}`;
        this.sql`DELETE FROM parents WHERE child = ${event.number} OR parent = ${ref}`;
        this.sql`DELETE FROM blockers WHERE issue = ${event.number} OR blocker = ${ref}`;
        this.sql`DELETE FROM label_events WHERE number = ${event.number}`;
        this.sql`DELETE FROM comments WHERE number = ${event.number}`;
        return existed ? `issue #${event.number} removed` : null;
      }
      case "parent": {
        const at = ms(event.at);
        const parent = event.parent === null ? null : this.ref(event.parent);
        const row = this.sql<{ parent: string | null; at_ms: number }>`
          SELECT parent, at_ms FROM parents WHERE child = ${event.child}`[0];
        if (row && !supersedes(at, row.at_ms)) return null;
        // A detach names the parent it detaches from; it must not undo a newer attach elsewhere.
        if (
          parent === null &&
          event.previous !== undefined &&
          row &&
          row.parent !== this.ref(event.previous)
        ) {
          return null;
        }
        if (row && row.parent === parent) {
          this.sql`UPDATE parents SET at_ms = ${at} WHERE child = ${event.child}`;
          return null;
        }
        this
          .sql`INSERT INTO parents (child, parent, at_ms) VALUES (${event.child}, ${parent}, ${at})
          ON CONFLICT (child) DO UPDATE SET parent = excluded.parent, at_ms = excluded.at_ms`;
        return parent === null
          ? `#${event.child} detached from its parent`
          : `#${event.child} is a sub-issue of ${parent.includes("#") ? parent : `#${parent}`}`;
      }
      case "blockers": {
        const at = ms(event.at);
        const wanted = new Set(event.blockers.map((b) => this.ref(b)));
        const rows = this.sql<{ blocker: string; present: number; at_ms: number }>`
          SELECT blocker, present, at_ms FROM blockers WHERE issue = ${event.issue}`;
        const changed: string[] = [];
        for (const blocker of new Set([...wanted, ...rows.map((r) => r.blocker)])) {
          const row = rows.find((r) => r.blocker === blocker);
          if (row && !supersedes(at, row.at_ms)) continue;
          const present = wanted.has(blocker) ? 1 : 0;
          if (!row && present === 0) continue;
          this
            .sql`INSERT INTO blockers (issue, blocker, present, at_ms) VALUES (${event.issue}, ${blocker}, ${present}, ${at})
            ON CONFLICT (issue, blocker) DO UPDATE SET present = excluded.present, at_ms = excluded.at_ms`;
          if ((row?.present ?? 0) !== present)
            changed.push(
              `${present ? "+" : "-"}${blocker.includes("#") ? blocker : `#${blocker}`}`,
            );
        }
        return changed.length > 0 ? `#${event.issue} blockers ${changed.join(" ")}` : null;
      }
      case "blocked-by": {
        const at = ms(event.at);
        const blocker = this.ref(event.blocker);
        const present = event.present ? 1 : 0;
        const row = this.sql<{ present: number; at_ms: number }>`
          SELECT present, at_ms FROM blockers WHERE issue = ${event.issue} AND blocker = ${blocker}`[0];
        if (row && !supersedes(at, row.at_ms)) return null;
        this.sql`INSERT INTO blockers (issue, blocker, present, at_ms)
          VALUES (${event.issue}, ${blocker}, ${present}, ${at})
          ON CONFLICT (issue, blocker) DO UPDATE SET present = excluded.present, at_ms = excluded.at_ms`;
        if (row && row.present === present) return null;
        const shown = blocker.includes("#") ? blocker : `#${blocker}`;
        return `#${event.issue} ${event.present ? "blocked by" : "no longer blocked by"} ${shown}`;
      }
      case "external": {
        const at = ms(event.at);
        const row = this.sql<{
          state: string;
          closed_at: string | null;
          at_ms: number;
          closed_seq: number | null;
        }>`
          SELECT state, closed_at, at_ms, closed_seq FROM external WHERE ref = ${event.ref}`[0];
        if (row && !supersedes(at, row.at_ms)) return null;
        const closedSeq = this.closedSeqFor(event.state, event.closedAt, row);
        this.sql`INSERT INTO external (ref, state, closed_at, at_ms, closed_seq)
          VALUES (${event.ref}, ${event.state}, ${event.closedAt}, ${at}, ${closedSeq})
          ON CONFLICT (ref) DO UPDATE SET state = excluded.state, closed_at = excluded.closed_at,
            at_ms = excluded.at_ms, closed_seq = excluded.closed_seq`;
        if (row?.state !== event.state) return `${event.ref} is ${event.state}`;
        // Closed again (a reopen in between went unseen): a new close, a new kick.
        return closedSeq !== null && closedSeq !== row.closed_seq
          ? `${event.ref} closed again`
          : null;
      }
      case "label-event": {
        if (!watched.has(event.label)) return null;
        const inserted = this.sql`INSERT OR IGNORE INTO label_events
          (number, label, action, actor, created_at, created_ms)
          VALUES (${event.number}, ${event.label}, ${event.action}, ${event.actor}, ${event.at}, ${ms(event.at)})
          RETURNING 1`;
        return inserted.length > 0 ? `#${event.number} ${event.action} ${event.label}` : null;
      }
      case "label-renamed":
        return this.rewriteLabels((labels) => labels.map((l) => (l === event.from ? event.to : l)))
          ? `label ${event.from} renamed to ${event.to}`
          : null;
      case "label-deleted":
        return this.rewriteLabels((labels) => labels.filter((l) => l !== event.name))
          ? `label ${event.name} deleted`
          : null;
      case "comment": {
        const at = ms(event.updatedAt);
        const gone = this.sql<{
          at_ms: number;
        }>`SELECT at_ms FROM comment_tombstones WHERE id = ${event.id}`[0];
        if (gone && at <= gone.at_ms) return null;
        const row = this.sql<{
          updated_ms: number;
        }>`SELECT updated_ms FROM comments WHERE id = ${event.id}`[0];
        if (row && !supersedes(at, row.updated_ms)) return null;
        // Only comments that open with a claim-protocol marker carry IDD state (spec 5).
        if (parseCommentMarker(event.body).status === "none") {
          if (row) this.sql`DELETE FROM comments WHERE id = ${event.id}`;
          return row ? `comment ${event.id} no longer carries a marker` : null;
        }
        this
          .sql`INSERT INTO comments (id, number, author, author_type, author_association, body, created_at, updated_ms)
          VALUES (${event.id}, ${event.number}, ${event.author.login}, ${event.author.type},
                  ${event.association ?? null}, ${event.body}, ${event.createdAt}, ${at})
          ON CONFLICT (id) DO UPDATE SET body = excluded.body, updated_ms = excluded.updated_ms,
            author_association = COALESCE(excluded.author_association, comments.author_association)`;
        return `marker comment ${event.id} on #${event.number}`;
      }
      case "comment-removed": {
        // Remembered, so a late `created`/`edited` delivery cannot bring a deleted marker back.
        this.sql`INSERT INTO comment_tombstones (id, at_ms) VALUES (${event.id}, ${ms(event.at)})
          ON CONFLICT (id) DO UPDATE SET at_ms = MAX(at_ms, excluded.at_ms)`;
        const removed = this.sql`DELETE FROM comments WHERE id = ${event.id} RETURNING 1`;
        return removed.length > 0 ? `comment ${event.id} removed` : null;
      }
      case "config-changed":
        return null;
    }
  }

  private rewriteLabels(rewrite: (labels: string[]) => string[]): boolean {
    let changed = false;
    for (const row of this.sql<{
      number: number;
      labels: string;
    }>`SELECT number, labels FROM issues`) {
      const before = JSON.parse(row.labels) as string[];
      const after = rewrite(before);
      if (after.length !== before.length || after.some((l, i) => l !== before[i])) {
        this.sql`UPDATE issues SET labels = ${JSON.stringify(after)} WHERE number = ${row.number}`;
        changed = true;
      }
    }
    return changed;
  }

  /**
   * The sequence number of a close: the stored one for the same close (same `closedAt`), a new
   * one for a close not seen before — even when an intermediate reopen was lost or arrives late.
   */
  private closedSeqFor(
    state: string,
    closedAt: string | null,
    row: { state: string; closed_at: string | null; closed_seq: number | null } | undefined,
  ): number | null {
    if (state !== "closed") return null;
    if (row?.state === "closed" && row.closed_at === closedAt && row.closed_seq !== null)
      return row.closed_seq;
    return this.nextClosedSeq();
  }

  /** Numbers each close as switchyard learns it, so the producer can materialize it exactly once. */
  private nextClosedSeq(): number {
    const next = (this.getMeta<number>("closedSeq") ?? 0) + 1;
    this.setMeta("closedSeq", next);
    return next;
  }

  /** Upserts an issue unless what is stored is newer or the issue was removed later. */
  upsertIssue(issue: IssueRecord): boolean {
    const at = ms(issue.updatedAt);
    if (this.tombstoned(issue.number, at)) return false;
    const row = this.sql<IssueRow>`SELECT * FROM issues WHERE number = ${issue.number}`[0];
    if (row && !supersedes(at, row.updated_ms)) return false;
    const labels = JSON.stringify(issue.labels);
    const body = issue.body === undefined ? (row?.body ?? null) : issue.body;
    if (
      row &&
      row.title === issue.title &&
      row.state === issue.state &&
      row.state_reason === issue.stateReason &&
      row.closed_at === issue.closedAt &&
      row.labels === labels &&
      row.body === body &&
      row.updated_at === issue.updatedAt &&
      (issue.id === null || row.id === issue.id)
    ) {
      return false;
    }
    const closedSeq = this.closedSeqFor(issue.state, issue.closedAt, row);
    if (row && row.state !== issue.state) this.onStateChange?.(issue.number, issue.state);
    this.graphTouched =
      !row ||
      row.state !== issue.state ||
      row.state_reason !== issue.stateReason ||
      row.closed_at !== issue.closedAt ||
      row.labels !== labels;
    this
      .sql`INSERT INTO issues (number, id, title, state, state_reason, created_at, updated_at, updated_ms, closed_at, labels, body, closed_seq)
      VALUES (${issue.number}, ${issue.id}, ${issue.title}, ${issue.state}, ${issue.stateReason}, ${issue.createdAt},
              ${issue.updatedAt}, ${at}, ${issue.closedAt}, ${labels}, ${body}, ${closedSeq})
      ON CONFLICT (number) DO UPDATE SET id = COALESCE(excluded.id, issues.id), title = excluded.title,
        state = excluded.state, state_reason = excluded.state_reason, created_at = excluded.created_at,
        updated_at = excluded.updated_at, updated_ms = excluded.updated_ms, closed_at = excluded.closed_at,
        labels = excluded.labels, body = excluded.body, closed_seq = excluded.closed_seq`;
    return true;
  }

  /**
   * Records a label write switchyard itself made, so the next plan sees it at once. No label
   * event is invented: GitHub's own (with GitHub's time) arrives by webhook or reconcile.
   */
  applyOwnLabelWrite(number: number, label: string, action: "add" | "remove"): void {
    const row = this.sql<{ labels: string }>`SELECT labels FROM issues WHERE number = ${number}`[0];
    if (!row) return;
    const labels = (JSON.parse(row.labels) as string[]).filter((l) => l !== label);
    if (action === "add") labels.push(label);
    this.sql`UPDATE issues SET labels = ${JSON.stringify(labels)} WHERE number = ${number}`;
    this.version += 1;
  }

  /** When the stored state of an issue was current on GitHub (its `updated_at`), or null. */
  issueUpdatedMs(number: number): number | null {
    return (
      this.sql<{ updated_ms: number }>`SELECT updated_ms FROM issues WHERE number = ${number}`[0]
        ?.updated_ms ?? null
    );
  }

  /** The time of the latest recorded `unlabeled` event of `label` on an issue, or null. */
  lastUnlabeledMs(number: number, label: string): number | null {
    return (
      this.sql<{ at: number | null }>`SELECT MAX(created_ms) AS at FROM label_events
        WHERE number = ${number} AND label = ${label} AND action = 'unlabeled'`[0]?.at ?? null
    );
  }

  /** The stored labels of an issue, or null when it is not stored. */
  issueLabels(number: number): string[] | null {
    const row = this.sql<{ labels: string }>`SELECT labels FROM issues WHERE number = ${number}`[0];
    return row ? (JSON.parse(row.labels) as string[]) : null;
  }

  /** When switchyard began watching: closes before it are history, not kicks. */
  watchingSince(): string | null {
    return this.getMeta<string>("watchingSince") ?? null;
  }

  setWatchingSince(at: string): void {
    if (this.watchingSince() === null) this.setMeta("watchingSince", at);
  }

  /** Open cross-repository blockers of open issues: what a reconcile must re-read. */
  externalProbes(): Array<{ ref: string; etag: string | null }> {
    return this.sql<{ ref: string; etag: string | null }>`
      SELECT DISTINCT b.blocker AS ref, e.etag AS etag FROM blockers b
      JOIN issues i ON i.number = b.issue AND i.state = 'open'
      LEFT JOIN external e ON e.ref = b.blocker
      WHERE b.present = 1 AND b.blocker LIKE '%#%' AND (e.state IS NULL OR e.state = 'open')
      ORDER BY ref`;
  }

  setExternalEtag(ref: string, etag: string | null): void {
    this.sql`UPDATE external SET etag = ${etag} WHERE ref = ${ref}`;
  }

  /** Issue numbers with the time of their stored state, for finding what a full fetch lacks. */
  issueStamps(): Array<{ number: number; updatedMs: number }> {
    return this.sql<{
      number: number;
      updated_ms: number;
    }>`SELECT number, updated_ms FROM issues`.map((r) => ({
      number: r.number,
      updatedMs: r.updated_ms,
    }));
  }

  /**
   * Closes learned after `afterSeq` (the producer watermark) that happened after switchyard
   * began watching: the causes the producer has not materialized yet.
   */
  pendingCloses(afterSeq: number): { causes: IssueRef[]; maxSeq: number } {
    const since = this.watchingSince();
    const sinceMs = since === null ? Number.NEGATIVE_INFINITY : ms(since);
    let maxSeq = afterSeq;
    const causes: IssueRef[] = [];
    for (const r of this.sql<{ number: number; closed_at: string | null; closed_seq: number }>`
      SELECT number, closed_at, closed_seq FROM issues WHERE closed_seq > ${afterSeq} ORDER BY closed_seq`) {
      maxSeq = Math.max(maxSeq, r.closed_seq);
      if (r.closed_at !== null && ms(r.closed_at) > sinceMs) causes.push(r.number);
    }
    for (const r of this.sql<{ ref: string; closed_at: string | null; closed_seq: number }>`
      SELECT ref, closed_at, closed_seq FROM external WHERE closed_seq > ${afterSeq} ORDER BY closed_seq`) {
      maxSeq = Math.max(maxSeq, r.closed_seq);
      if (r.closed_at !== null && ms(r.closed_at) > sinceMs) causes.push(decodeRef(r.ref));
    }
    return { causes, maxSeq };
  }

  // --- reading ----------------------------------------------------------------------------

  /** The stored graph in the snapshot format of spec 3.1, issues ascending. */
  snapshot(now?: string): Snapshot {
    const identity = this.identity();
    const parents = new Map<number, IssueRef>();
    for (const row of this.sql<{ child: number; parent: string }>`
      SELECT child, parent FROM parents WHERE parent IS NOT NULL`) {
      parents.set(row.child, decodeRef(row.parent));
    }
    const blockers = new Map<number, IssueRef[]>();
    for (const row of this.sql<{ issue: number; blocker: string }>`
      SELECT issue, blocker FROM blockers WHERE present = 1 ORDER BY issue, blocker`) {
      const list = blockers.get(row.issue);
      if (list) list.push(decodeRef(row.blocker));
      else blockers.set(row.issue, [decodeRef(row.blocker)]);
    }
    const events = new Map<number, NonNullable<SnapshotIssue["labelEvents"]>>();
    for (const row of this.sql<{
      number: number;
      label: string;
      action: string;
      actor: string | null;
      created_at: string;
    }>`
      SELECT number, label, action, actor, created_at FROM label_events ORDER BY number, created_ms, action`) {
      const event = {
        label: row.label,
        action: row.action as "labeled" | "unlabeled",
        actor: row.actor,
        createdAt: row.created_at,
      };
      const list = events.get(row.number);
      if (list) list.push(event);
      else events.set(row.number, [event]);
    }
    const issues: SnapshotIssue[] = this.sql<IssueRow>`SELECT * FROM issues ORDER BY number`.map(
      (r) => ({
        number: r.number,
        title: r.title,
        state: r.state as "open" | "closed",
        stateReason: r.state_reason as SnapshotIssue["stateReason"],
        createdAt: r.created_at,
        updatedAt: r.updated_at,
        closedAt: r.closed_at,
        labels: JSON.parse(r.labels) as string[],
        parent: parents.get(r.number) ?? null,
        blockedBy: blockers.get(r.number) ?? [],
        body: r.body,
        labelEvents: events.get(r.number) ?? [],
      }),
    );
    const external = this.sql<{ ref: string; state: string; closed_at: string | null }>`
      SELECT ref, state, closed_at FROM external ORDER BY ref`.map((r) => ({
      ref: r.ref,
      state: r.state as "open" | "closed",
      closedAt: r.closed_at,
    }));
    return {
      repo: identity?.fullName ?? "unknown/unknown",
      ...(now !== undefined ? { now } : {}),
      issues,
      external,
    };
  }

  markerComments(number: number) {
    return this.sql<MarkerCommentRow>`
      SELECT id, number, author, author_type, author_association, body, created_at FROM comments
      WHERE number = ${number} ORDER BY created_at, id`;
  }

  /** The marker comments of open issues, by issue then time: the IDD claims the fleet API respects. */
  openMarkerComments(): MarkerCommentRow[] {
    return this.sql<MarkerCommentRow>`
      SELECT c.id, c.number, c.author, c.author_type, c.author_association, c.body, c.created_at
      FROM comments c JOIN issues i ON i.number = c.number AND i.state = 'open'
      ORDER BY c.number, c.created_at, c.id`;
  }

  /** Deletes every stored row: the App was uninstalled or the repository removed from it. */
  wipe(): void {
    for (const table of [
      "issues",
      "tombstones",
      "parents",
      "blockers",
      "external",
      "label_events",
      "comments",
      "comment_tombstones",
      "outbox",
      "schedules",
      // The audit log names agents, their notes and who minted keys: it goes with the rest.
      "audit",
    ]) {
      this.storage.sql.exec(`DELETE FROM ${table}`);
    }
    this.storage.sql.exec(`DELETE FROM meta WHERE key NOT IN ('identity', 'generation')`);
    this.metaCache.clear();
    this.parsedConfig = null;
    this.version += 1;
  }
}
