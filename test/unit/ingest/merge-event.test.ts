// The merge rules as a pure function: example cases, and properties over random histories of a
// few issues (idempotence, order-insensitivity, and that the rows `rowsTouched` names suffice).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatInstant } from "../../../shared/graph/time.ts";
import type { GraphEvent, IssueRecord } from "../../../shared/ingest/events.ts";
import {
  type MergeResult,
  mergeEvent,
  NO_ROWS,
  type RowKeys,
  type RowWrite,
  rowsTouched,
  type Stored,
  type StoredRows,
} from "../../../shared/ingest/merge-event.ts";

const REPO = "acme/rocket";
const WATCHED = new Set(["agent:ready", "agent:processing", "agent:stuck", "agent:needs-human"]);

/** Every row of a repository, in memory: what the SQL store holds, table by table. */
interface Rows extends StoredRows {
  closedSeq: number;
}

const empty = (): Rows => ({ ...NO_ROWS, closedSeq: 0 });

/** What the store reads for `keys` (the model of graph-store.ts `read`). */
function read(rows: Rows, keys: RowKeys): StoredRows {
  const numbers = keys.issues;
  return {
    issues: numbers === "all" ? rows.issues : rows.issues.filter((r) => numbers.includes(r.number)),
    tombstones: rows.tombstones.filter((r) => keys.tombstones.includes(r.number)),
    parents: rows.parents.filter((r) => keys.parents.includes(r.child)),
    blockers: rows.blockers.filter((r) => keys.blockers.includes(r.issue)),
    external: rows.external.filter((r) => keys.external.includes(r.ref)),
    labelEvents: rows.labelEvents.filter((r) =>
      keys.labelEvents.some(
        (k) =>
          k.number === r.number &&
          k.label === r.label &&
          k.action === r.action &&
          r.createdMs >= k.createdMs,
      ),
    ),
    comments: rows.comments.filter((r) => keys.comments.includes(r.id)),
    commentTombstones: rows.commentTombstones.filter((r) => keys.commentTombstones.includes(r.id)),
  };
}

const stored = (rows: StoredRows, closedSeq: number): Stored => ({
  ...rows,
  repo: REPO,
  watchedLabels: WATCHED,
  closedSeq,
});

/** Carries out writes on the model (the model of graph-store.ts `write`). */
function perform(rows: Rows, writes: readonly RowWrite[]): Rows {
  const next: Rows = { ...rows };
  const upsert = <T>(list: readonly T[], row: T, same: (r: T) => boolean) => [
    ...list.filter((r) => !same(r)),
    row,
  ];
  for (const w of writes) {
    if (w.table === "meta") next.closedSeq = w.value;
    else if (w.table === "issues") {
      if (w.op === "upsert")
        next.issues = upsert(next.issues, w.row, (r) => r.number === w.row.number);
      else if (w.op === "labels")
        next.issues = next.issues.map((r) =>
          r.number === w.number ? { ...r, labels: w.labels } : r,
        );
      else next.issues = next.issues.filter((r) => r.number !== w.number);
    } else if (w.table === "tombstones") {
      if (w.op === "upsert")
        next.tombstones = upsert(next.tombstones, w.row, (r) => r.number === w.row.number);
      else next.tombstones = next.tombstones.filter((r) => r.number !== w.number);
    } else if (w.table === "parents") {
      if (w.op === "upsert")
        next.parents = upsert(next.parents, w.row, (r) => r.child === w.row.child);
      else
        next.parents = next.parents
          .filter((r) => r.child !== w.number)
          .map((r) =>
            r.parent === String(w.number)
              ? { ...r, parent: null, atMs: Math.max(r.atMs, w.atMs) }
              : r,
          );
    } else if (w.table === "blockers") {
      if (w.op === "upsert")
        next.blockers = upsert(
          next.blockers,
          w.row,
          (r) => r.issue === w.row.issue && r.blocker === w.row.blocker,
        );
      else
        next.blockers = next.blockers.filter(
          (r) => r.issue !== w.number && r.blocker !== String(w.number),
        );
    } else if (w.table === "external")
      next.external = upsert(next.external, w.row, (r) => r.ref === w.row.ref);
    else if (w.table === "label_events") {
      // Only the latest event of each issue, label and action is kept (as graph-store.ts does).
      if (w.op === "insert")
        next.labelEvents = [
          ...next.labelEvents.filter(
            (r) =>
              r.number !== w.row.number ||
              r.label !== w.row.label ||
              r.action !== w.row.action ||
              r.createdMs > w.row.createdMs,
          ),
          w.row,
        ];
      else next.labelEvents = next.labelEvents.filter((r) => r.number !== w.number);
    } else if (w.table === "comments") {
      if (w.op === "upsert") next.comments = upsert(next.comments, w.row, (r) => r.id === w.row.id);
      else if (w.op === "delete") next.comments = next.comments.filter((r) => r.id !== w.id);
      else next.comments = next.comments.filter((r) => r.number !== w.number);
    } else next.commentTombstones = upsert(next.commentTombstones, w.row, (r) => r.id === w.row.id);
  }
  return next;
}

