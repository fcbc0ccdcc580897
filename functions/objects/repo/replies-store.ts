// Reply state in the RepoObject's SQLite (`reply_openings`, `reply_comments`, `reply_answered`,
// `reply_attempts`):
// the only code that runs SQL on them. What the reply rules read of each issue, kept from the
// events every source translates into (webhooks, reconciles), classified when the text arrives
// so no body is kept: per comment its author, time, page and part (`classifyReplyComment`); per
// issue its opening's author, whether the opening is human input, and how many comments GitHub
// counts (the rows: reply-rows.ts). Deciding is shared/queue/reply-state.ts.
import { instantMs } from "../../../shared/graph/time.ts";
import type { GraphEvent } from "../../../shared/ingest/events.ts";
import { REPLY_RULES_VERSION, type ReplyQuiet } from "../../../shared/queue/reply-state.ts";
import { keyChunks, tupleChunks } from "../json-batches.ts";
import type { Sql } from "../sql.ts";
import { mark, NO_OPENING, QUIET_INDEX_MAX, quietCode, quietOf, UNKNOWN } from "./quiet-index.ts";
import {
  type CommentRow,
  commentOf,
  historyOf,
  type OpeningRow,
  openingOf,
  readCutoffMs,
  type StoredReplyHistory,
} from "./reply-rows.ts";

export type { StoredReplyHistory } from "./reply-rows.ts";

/**
 * Above this many issues with an opening row the histories are not kept in memory (a Durable
 * Object has 128 MB): every queue view reads them from storage, chunk by chunk, as before.
 */
export const HISTORY_CACHE_MAX = 10_000;
/** More changed issues than this since the last read: one full read beats one read each. */
const HISTORY_REFRESH_MAX = 200;

/** `histories`' reader may leave out an open issue whose stored history is this quiet. */
export type SkipHistory = (number: number, quiet: ReplyQuiet) => boolean;

export class RepliesStore {
  private readonly sql: Sql;
  private readonly cacheMax: number;
  /** Called when an answered input is recorded (the queue view rebuilds). */
  onChange: (() => void) | null = null;
  /**
   * Every issue's history as `histories()` last read it, ascending by number, or null (not
   * read yet, dropped, or too many issues). The queue view is rebuilt after every change to the
   * graph (a marker comment's webhook, say) and read each history: kept here, only the issues
   * a write touched since are read again (`stale`). Every write to `reply_openings` or
   * `reply_comments` names its issue in `touched`, or drops the whole cache.
   */
  private cache: Map<number, StoredReplyHistory> | null = null;
  private readonly stale = new Set<number>();
  /** Bumped by every write: a read that saw one meanwhile does not keep what it read. */
  private writes = 0;
  /**
   * Above `HISTORY_CACHE_MAX` issues: how quiet each issue's stored history is (`replyQuiet`),
   * by number, made by a whole read and kept current by `touched`, or null. A read given `skip`
   * then reads from storage only the histories its caller cannot leave out: at 100,000 issues
   * a queue view read every one on every change (about 0.8 s), nearly all of them quiet.
   */
  private quiet: Uint8Array | null = null;
  /**
   * The index the latest whole read is making (writes meanwhile mark it too), installed when
   * that read ends; a read started later takes over (each owns its own: `histories`).
   */
  private building: { index: Uint8Array } | null = null;

  /** `cacheMax`: `HISTORY_CACHE_MAX` but in tests of the quiet index. */
  constructor(sql: Sql, cacheMax = HISTORY_CACHE_MAX) {
    this.sql = sql;
    this.cacheMax = cacheMax;
  }

  /** Issue `number`'s history changed: the cache reads it again. */
  private touched(number: number): void {
    this.writes += 1;
    if (number >= QUIET_INDEX_MAX) {
      this.quiet = null;
      this.building = null;
    }
    if (this.quiet !== null) this.quiet = mark(this.quiet, number, UNKNOWN);
    if (this.building !== null) this.building.index = mark(this.building.index, number, UNKNOWN);
    if (this.cache === null) return;
    this.stale.add(number);
    if (this.stale.size > HISTORY_REFRESH_MAX) this.dropCache();
  }

