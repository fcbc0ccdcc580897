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
];