function step(rows: Rows, event: GraphEvent): { rows: Rows; result: MergeResult } {
  const result = mergeEvent(event, stored(read(rows, rowsTouched(event)), rows.closedSeq));
  return { rows: perform(rows, result.writes), result };
}

const applyAll = (events: readonly GraphEvent[], rows = empty()) =>
  events.reduce((r, e) => step(r, e).rows, rows);

/**
 * Rows in a canonical order. Close sequence numbers count arrivals: only whether one is set.
 * With `detached: "links"`, a child without a parent compares the same whether its row is absent
 * or says since when: that time is the latest evidence taken (a detach, or the removal of a parent
 * whose attach came in later and was left out), so it depends on arrival order. Redeliveries of
 * the history's events are decided alike either way (the idempotence property checks them).
 */
function canonical(
  rows: Rows,
  { seqs, detached = "exact" }: { seqs: "exact" | "presence"; detached?: "exact" | "links" },
) {
  const by = <T>(list: readonly T[], key: (r: T) => string) =>
    [...list].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const seq = (s: number | null) => (seqs === "exact" ? s : s !== null);
  return {
    issues: by(rows.issues, (r) => String(r.number).padStart(4)).map((r) => ({
      ...r,
      closedSeq: seq(r.closedSeq),
    })),
    tombstones: by(rows.tombstones, (r) => String(r.number)),
    parents: by(
      rows.parents.filter((r) => detached === "exact" || r.parent !== null),
      (r) => String(r.child),
    ),
    blockers: by(rows.blockers, (r) => `${r.issue}/${r.blocker}`),
    external: by(rows.external, (r) => r.ref).map((r) => ({ ...r, closedSeq: seq(r.closedSeq) })),
    labelEvents: by(rows.labelEvents, (r) => `${r.number}/${r.label}/${r.action}/${r.createdMs}`),
    comments: by(rows.comments, (r) => String(r.id)),
    commentTombstones: by(rows.commentTombstones, (r) => String(r.id)),
    ...(seqs === "exact" ? { closedSeq: rows.closedSeq } : {}),
  };
}

// --- random histories ----------------------------------------------------------------------

const N = 3;
const T0 = Date.parse("2026-11-01T00:00:00Z");
const MARKER = "<!-- claimed-by: a c1 2026-11-29T10:00:00Z branch: issue/1-x supersedes: none -->";

type Action =
  | { kind: "close" | "reopen" | "delete" | "fetch"; n: number }
  | { kind: "label" | "unlabel"; n: number; label: string }
  | { kind: "attach" | "detach"; p: number; c: number }
  | { kind: "block" | "unblock"; n: number; b: number | string }
  | { kind: "external"; state: "open" | "closed" }
  | { kind: "comment"; n: number; marker: boolean }
  | { kind: "edit" | "uncomment"; pick: number };