  /** Forgets every kept history (a rollback, a wipe): the next read is from storage. */
  dropCache(): void {
    this.writes += 1;
    this.cache = null;
    this.stale.clear();
    this.quiet = null;
    this.building = null;
  }

  /**
   * Applies what `events` say about openings and comments (after the graph took them). A run of
   * openings and comments is read and written a statement per chunk (json-batches.ts: under
   * workerd every statement leaves native memory behind, and a full reconcile brings a hundred
   * openings a page); removals go one by one, in order, between the runs.
   */
  apply(events: readonly GraphEvent[], repo: string | null): boolean {
    let changed = false;
    let run: Array<Extract<GraphEvent, { type: "issue" | "comment" }>> = [];
    const flush = () => {
      if (run.length > 0) changed = this.applyRun(run, repo) || changed;
      run = [];
    };
    for (const event of events) {
      if (event.type === "issue" || event.type === "comment") {
        run.push(event);
        continue;
      }
      flush();
      if (event.type === "comment-removed")
        changed = this.removeComment(event.id, instantMs(event.at)) || changed;
      else if (event.type === "issue-removed") {
        this.sql`DELETE FROM reply_openings WHERE number = ${event.number}`;
        this.sql`DELETE FROM reply_comments WHERE number = ${event.number}`;
        this.sql`DELETE FROM reply_answered WHERE number = ${event.number}`;
        this.sql`DELETE FROM reply_attempts WHERE number = ${event.number}`;
        this.touched(event.number);
        changed = true;
      }
    }
    flush();
    return changed;
  }

  /** Openings and comments, in order: rows read before, the changed ones written after. */
  private applyRun(
    run: ReadonlyArray<Extract<GraphEvent, { type: "issue" | "comment" }>>,
    repo: string | null,
  ): boolean {
    const openings = new Map<number, OpeningRow | undefined>();
    const comments = new Map<number, CommentRow | undefined>();
    for (const event of run) {
      if (event.type === "comment") comments.set(event.id, undefined);
      // Only a source that names the author (a webhook, a reconcile's reply read) says who opened it.
      else if (event.issue.author !== undefined && event.issue.body !== undefined)
        openings.set(event.issue.number, undefined);
    }
    for (const json of keyChunks([...openings.keys()]))
      for (const r of this.sql<OpeningRow>`SELECT * FROM reply_openings
          WHERE number IN (SELECT value FROM json_each(${json}))`)
        openings.set(r.number, r);
    for (const json of keyChunks([...comments.keys()]))
      for (const r of this.sql<CommentRow>`SELECT * FROM reply_comments
          WHERE id IN (SELECT value FROM json_each(${json}))`)
        comments.set(r.id, r);
    const openingWrites = new Map<number, OpeningRow>();
    const commentWrites = new Map<number, CommentRow>();
    for (const event of run) {
      if (event.type === "issue") {
        const number = event.issue.number;
        const next = openingOf(event.issue, openings.get(number), repo);
        if (next === null) continue;
        openings.set(number, next);
        openingWrites.set(number, next);
        this.touched(number);
      } else {
        const row = comments.get(event.id);
        const next = commentOf(event, row, repo);
        if (next === null) continue;
        comments.set(event.id, next);
        commentWrites.set(event.id, next);
        // A comment moved to another issue (a transfer keeps ids) leaves its former one too.
        if (row && row.number !== event.number) this.touched(row.number);
        this.touched(event.number);
      }
    }
    const openingTuples = [...openingWrites.values()].map((o) => [
      o.number,
      o.login,
      o.author_type,
      o.association,
      o.human,
      o.created_at,
      o.url,
      o.comment_count,
      o.updated_ms,
      o.rules,
    ]);
    for (const json of tupleChunks(openingTuples))
      this.sql`INSERT INTO reply_openings (number, login, author_type, association, human,
          created_at, url, comment_count, updated_ms, rules)
        SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5,
          value ->> 6, value ->> 7, value ->> 8, value ->> 9
        FROM json_each(${json}) WHERE true ORDER BY key
        ON CONFLICT (number) DO UPDATE SET login = excluded.login, author_type = excluded.author_type,
          association = excluded.association, human = excluded.human, created_at = excluded.created_at,
          url = excluded.url, comment_count = excluded.comment_count, updated_ms = excluded.updated_ms,
          rules = excluded.rules`;
    const commentTuples = [...commentWrites.values()].map((c) => [
      c.id,
      c.number,
      c.login,
      c.author_type,
      c.association,
      c.created_at,
      c.url,
      c.role,
      c.verdict,
      c.updated_ms,
      c.rules,
    ]);
    for (const json of tupleChunks(commentTuples))
      this.sql`INSERT INTO reply_comments (id, number, login, author_type, association, created_at,
          url, role, verdict, updated_ms, rules)
        SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5,
          value ->> 6, value ->> 7, value ->> 8, value ->> 9, value ->> 10
        FROM json_each(${json}) WHERE true ORDER BY key
        ON CONFLICT (id) DO UPDATE SET number = excluded.number, login = excluded.login,
          author_type = excluded.author_type, association = excluded.association,
          created_at = excluded.created_at, url = excluded.url, role = excluded.role,
          verdict = excluded.verdict, updated_ms = excluded.updated_ms, rules = excluded.rules`;
    return openingWrites.size > 0 || commentWrites.size > 0;
  }

