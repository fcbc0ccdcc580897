import { canonicalRef, type IssueRef } from "../graph/refs.ts";
import { instantMs } from "../graph/time.ts";
import { parseCommentMarker } from "../idd/comment-markers.ts";
import type { GraphEvent, IssueRecord } from "./events.ts";
import { encodeRef, supersedes } from "./merge.ts";

/*
 * How each event changes a repository's stored graph, as a pure function: the store reads the
 * rows an event touches (`rowsTouched`), `mergeEvent` decides, and the store performs the writes
 * it returns. Every rule lives here: the time order of `supersedes`, tombstones (an issue or a
 * comment removed later is never brought back by an older event; an issue read from GitHub after
 * its removal is restored), close sequencing (each close numbered once, as it is learned),
 * detaches that name the parent they detach from, and which changes are graph changes (they wake
 * the producer).
 */

/** An issue as stored. `updatedMs` is `updatedAt` in milliseconds, the merge rule's stamp. */
export interface IssueRow {
  number: number;
  id: number | null;
  title: string;
  state: "open" | "closed";
  stateReason: string | null;
  createdAt: string;
  updatedAt: string;
  updatedMs: number;
  closedAt: string | null;
  labels: readonly string[];
  body: string | null;
  /** The sequence number of the close in force (see `closedSeq`), null while open. */
  closedSeq: number | null;
}

/** An issue removed at `atMs` (deleted or transferred away). */
export interface IssueTombstone {
  number: number;
  atMs: number;
}

/** The parent of `child` as of `atMs`: a stored reference, or null once detached. */
export interface ParentRow {
  child: number;
  parent: string | null;
  atMs: number;
}

/** A "blocked by" edge as of `atMs`; a removed edge stays as `present: false` to order later events. */
export interface BlockerRow {
  issue: number;
  blocker: string;
  present: boolean;
  atMs: number;
}

/** The state of an issue in another repository. */
export interface ExternalRow {
  ref: string;
  state: "open" | "closed";
  closedAt: string | null;
  atMs: number;
  closedSeq: number | null;
}

export interface LabelEventRow {
  number: number;
  label: string;
  action: "labeled" | "unlabeled";
  actor: string | null;
  createdAt: string;
  createdMs: number;
}

/** A comment that opens with a claim-protocol marker (no other comment is stored). */
export interface CommentRow {
  id: number;
  number: number;
  author: string;
  authorType: string;
  association: string | null;
  body: string;
  createdAt: string;
  updatedMs: number;
}

export interface CommentTombstone {
  id: number;
  atMs: number;
}

/** The stored rows an event touches (see `rowsTouched`), each table's rows in any order. */
export interface StoredRows {
  issues: readonly IssueRow[];
  tombstones: readonly IssueTombstone[];
  parents: readonly ParentRow[];
  blockers: readonly BlockerRow[];
  external: readonly ExternalRow[];
  labelEvents: readonly LabelEventRow[];
  comments: readonly CommentRow[];
  commentTombstones: readonly CommentTombstone[];
}

/** What `mergeEvent` needs to know: the touched rows and the repository's own settings. */
export interface Stored extends StoredRows {
  /** The repository's full name: references to its own issues are stored as numbers. */
  repo: string | null;
  /** Label events are kept for these labels only (the ones the graph rules read). */
  watchedLabels: ReadonlySet<string>;
  /** The last close sequence number handed out (0: none yet). */
  closedSeq: number;
}

/** Which rows an event touches: what the store reads before `mergeEvent`. */
export interface RowKeys {
  /** Issue numbers, or every issue (a label renamed or deleted). */
  issues: readonly number[] | "all";
  tombstones: readonly number[];
  /** Parent rows by child. */
  parents: readonly number[];
  /** Every blocker row of these issues. */
  blockers: readonly number[];
  external: readonly string[];
  /** The event's row, or the later ones of its issue, label and action (which supersede it). */
  labelEvents: ReadonlyArray<Omit<LabelEventRow, "actor" | "createdAt">>;
  comments: readonly number[];
  commentTombstones: readonly number[];
}