const num = fc.integer({ min: 1, max: N });
const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constantFrom("close", "reopen"), n: num }),
  fc.record({ kind: fc.constant("delete"), n: num }),
  // A reconcile reads an issue: GitHub says it exists now (its record carries `observedAt`).
  fc.record({ kind: fc.constant("fetch"), n: num }),
  fc.record({
    kind: fc.constantFrom("label", "unlabel"),
    n: num,
    label: fc.constantFrom("agent:hold", "agent:processing", "bug"),
  }),
  fc.record({ kind: fc.constantFrom("attach", "detach"), p: num, c: num }),
  fc.record({
    kind: fc.constantFrom("block", "unblock"),
    n: num,
    // Own issues by number, as webhooks and reconciles spell them (canonicalRef): the tombstone
    // check reads numbers only, so a long spelling of a removed issue would slip past it.
    b: fc.oneof(num, fc.constant("acme/sdk#7")),
  }),
  fc.record({ kind: fc.constant("external"), state: fc.constantFrom("open", "closed") }),
  fc.record({ kind: fc.constant("comment"), n: num, marker: fc.boolean() }),
  fc.record({ kind: fc.constantFrom("edit", "uncomment"), pick: fc.nat() }),
) as fc.Arbitrary<Action>;

/**
 * Plays actions on a tiny GitHub, one a second (GitHub stamps to the second), and returns the
 * events its webhooks carry. Actions GitHub would refuse (a second parent, a gone issue) are
 * skipped. Issue records always carry labels here: a record without them keeps what is stored,
 * which is only right when it arrives after the record that set them.
 */
function history(actions: readonly Action[]): GraphEvent[] {
  type Issue = IssueRecord & { labels: string[]; parent: number | null; blockers: Set<string> };
  const issues = new Map<number, Issue>();
  for (let n = 1; n <= N; n++) {
    issues.set(n, {
      number: n,
      id: 100 + n,
      title: `Issue ${n}`,
      state: "open",
      stateReason: null,
      createdAt: formatInstant(T0),
      updatedAt: formatInstant(T0),
      closedAt: null,
      labels: [],
      body: null,
      parent: null,
      blockers: new Set(),
    });
  }
  const comments: Array<{ id: number; n: number; marker: boolean; createdAt: string }> = [];
  const events: GraphEvent[] = [...issues.values()].map((i) => ({
    type: "issue",
    issue: record(i),
  }));
  function record(i: Issue): IssueRecord {
    const { parent: _p, blockers: _b, ...rest } = i;
    return { ...rest, labels: [...i.labels] };
  }
  let clock = T0;
  let externalState: "open" | "closed" = "open";
  let nextComment = 1;
  for (const a of actions) {
    clock += 1000;
    const at = formatInstant(clock);
    const touch = (i: Issue) => {
      i.updatedAt = at;
      events.push({ type: "issue", issue: record(i) });
    };
    switch (a.kind) {
      case "close":
      case "reopen": {
        const i = issues.get(a.n);
        if (!i || (i.state === "closed") === (a.kind === "close")) break;
        i.state = a.kind === "close" ? "closed" : "open";
        i.stateReason = a.kind === "close" ? "completed" : "reopened";
        i.closedAt = a.kind === "close" ? at : null;
        touch(i);
        break;
      }
      case "fetch": {
        const i = issues.get(a.n);
        if (i) events.push({ type: "issue", issue: record(i), observedAt: at });
        break;
      }
      case "delete": {
        if (!issues.has(a.n)) break;
        issues.delete(a.n);
        for (const other of issues.values()) {
          if (other.parent === a.n) other.parent = null;
          other.blockers.delete(String(a.n));
        }
        for (const c of comments.filter((c) => c.n === a.n))
          comments.splice(comments.indexOf(c), 1);
        events.push({ type: "issue-removed", number: a.n, at });
        break;
      }
      case "label":
      case "unlabel": {
        const i = issues.get(a.n);
        if (!i || i.labels.includes(a.label) === (a.kind === "label")) break;
        i.labels =
          a.kind === "label" ? [...i.labels, a.label] : i.labels.filter((l) => l !== a.label);
        touch(i);
        events.push({
          type: "label-event",
          number: a.n,
          label: a.label,
          action: a.kind === "label" ? "labeled" : "unlabeled",
          actor: "alice",
          at,
        });
        break;
      }
      case "attach": {
        const child = issues.get(a.c);
        if (!child || !issues.has(a.p) || a.p === a.c || child.parent !== null) break;
        child.parent = a.p;
        events.push({ type: "parent", child: a.c, parent: a.p, at });
        break;
      }
      case "detach": {
        const child = issues.get(a.c);
        if (!child || child.parent !== a.p) break;
        child.parent = null;
        events.push({ type: "parent", child: a.c, parent: null, previous: a.p, at });
        break;
      }
      case "block":
      case "unblock": {
        const i = issues.get(a.n);
        const key = String(a.b);
        if (!i || key === String(a.n)) break;
        if (typeof a.b === "number" && !issues.has(a.b)) break;
        if (i.blockers.has(key) === (a.kind === "block")) break;
        if (a.kind === "block") i.blockers.add(key);
        else i.blockers.delete(key);
        events.push({
          type: "blocked-by",
          issue: a.n,
          blocker: a.b,
          present: a.kind === "block",
          at,
        });
        break;
      }
      case "external": {
        if (externalState === a.state) break;
        externalState = a.state;
        events.push({
          type: "external",
          ref: "acme/sdk#7",
          state: a.state,
          closedAt: a.state === "closed" ? at : null,
          at,
        });
        break;
      }
      case "comment": {
        if (!issues.has(a.n)) break;
        const c = { id: nextComment++, n: a.n, marker: a.marker, createdAt: at };
        comments.push(c);
        events.push(commentEvent(c, at, "first"));
        break;
      }
      case "edit":
      case "uncomment": {
        if (comments.length === 0) break;
        const c = comments[a.pick % comments.length]!;
        if (a.kind === "edit") events.push(commentEvent(c, at, "edited"));
        else {
          comments.splice(comments.indexOf(c), 1);
          events.push({ type: "comment-removed", id: c.id, at });
        }
        break;
      }
    }
  }
  return events;
}

