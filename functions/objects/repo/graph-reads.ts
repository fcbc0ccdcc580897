import type { LabelNames } from "../../../shared/config/schema.ts";
import { CompactGraph } from "../../../shared/graph/compact.ts";
import type { IssueRef } from "../../../shared/graph/refs.ts";
import type { Snapshot, SnapshotIssue } from "../../../shared/graph/snapshot.ts";
import { instantMs } from "../../../shared/graph/time.ts";
import { decodeRef } from "../../../shared/ingest/merge.ts";
import { decodeRequires } from "../../../shared/queue/requires.ts";
import type { Sql } from "../sql.ts";

export type MarkerCommentRow = {
  id: number;
  number: number;
  author: string;
  author_type: string;
  author_association: string | null;
  body: string;
  created_at: string;
};

/**
 * The views of the stored graph: the snapshot the graph rules read, the closes the producer has
 * not materialized, what a reconcile must re-read, marker comments. Reads only (graph-store.ts
 * writes the graph tables).
 */
export class GraphReads {
  private readonly sql: Sql;
  /** The same database, for reads that stream rows one at a time instead of an array. */
  private readonly raw: SqlStorage;

  constructor(sql: Sql, raw: SqlStorage) {
    this.sql = sql;
    this.raw = raw;
  }

  /**
   * The stored graph as a compact graph (shared/graph/compact.ts), read from the tables at once:
   * see `fillCompact`.
   */
  compact(repo: string, labels: LabelNames): CompactGraph {
    const graph = new CompactGraph(repo, labels);
    for (const _ of this.fillCompact(graph)) {
      // every chunk, without pausing
    }
    return graph;
  }

  /**
   * Fills `graph` from the tables in chunks of at most `chunk` rows, pausing (yielding) after
   * each, so a caller can let other work in between: no array of rows, no issue objects and no
   * bodies are ever held. Each chunk is a query of its own, keyed by where the last one stopped.
   * Changes written between chunks must reach `graph` too (graph-store.ts applies them to the
   * graph being built): a row read later is read as it is then, and every change is an
   * overwrite or a maximum, so the graph ends equal to the tables.
   */
  *fillCompact(graph: CompactGraph, chunk = 5_000): Generator<void, void, void> {
    const rows = <Row extends Record<string, SqlStorageValue>>(
      query: string,
      ...values: SqlStorageValue[]
    ): Row[] => this.raw.exec<Row>(query, ...values).toArray();
    for (let after = -1; ; ) {
      const page = rows<{
        number: number;
        title: string;
        state: string;
        closed_at: string | null;
        labels: string;
        requires: string | null;
      }>(
        `SELECT number, title, state, closed_at, labels, requires FROM issues
          WHERE number > ? ORDER BY number LIMIT ?`,
        after,
        chunk,
      );
      for (const r of page) {
        graph.upsertIssue({
          number: r.number,
          title: r.title,
          state: r.state as "open" | "closed",
          closedAt: r.closed_at,
          labels: r.labels,
          requires: decodeRequires(r.requires),
        });
      }
      if (page.length < chunk) break;
      after = page[page.length - 1]!.number;
      yield;
    }
    for (let after = -1; ; ) {
      const page = rows<{ child: number; parent: string }>(
        `SELECT child, parent FROM parents WHERE parent IS NOT NULL AND child > ?
          ORDER BY child LIMIT ?`,
        after,
        chunk,
      );
      for (const r of page) graph.setParent(r.child, decodeRef(r.parent));
      if (page.length < chunk) break;
      after = page[page.length - 1]!.child;
      yield;
    }
    // Blockers and label events are read by whole issues: a chunk ends before its last issue
    // (unless it is the final one), and the next starts with that issue.
    for (let after = -1; ; ) {
      const page = rows<{ issue: number; blocker: string }>(
        `SELECT issue, blocker FROM blockers WHERE present = 1 AND issue > ?
          ORDER BY issue, blocker LIMIT ?`,
        after,
        chunk,
      );
      const last = page.length < chunk ? null : page[page.length - 1]!.issue;
      let issue = -1;
      let list: IssueRef[] = [];
      for (const r of page) {
        if (r.issue === last) break;
        if (r.issue !== issue) {
          if (list.length > 0) graph.setBlockers(issue, list);
          issue = r.issue;
          list = [];
        }
        list.push(decodeRef(r.blocker));
      }
      if (list.length > 0) graph.setBlockers(issue, list);
      if (last === null) break;
      if (issue === -1) throw new Error(`issue #${last} has more than ${chunk} blockers`);
      after = issue;
      yield;
    }
    for (let after = ""; ; ) {
      const page = rows<{ ref: string; state: string; closed_at: string | null }>(
        `SELECT ref, state, closed_at FROM external WHERE ref > ? ORDER BY ref LIMIT ?`,
        after,
        chunk,
      );
      for (const r of page) graph.setExternal(r.ref, r.state as "open" | "closed", r.closed_at);
      if (page.length < chunk) break;
      after = page[page.length - 1]!.ref;
      yield;
    }
    for (let after = -1; ; ) {
      const page = rows<{ number: number; label: string; action: string; created_ms: number }>(
        `SELECT number, label, action, created_ms FROM label_events WHERE number > ?
          ORDER BY number, created_ms, action LIMIT ?`,
        after,
        chunk,
      );
      const last = page.length < chunk ? null : page[page.length - 1]!.number;
      let done = -1;
      for (const r of page) {
        if (r.number === last) break;
        graph.labelEvent(
          r.number,
          r.label,
          r.action as "labeled" | "unlabeled",
          r.created_ms,
          true,
        );
        done = r.number;
      }
      if (last === null) break;
      if (done === -1) throw new Error(`issue #${last} has more than ${chunk} label events`);
      after = done;
      yield;
    }
  }