/** One row change for the store to carry out, in order. */
export type RowWrite =
  | { table: "issues"; op: "upsert"; row: IssueRow }
  | { table: "issues"; op: "labels"; number: number; labels: readonly string[] }
  | { table: "issues"; op: "delete"; number: number }
  | { table: "tombstones"; op: "upsert"; row: IssueTombstone }
  /** The issue was seen on GitHub after its removal: the tombstone goes. */
  | { table: "tombstones"; op: "delete"; number: number }
  | { table: "parents"; op: "upsert"; row: ParentRow }
  /**
   * The issue was removed at `atMs`: its own parent row goes, and a row naming it as parent is
   * detached as of then (kept, so a late attach older than the removal cannot bring a parent back).
   */
  | { table: "parents"; op: "issue-removed"; number: number; atMs: number }
  | { table: "blockers"; op: "upsert"; row: BlockerRow }
  /** Every blocker row naming the issue, as blocked or as blocker. */
  | { table: "blockers"; op: "delete-involving"; number: number }
  | { table: "external"; op: "upsert"; row: ExternalRow }
  | { table: "label_events"; op: "insert"; row: LabelEventRow }
  | { table: "label_events"; op: "delete-of-issue"; number: number }
  | { table: "comments"; op: "upsert"; row: CommentRow }
  | { table: "comments"; op: "delete"; id: number }
  | { table: "comments"; op: "delete-of-issue"; number: number }
  | { table: "comment_tombstones"; op: "upsert"; row: CommentTombstone }
  /** The close sequence counter moves to `value`. */
  | { table: "meta"; op: "closed-seq"; value: number };

export interface Change {
  /** What changed, for the audit log, e.g. `issue #3 updated`. */
  description: string;
  /** Whether the graph rules read what changed (state, labels, edges, label events, external states). */
  graph: boolean;
}

export interface MergeResult {
  writes: RowWrite[];
  /** Null when the event changed nothing that matters (its writes may still refresh stamps). */
  change: Change | null;
  /** An issue stored before went from open to closed or back. */
  stateChange: { number: number; state: "open" | "closed" } | null;
}

/** No rows of any table (a repository with nothing stored yet). */
export const NO_ROWS: StoredRows = {
  issues: [],
  tombstones: [],
  parents: [],
  blockers: [],
  external: [],
  labelEvents: [],
  comments: [],
  commentTombstones: [],
};

const NONE: RowKeys = {
  issues: [],
  tombstones: [],
  parents: [],
  blockers: [],
  external: [],
  labelEvents: [],
  comments: [],
  commentTombstones: [],
};

const numbers = (...refs: Array<IssueRef | null | undefined>): number[] =>
  refs.filter((r): r is number => typeof r === "number");

/** The rows `mergeEvent` looks at for `event`. */
export function rowsTouched(event: GraphEvent): RowKeys {
  switch (event.type) {
    case "issue":
      return { ...NONE, issues: [event.issue.number], tombstones: [event.issue.number] };
    case "issue-removed":
      return { ...NONE, issues: [event.number], tombstones: [event.number] };
    case "parent":
      return { ...NONE, tombstones: numbers(event.child, event.parent), parents: [event.child] };
    case "blockers":
      return { ...NONE, tombstones: [event.issue], blockers: [event.issue] };
    case "blocked-by":
      return { ...NONE, tombstones: numbers(event.issue, event.blocker), blockers: [event.issue] };
    case "external":
      return { ...NONE, external: [event.ref] };
    case "label-event":
      return {
        ...NONE,
        tombstones: [event.number],
        labelEvents: [
          {
            number: event.number,
            label: event.label,
            action: event.action,
            createdMs: instantMs(event.at),
          },
        ],
      };
    case "label-renamed":
    case "label-deleted":
      return { ...NONE, issues: "all" };
    case "comment":
      return {
        ...NONE,
        tombstones: [event.number],
        comments: [event.id],
        commentTombstones: [event.id],
      };
    case "comment-removed":
      return { ...NONE, comments: [event.id], commentTombstones: [event.id] };
    case "config-changed":
      return NONE;
  }
}

const NOTHING: MergeResult = { writes: [], change: null, stateChange: null };

const graphChange = (description: string): MergeResult => ({
  writes: [],
  change: { description, graph: true },
  stateChange: null,
});

const shown = (ref: string) => (ref.includes("#") ? ref : `#${ref}`);

/** True when an event stamped `atMs` about issue `number` happened no later than its removal. */
function removedSince(stored: Stored, number: number, atMs: number): boolean {
  const tombstone = stored.tombstones.find((t) => t.number === number);
  return tombstone !== undefined && atMs <= tombstone.atMs;
}