// A comment keeps its kind (marker or not) across edits: see the note on marker edits below.
function commentEvent(
  c: { id: number; n: number; marker: boolean; createdAt: string },
  at: string,
  version: string,
): GraphEvent {
  return {
    type: "comment",
    id: c.id,
    number: c.n,
    author: { login: "alice", type: "User" },
    association: "MEMBER",
    body: c.marker ? `${MARKER}\n${version} ${at}` : `plain words, ${version}`,
    createdAt: c.createdAt,
    updatedAt: at,
  };
}

const shuffledWithSeeds = <T>(list: readonly T[], seeds: readonly number[]) =>
  list
    .map((x, i) => ({ x, k: seeds[i % seeds.length]! * 1_000 + i }))
    .sort((a, b) => a.k - b.k)
    .map((p) => p.x);

// --- examples ------------------------------------------------------------------------------

function issue(number: number, patch: Partial<IssueRecord> = {}): IssueRecord {
  return {
    number,
    id: 100_000 + number,
    title: `Issue ${number}`,
    state: "open",
    stateReason: null,
    createdAt: "2026-11-01T00:00:00Z",
    updatedAt: "2026-11-28T00:00:00Z",
    closedAt: null,
    labels: [],
    body: null,
    ...patch,
  };
}

describe("mergeEvent", () => {
  it("an issue record without labels keeps the stored labels; a new issue without them has none", () => {
    const rows = applyAll([{ type: "issue", issue: issue(1, { labels: ["agent:hold"] }) }]);
    const { labels: _omit, ...withoutLabels } = issue(1, {
      title: "Renamed",
      updatedAt: "2026-11-28T01:00:00Z",
    });
    const { rows: after, result } = step(rows, { type: "issue", issue: withoutLabels });
    expect(after.issues[0]).toMatchObject({ title: "Renamed", labels: ["agent:hold"] });
    expect(result.change).toEqual({ description: "issue #1 updated", graph: false });
    const { labels: _none, ...fresh } = issue(2);
    expect(step(empty(), { type: "issue", issue: fresh }).rows.issues[0]!.labels).toEqual([]);
  });

  it("keeps only the latest label event of an issue, label and action; an earlier one changes nothing", () => {
    const labeled = (at: string): GraphEvent => ({
      type: "label-event",
      number: 3,
      label: "agent:ready",
      action: "labeled",
      actor: "alice",
      at,
    });
    const rows = applyAll([labeled("2026-11-28T00:00:00Z"), labeled("2026-11-29T00:00:00Z")]);
    expect(rows.labelEvents.map((r) => r.createdAt)).toEqual(["2026-11-29T00:00:00Z"]);
    const late = step(rows, labeled("2026-11-27T00:00:00Z"));
    expect(late.result).toEqual({ writes: [], change: null, stateChange: null });
  });

  it("an older record never regresses a newer one, and a removed issue is not brought back", () => {
    const closed = issue(2, {
      state: "closed",
      stateReason: "completed",
      closedAt: "2026-11-29T10:00:00Z",
      updatedAt: "2026-11-29T10:00:00Z",
    });
    const rows = applyAll([{ type: "issue", issue: closed }]);
    expect(step(rows, { type: "issue", issue: issue(2) }).result).toEqual({
      writes: [],
      change: null,
      stateChange: null,
    });
    const removed = applyAll([
      { type: "issue", issue: issue(8) },
      { type: "blocked-by", issue: 9, blocker: 8, present: true, at: "2026-11-28T00:00:00Z" },
      { type: "issue-removed", number: 8, at: "2026-11-29T00:00:00Z" },
      { type: "issue", issue: issue(8, { updatedAt: "2026-11-28T12:00:00Z" }) },
    ]);
    expect(removed.issues).toEqual([]);
    expect(removed.blockers).toEqual([]);
    expect(removed.tombstones).toEqual([{ number: 8, atMs: Date.parse("2026-11-29T00:00:00Z") }]);
  });

  it("a fetched record newer than the removal restores the issue; a webhook record stays out", () => {
    const removed = applyAll([
      { type: "issue", issue: issue(8, { labels: ["agent:hold"] }) },
      { type: "issue-removed", number: 8, at: "2026-11-29T00:00:00Z" },
    ]);
    const late = { type: "issue", issue: issue(8, { labels: ["agent:hold"] }) } as const;
    // A late webhook delivery (its updated_at older than the removal) cannot resurrect it.
    expect(step(removed, late).result).toEqual({ writes: [], change: null, stateChange: null });
    // Nor can a fetch that began no later than the removal (it may have read the issue before).
    expect(step(removed, { ...late, observedAt: "2026-11-29T00:00:00Z" }).result.writes).toEqual(
      [],
    );
    // A fetch that began after it: GitHub says the issue exists, newer evidence than the removal.
    const fetched = { ...late, observedAt: "2026-11-29T00:00:01Z" };
    const restored = step(removed, fetched);
    expect(restored.rows.tombstones).toEqual([]);
    expect(restored.rows.issues.map((r) => [r.number, r.labels])).toEqual([[8, ["agent:hold"]]]);
    expect(restored.result.change).toEqual({ description: "issue #8 restored", graph: true });
    // Idempotent, and the edges the same fetch saw are taken again.
    expect(step(restored.rows, fetched).result.writes).toEqual([]);
    const linked = applyAll(
      [{ type: "blocked-by", issue: 9, blocker: 8, present: true, at: "2026-11-28T00:00:00Z" }],
      restored.rows,
    );
    expect(linked.blockers.map((b) => b.blocker)).toEqual(["8"]);
    // A fetched record clears a tombstone even when the stored row is already as new.
    const kept = applyAll([
      { type: "issue", issue: issue(4) },
      { type: "issue-removed", number: 4, at: "2026-11-29T00:00:00Z" },
    ]);
    const row = applyAll([{ type: "issue", issue: issue(4) }]).issues;
    const both = step(
      { ...kept, issues: row },
      {
        type: "issue",
        issue: issue(4),
        observedAt: "2026-11-30T00:00:00Z",
      },
    );
    expect(both.rows.tombstones).toEqual([]);
    expect(both.rows.issues).toEqual(row);
  });

  it("numbers each close once, and a close at a new time (its reopen lost) anew", () => {
    const close = (at: string) =>
      ({
        type: "external",
        ref: "acme/sdk#1",
        state: "closed",
        closedAt: at,
        at,
      }) as const;
    let rows = applyAll([close("2026-11-29T10:00:00Z")]);
    expect(rows.external[0]!.closedSeq).toBe(1);
    rows = applyAll([close("2026-11-29T10:00:00Z")], rows);
    expect(rows.external[0]!.closedSeq).toBe(1);
    const again = step(rows, close("2026-11-29T11:00:00Z"));
    expect(again.rows.external[0]!.closedSeq).toBe(2);
    expect(again.rows.closedSeq).toBe(2);
    expect(again.result.change).toEqual({ description: "acme/sdk#1 closed again", graph: true });
  });

  it("a detach that names another parent does not undo an attach of the same second", () => {
    const rows = applyAll([
      { type: "parent", child: 3, parent: 1, at: "2026-11-29T10:00:00Z" },
      { type: "parent", child: 3, parent: null, previous: 1, at: "2026-11-29T11:00:00Z" },
      { type: "parent", child: 3, parent: 2, at: "2026-11-29T11:00:00Z" },
    ]);
    // Delivered after the attach it preceded: the same second, so the attach may be the later one.
    const late = step(rows, {
      type: "parent",
      child: 3,
      parent: null,
      previous: 1,
      at: "2026-11-29T11:00:00Z",
    });
    expect(late.result.writes).toEqual([]);
    expect(late.rows.parents).toEqual([
      { child: 3, parent: "2", atMs: Date.parse("2026-11-29T11:00:00Z") },
    ]);
  });

  it("a later detach from a parent not yet seen applies: the attach it ends arrives after it", () => {
    // GitHub: #1 under #2; #2 deleted (the link goes silently); #1 under #3; #1 detached from #3.
    // Delivered: the first attach, the detach, the deletion, then the attach to #3.
    const attachTo2: GraphEvent = {
      type: "parent",
      child: 1,
      parent: 2,
      at: "2026-11-29T10:00:02Z",
    };
    const removed2: GraphEvent = { type: "issue-removed", number: 2, at: "2026-11-29T10:00:03Z" };
    const attachTo3: GraphEvent = {
      type: "parent",
      child: 1,
      parent: 3,
      at: "2026-11-29T10:00:05Z",
    };
    const detach: GraphEvent = {
      type: "parent",
      child: 1,
      parent: null,
      previous: 3,
      at: "2026-11-29T10:00:06Z",
    };
    const detached = [{ child: 1, parent: null, atMs: Date.parse("2026-11-29T10:00:06Z") }];
    expect(applyAll([attachTo2, removed2, attachTo3, detach]).parents).toEqual(detached);
    expect(applyAll([attachTo2, detach, removed2, attachTo3]).parents).toEqual(detached);
  });

  it("a parent's removal detaches its children as of then: an older attach redelivered stays out", () => {
    const at = (s: number) => `2026-11-29T10:00:0${s}Z`;
    const attachTo1: GraphEvent = { type: "parent", child: 2, parent: 1, at: at(1) };
    const rows = applyAll([
      attachTo1,
      { type: "parent", child: 2, parent: null, previous: 1, at: at(2) },
      { type: "parent", child: 2, parent: 3, at: at(3) },
      { type: "issue-removed", number: 3, at: at(4) },
    ]);
    expect(rows.parents).toEqual([{ child: 2, parent: null, atMs: Date.parse(at(4)) }]);
    expect(step(rows, attachTo1).result.writes).toEqual([]);
  });

  it("says which changes are graph changes: a title or a comment is not, a state or an edge is", () => {
    const rows = applyAll([{ type: "issue", issue: issue(1) }]);
    const graph = (event: GraphEvent) => step(rows, event).result.change?.graph;
    expect(
      graph({ type: "issue", issue: issue(1, { title: "x", updatedAt: "2026-11-28T01:00:00Z" }) }),
    ).toBe(false);
    expect(
      graph({
        type: "issue",
        issue: issue(1, { labels: ["agent:hold"], updatedAt: "2026-11-28T01:00:00Z" }),
      }),
    ).toBe(true);
    expect(
      graph({
        type: "comment",
        id: 5,
        number: 1,
        author: { login: "a", type: "User" },
        body: MARKER,
        createdAt: "2026-11-29T10:00:00Z",
        updatedAt: "2026-11-29T10:00:00Z",
      }),
    ).toBe(false);
    expect(
      graph({
        type: "blocked-by",
        issue: 1,
        blocker: 2,
        present: true,
        at: "2026-11-29T10:00:00Z",
      }),
    ).toBe(true);
    expect(
      graph({
        type: "label-event",
        number: 1,
        label: "bug",
        action: "labeled",
        actor: null,
        at: "2026-11-29T10:00:00Z",
      }),
    ).toBeUndefined(); // not a watched label: not stored at all
    expect(step(rows, { type: "label-renamed", from: "bug", to: "defect" }).result.change).toBe(
      null,
    );
  });

  it("reports a state change of a stored issue (a close or a reopen)", () => {
    const rows = applyAll([{ type: "issue", issue: issue(1) }]);
    const closed = issue(1, {
      state: "closed",
      stateReason: "completed",
      closedAt: "2026-11-29T10:00:00Z",
      updatedAt: "2026-11-29T10:00:00Z",
    });
    expect(step(rows, { type: "issue", issue: closed }).result.stateChange).toEqual({
      number: 1,
      state: "closed",
    });
    expect(step(empty(), { type: "issue", issue: closed }).result.stateChange).toBeNull();
  });

  it("stores references to the repository's own issues as numbers, however they are spelled", () => {
    const rows = applyAll([
      {
        type: "blocked-by",
        issue: 1,
        blocker: "acme/rocket#2",
        present: true,
        at: "2026-11-29T10:00:00Z",
      },
      { type: "parent", child: 1, parent: "ACME/rocket#3", at: "2026-11-29T10:00:00Z" },
    ]);
    expect(rows.blockers.map((b) => b.blocker)).toEqual(["2"]);
    expect(rows.parents.map((p) => p.parent)).toEqual(["3"]);
  });
});