  private removeComment(id: number, atMs: number): boolean {
    const row = this.sql<CommentRow>`SELECT * FROM reply_comments WHERE id = ${id}`[0];
    if (row?.role === "deleted") return false;
    if (row) {
      this.sql`UPDATE reply_comments SET role = 'deleted', verdict = NULL,
        updated_ms = ${Math.max(row.updated_ms, atMs)} WHERE id = ${id}`;
      this.touched(row.number);
    } else {
      // Not seen yet: its issue is unknown too, so the tombstone names no issue (number 0).
      this.sql`INSERT INTO reply_comments (id, number, login, author_type, association, created_at,
          url, role, verdict, updated_ms, rules)
        VALUES (${id}, 0, '', '', NULL, '', '', 'deleted', NULL, ${atMs}, ${REPLY_RULES_VERSION})`;
    }
    return true;
  }

  /**
   * Comments a list read did not show (a JSON array of ids): their rows go, with no tombstone.
   * GitHub's listings can lag behind its writes, so a missing comment may still exist; a
   * tombstone would hide every later version of it for the tombstones' retention. Only a
   * `deleted` webhook (`removeComment`) says for certain that it is gone.
   */
  private forgetComments(idsJson: string): void {
    this.sql`DELETE FROM reply_comments
      WHERE id IN (SELECT value FROM json_each(${idsJson})) AND role != 'deleted'`;
  }

  /**
   * Every issue's history that has an opening row, ascending by number: kept in memory up to
   * `HISTORY_CACHE_MAX` issues (then only what was written since is read again), else read
   * `chunk` issues at a time (a large repository's openings are never all in memory), and once
   * read whole, only the ones `skip` does not leave out (the quiet index). Its comments only when
   * every comment GitHub counts in the part of the thread read last (and after it) was seen,
   * classified by the current rules (else not evaluated). A part that is not the whole thread
   * is `partial`: the rules decide it only when it shows enough (`summarizeClassified`).
   */
  *histories(opts: { skip?: SkipHistory; chunk?: number } = {}): Generator<StoredReplyHistory> {
    const chunk = opts.chunk ?? 500;
    if (this.cache !== null) {
      this.refresh();
      // A copy: a write during the caller's loop marks its issue stale, never this list.
      if (this.cache !== null) {
        yield* [...this.cache.values()];
        return;
      }
    }
    if (this.quiet !== null && opts.skip !== undefined) {
      yield* this.someHistories(this.quiet, opts.skip, chunk);
      return;
    }
    const writes = this.writes;
    let kept: Map<number, StoredReplyHistory> | null = new Map();
    // This read's own index: a whole read started while this one is paused takes over, and
    // this one then makes none (a shared one would hold only part of either's reads).
    const own: { index: Uint8Array } = { index: new Uint8Array(1).fill(NO_OPENING) };
    this.building = own;
    let after = 0;
    try {
      for (;;) {
        const openings = this.sql<OpeningRow>`SELECT * FROM reply_openings WHERE number > ${after}
          ORDER BY number LIMIT ${chunk}`;
        if (openings.length === 0) break;
        const first = openings[0]!.number;
        after = openings.at(-1)!.number;
        const byIssue = this.commentsOf(
          this.sql<CommentRow>`SELECT * FROM reply_comments
            WHERE number BETWEEN ${first} AND ${after} AND role != 'deleted' ORDER BY number, id`,
        );
        const histories = openings.map((o) => historyOf(o, byIssue.get(o.number) ?? []));
        // Marked before any is handed out: a write during the caller's loop marks after it.
        if (after >= QUIET_INDEX_MAX && this.building === own) this.building = null;
        if (this.building === own)
          for (const h of histories) own.index = mark(own.index, h.number, quietCode(h));
        for (const history of histories) {
          if (kept !== null && kept.size >= this.cacheMax) kept = null;
          kept?.set(history.number, history);
          yield history;
        }
      }
      // Kept only when read whole with no write meanwhile; the index, when read whole (a write
      // meanwhile marked its issue).
      if (kept !== null && this.writes === writes) {
        this.cache = kept;
        this.stale.clear();
      } else if (kept === null && this.building === own) {
        this.quiet = own.index;
      }
    } finally {
      if (this.building === own) this.building = null;
    }
  }