  /**
   * The stored graph in the snapshot format of spec 3.1, issues ascending, without bodies (what
   * the rules read from a body is in `requires`). Every issue at once, as objects: the graph
   * rules in the Worker read the compact graph (`compact`) instead, and the status page's
   * picture reads only the issues it draws (`snapshotIssues`); this is for tests and tools.
   */
  snapshot(repo: string | null, now?: string): Snapshot {
    const issues = this.issuesAsSnapshot(null);
    const external = this.sql<{ ref: string; state: string; closed_at: string | null }>`
      SELECT ref, state, closed_at FROM external ORDER BY ref`.map((r) => ({
      ref: r.ref,
      state: r.state as "open" | "closed",
      closedAt: r.closed_at,
    }));
    return {
      repo: repo ?? "unknown/unknown",
      ...(now !== undefined ? { now } : {}),
      issues,
      external,
    };
  }

  /**
   * The issues numbered `numbers` (those stored), ascending, as `snapshot` spells them: a few
   * issues read by number (in chunks of 100 parameters) instead of every issue. The status
   * page's picture reads the issues it draws this way.
   */
  snapshotIssues(numbers: Iterable<number>): SnapshotIssue[] {
    const wanted = [...new Set(numbers)].sort((a, b) => a - b);
    const issues: SnapshotIssue[] = [];
    for (let from = 0; from < wanted.length; from += 100) {
      issues.push(...this.issuesAsSnapshot(wanted.slice(from, from + 100)));
    }
    return issues;
  }

  /** Every stored issue (`numbers` null) or those numbered, ascending, as `snapshot` spells them. */
  private issuesAsSnapshot(numbers: number[] | null): SnapshotIssue[] {
    const only = (column: string) =>
      numbers === null ? "" : ` AND ${column} IN (${numbers.map(() => "?").join(", ")})`;
    const rows = <Row extends Record<string, SqlStorageValue>>(query: string): Row[] =>
      this.raw.exec<Row>(query, ...(numbers ?? [])).toArray();
    const parents = new Map<number, IssueRef>();
    for (const r of rows<{ child: number; parent: string }>(
      `SELECT child, parent FROM parents WHERE parent IS NOT NULL${only("child")}`,
    ))
      parents.set(r.child, decodeRef(r.parent));
    const blockers = new Map<number, IssueRef[]>();
    for (const r of rows<{ issue: number; blocker: string }>(
      `SELECT issue, blocker FROM blockers WHERE present = 1${only("issue")} ORDER BY issue, blocker`,
    )) {
      const list = blockers.get(r.issue);
      if (list) list.push(decodeRef(r.blocker));
      else blockers.set(r.issue, [decodeRef(r.blocker)]);
    }
    const events = new Map<number, NonNullable<SnapshotIssue["labelEvents"]>>();
    for (const r of rows<{
      number: number;
      label: string;
      action: string;
      actor: string | null;
      created_at: string;
    }>(
      `SELECT number, label, action, actor, created_at FROM label_events WHERE 1 = 1${only("number")}
        ORDER BY number, created_ms, action`,
    )) {
      const event = {
        label: r.label,
        action: r.action as "labeled" | "unlabeled",
        actor: r.actor,
        createdAt: r.created_at,
      };
      const list = events.get(r.number);
      if (list) list.push(event);
      else events.set(r.number, [event]);
    }
    return rows<{
      number: number;
      title: string;
      state: string;
      state_reason: string | null;
      created_at: string;
      updated_at: string;
      closed_at: string | null;
      labels: string;
    }>(
      `SELECT number, title, state, state_reason, created_at, updated_at, closed_at, labels
        FROM issues WHERE 1 = 1${only("number")} ORDER BY number`,
    ).map((r) => ({
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
      labelEvents: events.get(r.number) ?? [],
    }));
  }

