import { migratedKeyExpiresMs } from "../../../shared/auth/keys.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import { encodeRequires, requiresOf } from "../../../shared/queue/requires.ts";

/**
 * RepoObject schema, one entry per version, run in order by `migrate` in the constructor.
 * Append-only once released: never edit a released step, add a new one (step 1 is the schema
 * of the first release, step 2 the first change after it).
 */
export const REPO_MIGRATIONS: ReadonlyArray<(sql: SqlStorage) => void> = [
  (sql) => {
    sql.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    sql.exec(`CREATE TABLE issues (
      number INTEGER PRIMARY KEY,
      id INTEGER,
      title TEXT NOT NULL,
      state TEXT NOT NULL,
      state_reason TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      updated_ms INTEGER NOT NULL,
      closed_at TEXT,
      labels TEXT NOT NULL,
      body TEXT,
      closed_seq INTEGER
    )`);
    sql.exec(`CREATE INDEX issues_by_closed_seq ON issues (closed_seq)`);
    sql.exec(`CREATE TABLE tombstones (number INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL)`);
    sql.exec(
      `CREATE TABLE parents (child INTEGER PRIMARY KEY, parent TEXT, at_ms INTEGER NOT NULL)`,
    );
    sql.exec(`CREATE TABLE blockers (
      issue INTEGER NOT NULL, blocker TEXT NOT NULL, present INTEGER NOT NULL, at_ms INTEGER NOT NULL,
      PRIMARY KEY (issue, blocker)
    )`);
    sql.exec(`CREATE TABLE external (
      ref TEXT PRIMARY KEY, state TEXT NOT NULL, closed_at TEXT, at_ms INTEGER NOT NULL,
      closed_seq INTEGER, etag TEXT
    )`);
    sql.exec(`CREATE TABLE label_events (
      number INTEGER NOT NULL, label TEXT NOT NULL, action TEXT NOT NULL, actor TEXT,
      created_at TEXT NOT NULL, created_ms INTEGER NOT NULL,
      PRIMARY KEY (number, label, action, created_ms)
    )`);
    sql.exec(`CREATE TABLE comments (
      id INTEGER PRIMARY KEY, number INTEGER NOT NULL, author TEXT NOT NULL, author_type TEXT NOT NULL,
      body TEXT NOT NULL, created_at TEXT NOT NULL, updated_ms INTEGER NOT NULL
    )`);
    sql.exec(`CREATE INDEX comments_by_issue ON comments (number)`);
    sql.exec(`CREATE TABLE comment_tombstones (id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL)`);
    sql.exec(`CREATE TABLE deliveries (id TEXT PRIMARY KEY, received_ms INTEGER NOT NULL)`);
    sql.exec(`CREATE INDEX deliveries_by_age ON deliveries (received_ms)`);
    sql.exec(`CREATE TABLE audit (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL
    )`);
    sql.exec(
      `CREATE TABLE schedules (name TEXT PRIMARY KEY, due_ms INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0)`,
    );
    sql.exec(`CREATE TABLE outbox (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, fence INTEGER NOT NULL, op TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT
    )`);
  },
  (sql) => {
    // Schedules leased by a running handler remember what was asked of them meanwhile.
    sql.exec(`ALTER TABLE schedules ADD COLUMN leased INTEGER NOT NULL DEFAULT 0`);
    sql.exec(`ALTER TABLE schedules ADD COLUMN requested_ms INTEGER`);
  },
  (sql) => {
    // The fleet API. The fencing counter is its own table: an uninstall wipes everything else,
    // never it, so a fence handed out before can never be handed out again.
    sql.exec(`CREATE TABLE fence (id INTEGER PRIMARY KEY CHECK (id = 0), value INTEGER NOT NULL)`);
    sql.exec(`CREATE TABLE claims (
      claim_id TEXT PRIMARY KEY, number INTEGER NOT NULL, agent_id TEXT NOT NULL, machine TEXT,
      fence INTEGER NOT NULL UNIQUE, branch TEXT NOT NULL, ttl_ms INTEGER NOT NULL,
      granted_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,
      ended_ms INTEGER, outcome TEXT, note TEXT,
      marker TEXT NOT NULL DEFAULT 'none'
    )`);
    sql.exec(`CREATE INDEX claims_live ON claims (expires_ms) WHERE ended_ms IS NULL`);
    sql.exec(`CREATE INDEX claims_by_issue ON claims (number, fence)`);
    // Per-issue fleet state: where attempts count from, the dead letter, done suppression,
    // and the label writes switchyard owes GitHub for it (applied by the mirror schedule).
    sql.exec(`CREATE TABLE issue_fleet (
      number INTEGER PRIMARY KEY,
      reset_fence INTEGER NOT NULL DEFAULT 0,
      stuck INTEGER NOT NULL DEFAULT 0,
      stuck_labeled INTEGER NOT NULL DEFAULT 0,
      stuck_commented INTEGER NOT NULL DEFAULT 0,
      stuck_ms INTEGER,
      done_suppressed INTEGER NOT NULL DEFAULT 0,
      remove_ready INTEGER NOT NULL DEFAULT 0,
      add_ready INTEGER NOT NULL DEFAULT 0,
      processing INTEGER NOT NULL DEFAULT 0,
      processing_ms INTEGER
    )`);
    sql.exec(`CREATE TABLE idempotency (
      key TEXT PRIMARY KEY, claim_id TEXT NOT NULL, number INTEGER, linked INTEGER NOT NULL DEFAULT 0,
      created_ms INTEGER NOT NULL
    )`);
    sql.exec(`CREATE TABLE fleet_keys (
      id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, created_by TEXT,
      created_ms INTEGER NOT NULL, last_used_ms INTEGER, expires_ms INTEGER, revoked_ms INTEGER
    )`);
    sql.exec(`CREATE TABLE author_trust (
      login TEXT PRIMARY KEY, trusted INTEGER NOT NULL, checked_ms INTEGER NOT NULL
    )`);
    sql.exec(`ALTER TABLE comments ADD COLUMN author_association TEXT`);
  },
  (sql) => {
    // A label write that kept failing (or met a 403) is parked: kept aside, out of the queue,
    // until the next plan after a full reconcile plans it again.
    sql.exec(`ALTER TABLE outbox ADD COLUMN parked_ms INTEGER`);
  },
  (sql) => {
    // The full reconcile streams page by page across alarm runs: where it is (one row while a
    // run is in progress) and which issues it has seen, so removals wait for the whole run.
    sql.exec(`CREATE TABLE reconcile_run (
      id INTEGER PRIMARY KEY CHECK (id = 0), run_id TEXT NOT NULL, generation INTEGER NOT NULL,
      started_ms INTEGER NOT NULL, labels TEXT NOT NULL, cursor TEXT,
      pages INTEGER NOT NULL, issues INTEGER NOT NULL, requests INTEGER NOT NULL,
      corrections INTEGER NOT NULL, corrected TEXT NOT NULL, restarts INTEGER NOT NULL,
      updated_ms INTEGER NOT NULL
    )`);
    sql.exec(
      `CREATE TABLE reconcile_seen (number INTEGER PRIMARY KEY, updated_ms INTEGER NOT NULL)`,
    );
  },
  (sql) => {
    // What the rules read from an issue body (`requires:` capabilities), extracted when the body
    // is written, so the graph is read without bodies. Rows stored before are backfilled here.
    sql.exec(`ALTER TABLE issues ADD COLUMN requires TEXT`);
    const found: Array<[number, string]> = [];
    for (const row of sql.exec<{ number: number; body: string }>(
      `SELECT number, body FROM issues WHERE body LIKE '%requires%'`,
    )) {
      const requires = encodeRequires(requiresOf(row.body));
      if (requires !== null) found.push([row.number, requires]);
    }
    for (const [number, requires] of found)
      sql.exec(`UPDATE issues SET requires = ? WHERE number = ?`, requires, number);
  },
  (sql) => {
    // The queue policy (issue 24). The circuit breaker: the latest report of each check on the
    // default branch's recent commits, and one row of state (the head, the one before it, since
    // when it is red, what the installation may not read).
    sql.exec(`CREATE TABLE ci_reports (
      sha TEXT NOT NULL, source TEXT NOT NULL, key TEXT NOT NULL, name TEXT NOT NULL,
      run_id INTEGER NOT NULL, attempt INTEGER NOT NULL, status TEXT NOT NULL, conclusion TEXT,
      url TEXT, seen_ms INTEGER NOT NULL,
      PRIMARY KEY (sha, source, key)
    )`);
    sql.exec(`CREATE TABLE ci_state (
      id INTEGER PRIMARY KEY CHECK (id = 0), default_branch TEXT,
      head_sha TEXT, head_at_ms INTEGER, previous_sha TEXT,
      red_since_ms INTEGER, red_sha TEXT, missing TEXT, read_ms INTEGER
    )`);
    // Priority from an organization project's field: each issue's option (null: none, kept as
    // a tombstone so a late older delivery cannot bring a value back), items to re-read, and
    // the project read's progress.
    sql.exec(`CREATE TABLE priority_items (
      number INTEGER PRIMARY KEY, item_id TEXT NOT NULL, option TEXT, at_ms INTEGER NOT NULL
    )`);
    sql.exec(`CREATE TABLE priority_rereads (item_id TEXT PRIMARY KEY, at_ms INTEGER NOT NULL)`);
    sql.exec(`CREATE TABLE priority_state (
      id INTEGER PRIMARY KEY CHECK (id = 0), project TEXT, project_id TEXT, state TEXT NOT NULL,
      reason TEXT, read_ms INTEGER, run_started_ms INTEGER, cursor TEXT
    )`);
  },
  (sql) => {
    // The audit log's lanes (shared/schedule/audit-lanes.ts): key and fenced-write entries are
    // trimmed apart from the high-volume ones, so a claim loop never pushes them out.
    sql.exec(`ALTER TABLE audit ADD COLUMN lane TEXT NOT NULL DEFAULT 'activity'`);
    sql.exec(`UPDATE audit SET lane = 'record'
      WHERE kind LIKE 'key-%' OR kind LIKE 'fenced-write%' OR kind LIKE 'write-record%'`);
    sql.exec(`CREATE INDEX audit_by_lane ON audit (lane, seq)`);
  },
  (sql) => {
    // A sub-issue create whose answer was lost keeps its key with outcome 'unknown' (the retry
    // looks the issue up first); `first_ms` is when the key was first used (the look-up's window).
    sql.exec(`ALTER TABLE idempotency ADD COLUMN outcome TEXT`);
    sql.exec(`ALTER TABLE idempotency ADD COLUMN first_ms INTEGER`);
    sql.exec(`UPDATE idempotency SET first_ms = created_ms`);
  },
  (sql) => {
    // Fenced write records (issue 21): a write for a claim holder is recorded before it is sent,
    // with its deadline and the instant its record closes; while one is open on an issue, the
    // issue is granted to nobody. `outcome`: how the write ended (null while it runs), `closed_ms`:
    // when the record closed (null while open).
    sql.exec(`CREATE TABLE write_records (
      id INTEGER PRIMARY KEY AUTOINCREMENT, number INTEGER NOT NULL, claim_id TEXT NOT NULL,
      fence INTEGER NOT NULL, kind TEXT NOT NULL, started_ms INTEGER NOT NULL,
      deadline_ms INTEGER NOT NULL, close_at_ms INTEGER NOT NULL, outcome TEXT, closed_ms INTEGER,
      late_reported INTEGER NOT NULL DEFAULT 0
    )`);
    sql.exec(`CREATE INDEX write_records_open ON write_records (number) WHERE closed_ms IS NULL`);
    sql.exec(`CREATE INDEX write_records_by_claim ON write_records (claim_id, fence)`);
  },
  keysExpire,
  (sql) => {
    // Human replies as work (issue 22): what the reply rules read of each issue's thread,
    // classified when the text arrives so no body is kept (replies-store.ts). `rules` is the
    // classifier's version: rows of an older one are not trusted until read again.
    sql.exec(`CREATE TABLE reply_openings (
      number INTEGER PRIMARY KEY, login TEXT NOT NULL, author_type TEXT NOT NULL, association TEXT,
      human INTEGER NOT NULL, created_at TEXT NOT NULL, url TEXT NOT NULL, comment_count INTEGER,
      updated_ms INTEGER NOT NULL, rules INTEGER NOT NULL
    )`);
    sql.exec(`CREATE TABLE reply_comments (
      id INTEGER PRIMARY KEY, number INTEGER NOT NULL, login TEXT NOT NULL,
      author_type TEXT NOT NULL, association TEXT, created_at TEXT NOT NULL, url TEXT NOT NULL,
      role TEXT NOT NULL, verdict TEXT, updated_ms INTEGER NOT NULL, rules INTEGER NOT NULL
    )`);
    sql.exec(`CREATE INDEX reply_comments_by_issue ON reply_comments (number)`);
  },
  (sql) => {
    // One holder across protocols (issue 21): when switchyard re-reads the issue of a claim
    // whose IDD marker it posted (null: nothing to verify). Idempotent, so a test that sets the
    // version back to re-run an earlier step runs this one again harmlessly.
    const columns = sql.exec<{ name: string }>(`PRAGMA table_info(claims)`).toArray();
    if (!columns.some((c) => c.name === "verify_ms")) {
      sql.exec(`ALTER TABLE claims ADD COLUMN verify_ms INTEGER`);
    }
  },
  (sql) => {
    // The input a `done` release answered, per issue: its reply stays out of the queue until
    // newer trusted input arrives.
    sql.exec(
      `CREATE TABLE reply_answered (number INTEGER PRIMARY KEY, url TEXT NOT NULL, at TEXT NOT NULL)`,
    );
    // Claims know their kind, and a claim made with a reply the input it was granted for.
    sql.exec(`ALTER TABLE claims ADD COLUMN kind TEXT NOT NULL DEFAULT 'work'`);
    sql.exec(`ALTER TABLE claims ADD COLUMN reply_url TEXT`);
    sql.exec(`ALTER TABLE claims ADD COLUMN reply_at TEXT`);
  },
  (sql) => {
    // Reply claims of one input that ended without `done`: after `claims.maxAttempts` the input
    // is parked until newer trusted input arrives (the work's dead letter is apart).
    sql.exec(`CREATE TABLE reply_attempts (
      number INTEGER PRIMARY KEY, url TEXT NOT NULL, at TEXT NOT NULL, attempts INTEGER NOT NULL
    )`);
  },
  (sql) => {
    // Reply state from the reconciles (issue 22): a thread read backwards is known from its
    // `known_from` comment id on; `skipped` comments before it were counted, not read.
    sql.exec(`ALTER TABLE reply_openings ADD COLUMN known_from INTEGER`);
    sql.exec(`ALTER TABLE reply_openings ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0`);
  },
  (sql) => {
    // Reads of open claims and of owed markers never walk the claims history (issue 21). Ordered
    // by fence, they scanned the whole table through the fence's unique index: a claim and its
    // release read every claim the repository ever kept, several times.
    sql.exec(`CREATE INDEX IF NOT EXISTS claims_open ON claims (fence) WHERE ended_ms IS NULL`);
    sql.exec(
      `CREATE INDEX IF NOT EXISTS claims_open_by_issue ON claims (number, fence) WHERE ended_ms IS NULL`,
    );
    sql.exec(`CREATE INDEX IF NOT EXISTS claims_markers_due ON claims (fence)
      WHERE marker IN ('none', 'repost') OR (marker = 'posted' AND ended_ms IS NOT NULL)`);
  },
];

/**
 * Every fleet key expires (issue 21): a key minted before, without an expiry, gets the default
 * lifetime counted from this migration, each one audited. The clock is read here, in the step,
 * so a repository migrated later still gets its full lifetime.
 */
export function keysExpire(sql: SqlStorage): void {
  const nowMs = Date.now();
  const expiresMs = migratedKeyExpiresMs(nowMs);
  const keys = sql
    .exec<{ id: string; name: string }>(
      `SELECT id, name FROM fleet_keys WHERE expires_ms IS NULL ORDER BY created_ms, id`,
    )
    .toArray();
  for (const key of keys) {
    sql.exec(`UPDATE fleet_keys SET expires_ms = ? WHERE id = ?`, expiresMs, key.id);
    sql.exec(
      `INSERT INTO audit (at_ms, kind, detail, lane) VALUES (?, 'key-expiry-set', ?, 'record')`,
      nowMs,
      JSON.stringify({
        id: key.id,
        name: key.name,
        expiresAt: formatInstant(expiresMs),
        why: "keys minted before keys expired get the default lifetime",
      }),
    );
  }
}