  /** The histories the quiet index and `skip` do not leave out, read by number (`histories`). */
  private *someHistories(
    index: Uint8Array,
    skip: SkipHistory,
    chunk: number,
  ): Generator<StoredReplyHistory> {
    const numbers: number[] = [];
    for (let n = 1; n < index.length; n++) {
      const code = index[n]!;
      if (code === NO_OPENING) continue;
      if (skip(n, quietOf(code))) continue;
      numbers.push(n);
    }
    for (let i = 0; i < numbers.length; i += chunk) {
      const part = numbers.slice(i, i + chunk);
      const json = JSON.stringify(part);
      const openings = this.sql<OpeningRow>`SELECT * FROM reply_openings
        WHERE number IN (SELECT value FROM json_each(${json})) ORDER BY number`;
      const byIssue = this.commentsOf(
        this.sql<CommentRow>`SELECT * FROM reply_comments
          WHERE number IN (SELECT value FROM json_each(${json})) AND role != 'deleted'
          ORDER BY number, id`,
      );
      const histories = openings.map((o) => historyOf(o, byIssue.get(o.number) ?? []));
      // Marked before any is handed out, and only in the index still kept (a rollback drops it).
      if (this.quiet === index) {
        let marked = index;
        for (const n of part) marked = mark(marked, n, NO_OPENING);
        for (const h of histories) marked = mark(marked, h.number, quietCode(h));
        this.quiet = index = marked;
      }
      yield* histories;
    }
  }

  /** Comment rows (ascending by issue, then id) by issue. */
  private commentsOf(rows: readonly CommentRow[]): Map<number, CommentRow[]> {
    const byIssue = new Map<number, CommentRow[]>();
    for (const r of rows) {
      const list = byIssue.get(r.number);
      if (list) list.push(r);
      else byIssue.set(r.number, [r]);
    }
    return byIssue;
  }

  /** Reads again the kept histories of the issues written since (`stale`). */
  private refresh(): void {
    const cache = this.cache;
    if (cache === null || this.stale.size === 0) return;
    let added = false;
    for (const number of this.stale) {
      const o = this.sql<OpeningRow>`SELECT * FROM reply_openings WHERE number = ${number}`[0];
      if (o === undefined) {
        cache.delete(number);
        continue;
      }
      const rows = this.sql<CommentRow>`SELECT * FROM reply_comments
        WHERE number = ${number} AND role != 'deleted' ORDER BY id`;
      added ||= !cache.has(number);
      cache.set(number, historyOf(o, rows));
    }
    this.stale.clear();
    if (cache.size > this.cacheMax) {
      this.dropCache();
      return;
    }
    // A new opening: the kept order (ascending by number) is made again.
    if (added) this.cache = new Map([...cache].sort((a, b) => a[0] - b[0]));
  }