/** Events about an issue removed after they happened are stale: they must not bring it back. */
function aboutRemovedIssue(event: GraphEvent, stored: Stored): boolean {
  // Almost always so (a full reconcile merges every issue's events): nothing to parse or compare.
  if (stored.tombstones.length === 0) return false;
  const check = (ref: IssueRef | null | undefined, at: string) =>
    typeof ref === "number" && removedSince(stored, ref, instantMs(at));
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

/**
 * The sequence number of a close: the stored one for the same close (same `closedAt`), a new
 * one for a close not seen before — even when an intermediate reopen was lost or arrives late.
 * Numbering closes as switchyard learns them lets the producer materialize each exactly once.
 */
function closedSeq(
  state: string,
  closedAt: string | null,
  row: { state: string; closedAt: string | null; closedSeq: number | null } | undefined,
  stored: Stored,
  writes: RowWrite[],
): number | null {
  if (state !== "closed") return null;
  if (row?.state === "closed" && row.closedAt === closedAt && row.closedSeq !== null)
    return row.closedSeq;
  const next = stored.closedSeq + 1;
  writes.push({ table: "meta", op: "closed-seq", value: next });
  return next;
}

const sameLabels = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((l, i) => l === b[i]);

/**
 * An issue record over the stored row, unless what is stored is newer or the issue was removed
 * later. A record read from GitHub (`observedAt`) after the removal restores the issue and clears
 * its tombstone: GitHub saying the issue exists is newer evidence than the removal, however the
 * tombstone was stamped (a receipt time, a full reconcile that did not see it). A webhook's record
 * is ordered by `updatedAt` only, so a late redelivery cannot resurrect a deleted issue.
 */
function mergeIssue(
  issue: IssueRecord,
  observedAt: string | undefined,
  stored: Stored,
): MergeResult {
  const at = instantMs(issue.updatedAt);
  const tombstone = stored.tombstones.find((t) => t.number === issue.number);
  const restored =
    tombstone !== undefined && observedAt !== undefined && instantMs(observedAt) > tombstone.atMs;
  if (!restored && removedSince(stored, issue.number, at)) return NOTHING;
  const clear: RowWrite[] = restored
    ? [{ table: "tombstones", op: "delete", number: issue.number }]
    : [];
  const row = stored.issues.find((r) => r.number === issue.number);
  // The stored row is already as new (a tombstone written beside it): only the tombstone goes.
  const restoredOnly: MergeResult = {
    writes: clear,
    change: { description: `issue #${issue.number} restored`, graph: false },
    stateChange: null,
  };
  if (row && !supersedes(at, row.updatedMs)) return restored ? restoredOnly : NOTHING;
  // A source that did not say (a payload without `labels`, a reconcile without bodies) keeps
  // what is stored: an absent list is not an empty one.
  const labels = issue.labels ?? row?.labels ?? [];
  const body = issue.body === undefined ? (row?.body ?? null) : issue.body;
  if (
    row &&
    row.title === issue.title &&
    row.state === issue.state &&
    row.stateReason === issue.stateReason &&
    row.closedAt === issue.closedAt &&
    sameLabels(row.labels, labels) &&
    row.body === body &&
    row.updatedAt === issue.updatedAt &&
    (issue.id === null || row.id === issue.id)
  ) {
    return restored ? restoredOnly : NOTHING;
  }
  const writes: RowWrite[] = [...clear];
  const seq = closedSeq(issue.state, issue.closedAt, row, stored, writes);
  writes.push({
    table: "issues",
    op: "upsert",
    row: {
      number: issue.number,
      id: issue.id ?? row?.id ?? null,
      title: issue.title,
      state: issue.state,
      stateReason: issue.stateReason,
      createdAt: issue.createdAt,
      updatedAt: issue.updatedAt,
      updatedMs: at,
      closedAt: issue.closedAt,
      labels: [...labels],
      body,
      closedSeq: seq,
    },
  });
  const graph =
    !row ||
    row.state !== issue.state ||
    row.stateReason !== issue.stateReason ||
    row.closedAt !== issue.closedAt ||
    !sameLabels(row.labels, labels);
  return {
    writes,
    change: { description: `issue #${issue.number} ${restored ? "restored" : "updated"}`, graph },
    stateChange:
      row && row.state !== issue.state ? { number: issue.number, state: issue.state } : null,
  };
}

/** Every stored issue's labels rewritten (a label renamed or deleted on the repository). */
function rewriteLabels(
  stored: Stored,
  rewrite: (labels: readonly string[]) => string[],
  description: string,
): MergeResult {
  const writes: RowWrite[] = [];
  for (const row of stored.issues) {
    const after = rewrite(row.labels);
    if (!sameLabels(after, row.labels))
      writes.push({ table: "issues", op: "labels", number: row.number, labels: after });
  }
  return writes.length > 0 ? { ...graphChange(description), writes } : NOTHING;
}

/**
 * How `event` changes the stored rows it touches (`stored`, read by `rowsTouched`): the writes
 * that carry it out and the change it makes, if any. Pure and deterministic; applying the same
 * event twice writes what once did, and events that each carry their own time give the same
 * rows in any arrival order (close sequence numbers aside: they count arrivals).
 */
export function mergeEvent(event: GraphEvent, stored: Stored): MergeResult {
  if (aboutRemovedIssue(event, stored)) return NOTHING;
  const ref = (r: IssueRef) => encodeRef(stored.repo ? canonicalRef(r, stored.repo) : r);
  switch (event.type) {
    case "issue":
      return mergeIssue(event.issue, event.observedAt, stored);
    case "issue-removed": {
      const at = instantMs(event.at);
      const existed = stored.issues.some((r) => r.number === event.number);
      const before = stored.tombstones.find((t) => t.number === event.number)?.atMs;
      const n = event.number;
      const writes: RowWrite[] = [
        {
          table: "tombstones",
          op: "upsert",
          row: { number: n, atMs: before === undefined ? at : Math.max(before, at) },
        },
        { table: "issues", op: "delete", number: n },
        { table: "parents", op: "issue-removed", number: n, atMs: at },
        { table: "blockers", op: "delete-involving", number: n },
        { table: "label_events", op: "delete-of-issue", number: n },
        { table: "comments", op: "delete-of-issue", number: n },
      ];
      return {
        writes,
        change: existed ? { description: `issue #${n} removed`, graph: true } : null,
        stateChange: null,
      };
    }
    case "parent": {
      const at = instantMs(event.at);
      const parent = event.parent === null ? null : ref(event.parent);
      const row = stored.parents.find((r) => r.child === event.child);
      if (row && !supersedes(at, row.atMs)) return NOTHING;
      // A detach names the parent it detaches from. In the same second as the stored attach
      // elsewhere, that attach may be the later one (GitHub stamps to the second): the detach must
      // not undo it. A strictly later detach means the child was attached to the named parent in
      // between (that attach is not delivered yet) and has no parent since: it applies, or the
      // late attach, older than the detach, would win when it arrives.
      if (
        parent === null &&
        event.previous !== undefined &&
        row &&
        row.parent !== ref(event.previous) &&
        at <= row.atMs
      ) {
        return NOTHING;
      }
      const writes: RowWrite[] = [
        { table: "parents", op: "upsert", row: { child: event.child, parent, atMs: at } },
      ];
      if (row && row.parent === parent) return { ...NOTHING, writes };
      return {
        ...graphChange(
          parent === null
            ? `#${event.child} detached from its parent`
            : `#${event.child} is a sub-issue of ${shown(parent)}`,
        ),
        writes,
      };
    }
    case "blockers": {
      const at = instantMs(event.at);
      const wanted = new Set(event.blockers.map(ref));
      const rows = stored.blockers.filter((r) => r.issue === event.issue);
      const writes: RowWrite[] = [];
      const changed: string[] = [];
      for (const blocker of new Set([...wanted, ...rows.map((r) => r.blocker)])) {
        const row = rows.find((r) => r.blocker === blocker);
        if (row && !supersedes(at, row.atMs)) continue;
        const present = wanted.has(blocker);
        if (!row && !present) continue;
        writes.push({
          table: "blockers",
          op: "upsert",
          row: { issue: event.issue, blocker, present, atMs: at },
        });
        if ((row?.present ?? false) !== present)
          changed.push(`${present ? "+" : "-"}${shown(blocker)}`);
      }
      if (changed.length === 0) return { ...NOTHING, writes };
      return { ...graphChange(`#${event.issue} blockers ${changed.join(" ")}`), writes };
    }
    case "blocked-by": {
      const at = instantMs(event.at);
      const blocker = ref(event.blocker);
      const row = stored.blockers.find((r) => r.issue === event.issue && r.blocker === blocker);
      if (row && !supersedes(at, row.atMs)) return NOTHING;
      const writes: RowWrite[] = [
        {
          table: "blockers",
          op: "upsert",
          row: { issue: event.issue, blocker, present: event.present, atMs: at },
        },
      ];
      if (row && row.present === event.present) return { ...NOTHING, writes };
      return {
        ...graphChange(
          `#${event.issue} ${event.present ? "blocked by" : "no longer blocked by"} ${shown(blocker)}`,
        ),
        writes,
      };
    }
    case "external": {
      const at = instantMs(event.at);
      const row = stored.external.find((r) => r.ref === event.ref);
      if (row && !supersedes(at, row.atMs)) return NOTHING;
      const writes: RowWrite[] = [];
      const seq = closedSeq(event.state, event.closedAt, row, stored, writes);
      writes.push({
        table: "external",
        op: "upsert",
        row: {
          ref: event.ref,
          state: event.state,
          closedAt: event.closedAt,
          atMs: at,
          closedSeq: seq,
        },
      });
      if (row?.state !== event.state)
        return { ...graphChange(`${event.ref} is ${event.state}`), writes };
      // Closed again (a reopen in between went unseen): a new close, a new kick.
      if (seq !== null && seq !== row.closedSeq)
        return { ...graphChange(`${event.ref} closed again`), writes };
      return { ...NOTHING, writes };
    }
    case "label-event": {
      if (!stored.watchedLabels.has(event.label)) return NOTHING;
      const createdMs = instantMs(event.at);
      // Seen, or superseded: the rules read only the latest event of each issue, label and
      // action, so the store keeps only that one and an earlier event changes nothing.
      const seen = stored.labelEvents.some(
        (r) =>
          r.number === event.number &&
          r.label === event.label &&
          r.action === event.action &&
          r.createdMs >= createdMs,
      );
      if (seen) return NOTHING;
      return {
        ...graphChange(`#${event.number} ${event.action} ${event.label}`),
        writes: [
          {
            table: "label_events",
            op: "insert",
            row: {
              number: event.number,
              label: event.label,
              action: event.action,
              actor: event.actor,
              createdAt: event.at,
              createdMs,
            },
          },
        ],
      };
    }
    case "label-renamed":
      return rewriteLabels(
        stored,
        (labels) => labels.map((l) => (l === event.from ? event.to : l)),
        `label ${event.from} renamed to ${event.to}`,
      );
    case "label-deleted":
      return rewriteLabels(
        stored,
        (labels) => labels.filter((l) => l !== event.name),
        `label ${event.name} deleted`,
      );
    case "comment": {
      const at = instantMs(event.updatedAt);
      const gone = stored.commentTombstones.find((t) => t.id === event.id);
      if (gone && at <= gone.atMs) return NOTHING;
      const row = stored.comments.find((r) => r.id === event.id);
      if (row && !supersedes(at, row.updatedMs)) return NOTHING;
      const comment = (description: string, writes: RowWrite[]): MergeResult => ({
        writes,
        change: { description, graph: false },
        stateChange: null,
      });
      // Only comments that open with a claim-protocol marker carry IDD state (spec 5).
      if (parseCommentMarker(event.body).status === "none") {
        if (!row) return NOTHING;
        return comment(`comment ${event.id} no longer carries a marker`, [
          { table: "comments", op: "delete", id: event.id },
        ]);
      }
      // The same comment again (a replay, or a reconcile re-reading it): nothing to change.
      if (
        row &&
        at === row.updatedMs &&
        row.body === event.body &&
        (event.association ?? row.association) === row.association
      ) {
        return NOTHING;
      }
      // Who wrote it and when never change; an edit brings a new body (and maybe the association).
      return comment(`marker comment ${event.id} on #${event.number}`, [
        {
          table: "comments",
          op: "upsert",
          row: {
            id: event.id,
            number: row?.number ?? event.number,
            author: row?.author ?? event.author.login,
            authorType: row?.authorType ?? event.author.type,
            association: event.association ?? row?.association ?? null,
            body: event.body,
            createdAt: row?.createdAt ?? event.createdAt,
            updatedMs: at,
          },
        },
      ]);
    }
    case "comment-removed": {
      // Remembered, so a late `created`/`edited` delivery cannot bring a deleted marker back.
      const at = instantMs(event.at);
      const before = stored.commentTombstones.find((t) => t.id === event.id)?.atMs;
      const existed = stored.comments.some((r) => r.id === event.id);
      return {
        writes: [
          {
            table: "comment_tombstones",
            op: "upsert",
            row: { id: event.id, atMs: before === undefined ? at : Math.max(before, at) },
          },
          { table: "comments", op: "delete", id: event.id },
        ],
        change: existed ? { description: `comment ${event.id} removed`, graph: false } : null,
        stateChange: null,
      };
    }
    case "config-changed":
      return NOTHING;
  }
}