describe("mergeEvent properties", () => {
  const histories = fc.array(action, { minLength: 1, maxLength: 40 }).map(history);

  it("reads no more than it needs: the rows rowsTouched names decide like every row would", () => {
    fc.assert(
      fc.property(histories, (events) => {
        let rows = empty();
        for (const event of events) {
          const all = mergeEvent(event, stored(rows, rows.closedSeq));
          const touched = step(rows, event);
          expect(touched.result).toEqual(all);
          rows = touched.rows;
        }
      }),
      { numRuns: 200 },
    );
  });

  it("is idempotent: an event applied twice leaves the rows it leaves once", () => {
    fc.assert(
      fc.property(
        histories,
        fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
        (events, twice) => {
          // Label renames and deletions too (they carry no time, but repeat harmlessly).
          const extra: GraphEvent[] = [
            { type: "label-renamed", from: "bug", to: "defect" },
            { type: "label-deleted", name: "agent:hold" },
            {
              type: "blockers",
              issue: 1,
              blockers: [2, "acme/sdk#7"],
              at: formatInstant(T0 + 20_000),
            },
          ];
          const all = [...events, ...extra];
          const once = applyAll(all);
          const doubled = applyAll(all.flatMap((e, i) => (twice[i % twice.length] ? [e, e] : [e])));
          expect(canonical(doubled, { seqs: "exact" })).toEqual(canonical(once, { seqs: "exact" }));
          // And a second delivery of any event of the history, later, changes no row.
          const replayed = applyAll(events);
          for (const e of events)
            expect(canonical(step(replayed, e).rows, { seqs: "exact" })).toEqual(
              canonical(replayed, { seqs: "exact" }),
            );
        },
      ),
      { numRuns: 200 },
    );
  });

  it("is order-insensitive: any arrival order of a history's events gives the same rows", () => {
    fc.assert(
      fc.property(
        histories,
        fc.array(fc.nat(), { minLength: 1, maxLength: 60 }),
        fc.array(fc.nat({ max: 59 }), { maxLength: 10 }),
        (events, seeds, repeats) => {
          const inOrder = applyAll(events);
          // Shuffled, with some deliveries repeated (GitHub redelivers).
          const delivered = shuffledWithSeeds(
            [...events, ...repeats.filter((i) => i < events.length).map((i) => events[i]!)],
            seeds,
          );
          const links = { seqs: "presence", detached: "links" } as const;
          expect(canonical(applyAll(delivered), links)).toEqual(canonical(inOrder, links));
        },
      ),
      { numRuns: 300 },
    );
  });
});