  /**
   * Deleted comments are kept as long as the graph's comment tombstones (a late delivery of a
   * deleted comment cannot bring it back meanwhile); openings and comments go with their issue.
   */
  prune(tombstonesBeforeMs: number): void {
    // Deleted comments are in no history; dropped anyway, as every bulk write does.
    this.dropCache();
    this
      .sql`DELETE FROM reply_comments WHERE role = 'deleted' AND updated_ms < ${tombstonesBeforeMs}`;
  }

  /**
   * The whole thread of issue `number` as GitHub listed it in a read that began at
   * `readStartedMs` (`settleWindows` of one whole thread).
   */
  settleThread(
    number: number,
    listed: ReadonlyArray<{ id: number; createdAt: string }>,
    readStartedMs: number,
  ): void {
    this.settleWindows(
      [{ number, listed, totalCount: listed.length, whole: true, joins: false }],
      readStartedMs,
    );
  }

  /**
   * What reads that began at `readStartedMs` listed of issues' threads (shared/github/
   * reply-windows.ts), each after its comments were applied: `listed` oldest first, `totalCount`
   * GitHub's count, `whole` when the read reached the first comment, `joins` when it reached back
   * into the thread held whole (`storedThread`).
   *
   * A whole thread: GitHub's count is the list's length, and a stored comment the list lacks
   * that was created before the read (`readCutoffMs`) is forgotten, not tombstoned (one posted
   * during the read may be missing from it: it stays). Whole threads (a reconcile's page holds a
   * hundred) are settled a statement per chunk, as `apply` writes.
   *
   * The newest part of a thread: a stored comment of that part the list lacks, created before
   * the read, is forgotten; what is older than the part is no longer kept (its count is kept as
   * `skipped`), unless the part `joins` the thread held.
   */
  settleWindows(
    windows: ReadonlyArray<{
      number: number;
      listed: ReadonlyArray<{ id: number; createdAt: string }>;
      totalCount: number;
      whole: boolean;
      joins: boolean;
    }>,
    readStartedMs: number,
  ): void {
    const whole = new Map<number, { ids: Set<number>; cutoff: number; count: number }>();
    for (const w of windows) {
      if (!w.whole) continue;
      const ids = new Set(w.listed.map((c) => c.id));
      whole.set(w.number, {
        ids,
        cutoff: readCutoffMs(w.listed, readStartedMs),
        count: w.listed.length,
      });
    }
    let changed = whole.size > 0;
    if (whole.size > 0) {
      const forget: number[] = [];
      for (const json of keyChunks([...whole.keys()]))
        for (const r of this.sql<{ id: number; number: number; created_at: string }>`
            SELECT id, number, created_at FROM reply_comments
            WHERE number IN (SELECT value FROM json_each(${json})) AND role != 'deleted'`) {
          const t = whole.get(r.number)!;
          if (!t.ids.has(r.id) && instantMs(r.created_at) < t.cutoff) forget.push(r.id);
        }
      for (const json of keyChunks(forget)) this.forgetComments(json);
      for (const json of tupleChunks([...whole].map(([number, t]) => [number, t.count])))
        this.sql`UPDATE reply_openings SET comment_count = j.value ->> 1, known_from = NULL,
          skipped = 0 FROM json_each(${json}) AS j WHERE reply_openings.number = j.value ->> 0`;
      for (const number of whole.keys()) this.touched(number);
    }
    for (const w of windows) {
      if (w.whole || w.listed.length === 0) continue;
      this.settlePart(w.number, w.listed, w.totalCount, readStartedMs, w.joins);
      changed = true;
    }
    if (changed) this.onChange?.();
  }