  /**
   * Closes learned after `afterSeq` (the producer watermark) that happened after `since` (when
   * switchyard began watching): the causes the producer has not materialized yet.
   */
  pendingCloses(afterSeq: number, since: string | null): { causes: IssueRef[]; maxSeq: number } {
    const sinceMs = since === null ? Number.NEGATIVE_INFINITY : instantMs(since);
    let maxSeq = afterSeq;
    const causes: IssueRef[] = [];
    for (const r of this.sql<{ number: number; closed_at: string | null; closed_seq: number }>`
      SELECT number, closed_at, closed_seq FROM issues WHERE closed_seq > ${afterSeq} ORDER BY closed_seq`) {
      maxSeq = Math.max(maxSeq, r.closed_seq);
      if (r.closed_at !== null && instantMs(r.closed_at) > sinceMs) causes.push(r.number);
    }
    for (const r of this.sql<{ ref: string; closed_at: string | null; closed_seq: number }>`
      SELECT ref, closed_at, closed_seq FROM external WHERE closed_seq > ${afterSeq} ORDER BY closed_seq`) {
      maxSeq = Math.max(maxSeq, r.closed_seq);
      if (r.closed_at !== null && instantMs(r.closed_at) > sinceMs) causes.push(decodeRef(r.ref));
    }
    return { causes, maxSeq };
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

  /** When the stored state of an issue was current on GitHub (its `updated_at`), or null. */
  issueUpdatedMs(number: number): number | null {
    return (
      this.sql<{ updated_ms: number }>`SELECT updated_ms FROM issues WHERE number = ${number}`[0]
        ?.updated_ms ?? null
    );
  }

  /** The stored labels of an issue, or null when it is not stored. */
  issueLabels(number: number): string[] | null {
    const row = this.sql<{ labels: string }>`SELECT labels FROM issues WHERE number = ${number}`[0];
    return row ? (JSON.parse(row.labels) as string[]) : null;
  }

  /** The time of the latest recorded `unlabeled` event of `label` on an issue, or null. */
  lastUnlabeledMs(number: number, label: string): number | null {
    return (
      this.sql<{ at: number | null }>`SELECT MAX(created_ms) AS at FROM label_events
        WHERE number = ${number} AND label = ${label} AND action = 'unlabeled'`[0]?.at ?? null
    );
  }

  markerComments(number: number): MarkerCommentRow[] {
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

  /** An issue's stored state, close time and `updated_at`, or null when it is not stored. */
  issueState(
    number: number,
  ): { state: "open" | "closed"; closedAt: string | null; updatedAt: string } | null {
    const row = this.sql<{ state: string; closed_at: string | null; updated_at: string }>`
      SELECT state, closed_at, updated_at FROM issues WHERE number = ${number}`[0];
    return row
      ? {
          state: row.state as "open" | "closed",
          closedAt: row.closed_at,
          updatedAt: row.updated_at,
        }
      : null;
  }

  /**
   * The cross-repository blockers among `refs` that a present edge names, keyed by lower-cased
   * ref (GitHub names are case-insensitive), valued by the spelling stored on the edge.
   */
  presentBlockerRefs(refs: readonly string[]): Map<string, string> {
    const wanted = new Set(refs.map((r) => r.toLowerCase()));
    const out = new Map<string, string>();
    if (wanted.size === 0) return out;
    for (const row of this.sql<{ blocker: string }>`
      SELECT DISTINCT blocker FROM blockers WHERE present = 1 AND blocker LIKE '%#%'`) {
      const key = row.blocker.toLowerCase();
      if (wanted.has(key)) out.set(key, row.blocker);
    }
    return out;
  }

  /** Open issues that have a stored marker comment or carry `label`, ascending. */
  openIssuesWithMarkersOrLabel(label: string): number[] {
    return this.sql<{ number: number }>`
      SELECT i.number FROM issues i WHERE i.state = 'open' AND (
        EXISTS (SELECT 1 FROM comments c WHERE c.number = i.number)
        OR EXISTS (SELECT 1 FROM json_each(i.labels) l WHERE l.value = ${label})
      ) ORDER BY i.number`.map((r) => r.number);
  }

  /** Which of `numbers` are stored open issues, ascending. */
  openAmong(numbers: readonly number[]): number[] {
    const wanted = new Set(numbers);
    if (wanted.size === 0) return [];
    return this.sql<{
      number: number;
    }>`SELECT number FROM issues WHERE state = 'open' ORDER BY number`
      .map((r) => r.number)
      .filter((n) => wanted.has(n));
  }
}