  /** The newest part of a thread, read backwards (`settleWindows`). */
  private settlePart(
    number: number,
    listed: ReadonlyArray<{ id: number; createdAt: string }>,
    totalCount: number,
    readStartedMs: number,
    joins: boolean,
  ): void {
    const from = listed.reduce((m, c) => Math.min(m, c.id), Number.POSITIVE_INFINITY);
    const ids = new Set(listed.map((c) => c.id));
    const cutoff = readCutoffMs(listed, readStartedMs);
    const forget: number[] = [];
    for (const r of this.sql<{ id: number; created_at: string }>`
        SELECT id, created_at FROM reply_comments
        WHERE number = ${number} AND role != 'deleted' AND id >= ${from}`) {
      if (!ids.has(r.id) && instantMs(r.created_at) < cutoff) forget.push(r.id);
    }
    for (const json of keyChunks(forget)) this.forgetComments(json);
    this.touched(number);
    if (joins) {
      // The part read continues the thread held before it (`storedThread`): nothing is cut,
      // and the part of the thread that counts stays what it was.
      this.sql`UPDATE reply_openings SET comment_count = ${totalCount} WHERE number = ${number}`;
      return;
    }
    // What is older than the part read is not read again: its rows go (tombstones stay).
    this
      .sql`DELETE FROM reply_comments WHERE number = ${number} AND id < ${from} AND role != 'deleted'`;
    const skipped = Math.max(0, totalCount - listed.length);
    this.sql`UPDATE reply_openings SET comment_count = ${totalCount}, known_from = ${from},
      skipped = ${skipped} WHERE number = ${number}`;
  }

  /**
   * The newest comment id of issue `number`'s thread when it is held whole (read from its first
   * comment, every comment GitHub counted stored, by the current rules); else null. A reconcile
   * then needs only the comments after it (shared/github/reply-windows.ts).
   */
  storedThread(number: number): number | null {
    const o = this.sql<OpeningRow>`SELECT * FROM reply_openings WHERE number = ${number}`[0];
    if (!o || o.known_from !== null || o.comment_count === null) return null;
    if (o.rules !== REPLY_RULES_VERSION) return null;
    const r = this.sql<{ n: number; newest: number | null; stale: number }>`
      SELECT COUNT(*) AS n, MAX(id) AS newest, SUM(rules != ${REPLY_RULES_VERSION}) AS stale
      FROM reply_comments WHERE number = ${number} AND role != 'deleted'`[0]!;
    if (r.n < o.comment_count || (r.stale ?? 0) > 0) return null;
    return r.newest ?? 0;
  }

  /** A `done` release answered this input of the issue: its reply waits for newer input. */
  answer(number: number, input: { url: string; at: string }): void {
    this
      .sql`INSERT INTO reply_answered (number, url, at) VALUES (${number}, ${input.url}, ${input.at})
      ON CONFLICT (number) DO UPDATE SET url = excluded.url, at = excluded.at`;
    this.onChange?.();
  }

  /**
   * A reply claim for this input of the issue ended without `done` (abandoned, failed,
   * expired): counted per input; newer input starts the count again.
   */
  failedAttempt(number: number, input: { url: string; at: string }): void {
    this.sql`INSERT INTO reply_attempts (number, url, at, attempts)
      VALUES (${number}, ${input.url}, ${input.at}, 1)
      ON CONFLICT (number) DO UPDATE SET
        attempts = CASE WHEN reply_attempts.url = excluded.url AND reply_attempts.at = excluded.at
          THEN reply_attempts.attempts + 1 ELSE 1 END,
        url = excluded.url, at = excluded.at`;
    this.onChange?.();
  }

  /** Failed reply attempts per issue, for the input they were counted for. */
  attempts(): Map<number, { url: string; at: string; attempts: number }> {
    const out = new Map<number, { url: string; at: string; attempts: number }>();
    for (const r of this.sql<{ number: number; url: string; at: string; attempts: number }>`
        SELECT number, url, at, attempts FROM reply_attempts`)
      out.set(r.number, { url: r.url, at: r.at, attempts: r.attempts });
    return out;
  }

  /** The input of each issue a `done` release answered. */
  answered(): Map<number, { url: string; at: string }> {
    const out = new Map<number, { url: string; at: string }>();
    for (const r of this.sql<{ number: number; url: string; at: string }>`
        SELECT number, url, at FROM reply_answered`)
      out.set(r.number, { url: r.url, at: r.at });
    return out;
  }

  clear(): void {
    this.dropCache();
    this.sql`DELETE FROM reply_openings`;
    this.sql`DELETE FROM reply_comments`;
    this.sql`DELETE FROM reply_answered`;
    this.sql`DELETE FROM reply_attempts`;
  }
}
