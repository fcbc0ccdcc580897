/**
 * A Durable Object's storage on one SQLite database file (the portable host): `sql.exec` with
 * the cursor the Worker's code reads, `transactionSync`, and one alarm persisted in the same
 * database.
 *
 * Writes between two awaits commit together, as Durable Objects coalesce them: the first
 * statement of a synchronous stretch opens a transaction and a microtask commits it once that
 * stretch has run. So a stretch of code is atomic, a crash never leaves half of it, and the
 * reply to a request (sent after the handler's promise settles) goes out after its commit.
 * `transactionSync` nests as savepoints and rolls back on a throw.
 */
import type { ObjectSql, ObjectStorage, SqlCursor, SqlRow, SqlValue } from "./boundary.ts";
import { splitStatements } from "./sql-split.ts";
import type {
  DriverDatabase,
  DriverRow,
  DriverStatement,
  DriverValue,
  SqliteDriver,
} from "./sqlite-driver.ts";

const ALARM_TABLE = "_switchyard_alarm";
const STATEMENT_CACHE = 256;

/**
 * How hard a commit waits for the disk: `full` (default) fsyncs every commit, so an
 * acknowledged webhook survives a power loss or an OS crash; `normal` fsyncs at checkpoints
 * only: a commit survives the process crashing (the OS has it) but the last ones may be lost
 * with the machine. About 3 ms against 0.05 ms a commit on the machine of bench/README.md.
 */
export type Synchronous = "full" | "normal";

/** Opens (creating when missing) an object's database with the host's settings. */
export function openObjectDatabase(
  driver: SqliteDriver,
  path: string,
  synchronous: Synchronous = "full",
): DriverDatabase {
  const db = driver.open(path);
  // WAL: readers never block on the writer, and a commit appends instead of rewriting pages.
  db.exec("PRAGMA journal_mode = WAL");
  db.exec(`PRAGMA synchronous = ${synchronous === "normal" ? "NORMAL" : "FULL"}`);
  db.exec("PRAGMA busy_timeout = 5000");
  return db;
}

/** The alarm stored in an object's database, read without constructing the object (start-up). */
export function storedAlarm(db: DriverDatabase): number | null {
  const exists = db
    .prepare("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = ?")
    .all(ALARM_TABLE);
  if (exists.length === 0) return null;
  const row = db.prepare(`SELECT at_ms FROM ${ALARM_TABLE} WHERE id = 0`).all()[0];
  return row ? Number(row.at_ms) : null;
}

function toDriver(value: SqlValue): DriverValue {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) {
    const view = value as ArrayBufferView;
    return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  }
  if (value === undefined) throw new TypeError("sql.exec: a binding is undefined");
  return value;
}

function fromDriver(row: DriverRow): SqlRow {
  const out: SqlRow = {};
  for (const key in row) {
    const v = row[key] ?? null;
    if (v instanceof Uint8Array) out[key] = v.slice().buffer as ArrayBuffer;
    else if (typeof v === "bigint") out[key] = Number(v);
    else out[key] = v;
  }
  return out;
}

const READS = /^\s*(SELECT|WITH|VALUES|PRAGMA|EXPLAIN)\b/i;
/** What may change a table's columns (migrations); a false alarm only costs a lookup. */
const SCHEMA = /\b(?:CREATE|ALTER|DROP)\s/i;

class Cursor<Row extends SqlRow> implements SqlCursor<Row> {
  readonly columnNames: string[];
  rowsRead = 0;
  readonly rowsWritten: number;
  private rows: Row[] | null;
  private iterator: Iterator<DriverRow> | null = null;
  private readonly lazy: (() => Iterator<DriverRow>) | null;
  private readonly eager: (() => DriverRow[]) | null;
  private index = 0;

  constructor(init: {
    columnNames: string[];
    rowsWritten: number;
    rows?: Row[];
    lazy?: () => Iterator<DriverRow>;
    eager?: () => DriverRow[];
  }) {
    this.columnNames = init.columnNames;
    this.rowsWritten = init.rowsWritten;
    this.rows = init.rows ?? null;
    this.lazy = init.lazy ?? null;
    this.eager = init.eager ?? null;
    if (this.rows) this.rowsRead = this.rows.length;
  }

  next(): IteratorResult<Row> {
    if (this.rows) {
      if (this.index < this.rows.length) return { done: false, value: this.rows[this.index++]! };
      return { done: true, value: undefined };
    }
    this.iterator ??= this.lazy!();
    const step = this.iterator.next();
    if (step.done) {
      this.rows = [];
      return { done: true, value: undefined };
    }
    this.rowsRead++;
    return { done: false, value: fromDriver(step.value) as Row };
  }

  [Symbol.iterator](): Iterator<Row> {
    return this;
  }

  toArray(): Row[] {
    if (this.rows === null && this.iterator === null && this.eager) {
      // Not started: one driver call for all rows (the common case: sqlTag).
      this.rows = this.eager().map((r) => fromDriver(r) as Row);
      this.rowsRead = this.rows.length;
      this.index = this.rows.length;
      return this.rows;
    }
    const out: Row[] = [];
    for (let step = this.next(); !step.done; step = this.next()) out.push(step.value);
    return out;
  }

  one(): Row {
    const rows = this.toArray();
    if (rows.length !== 1) {
      throw new Error(`Expected exactly one result from SQL query, but got ${rows.length}.`);
    }
    return rows[0]!;
  }

  *raw<T extends SqlValue[] = SqlValue[]>(): IterableIterator<T> {
    for (const row of this) yield this.columnNames.map((c) => row[c] ?? null) as T;
  }
}

export interface SqliteStorageHooks {
  /** The alarm changed (null: deleted); the host arms or clears its timer. */
  alarmChanged(atMs: number | null): void;
  /** The database closed; `empty`: no table was ever created in it (nothing to keep). */
  closed?(empty: boolean): void;
}

/** Whether a database holds no schema at all (an object that was only read). */
export function isEmptyDatabase(db: DriverDatabase): boolean {
  return Number(db.prepare("SELECT COUNT(*) AS n FROM sqlite_master").all()[0]?.n ?? 0) === 0;
}

export class SqliteObjectStorage implements ObjectStorage {
  readonly sql: ObjectSql;
  private readonly db: DriverDatabase;
  private readonly hooks: SqliteStorageHooks;
  private readonly statements = new Map<string, DriverStatement>();
  /**
   * Each cached statement's column names, asked of the driver once per schema (node:sqlite
   * builds the list on every call: 6% of a claim's CPU in the claims benchmark, issue 21). A
   * statement that may change the schema (`SELECT *` gains a column) forgets them and the
   * cached statements.
   */
  private readonly columns = new Map<string, string[]>();
  private implicit = false;
  private depth = 0;
  private alarm: number | null | undefined = undefined;
  private closed = false;

  constructor(db: DriverDatabase, hooks: SqliteStorageHooks) {
    this.db = db;
    this.hooks = hooks;
    this.sql = { exec: (query, ...bindings) => this.exec(query, bindings) };
  }

  private statement(query: string): DriverStatement {
    let stmt = this.statements.get(query);
    if (stmt) {
      // Most recently used last: the oldest entry goes first when the cache is full.
      this.statements.delete(query);
    } else {
      stmt = this.db.prepare(query);
      if (this.statements.size >= STATEMENT_CACHE) {
        const oldest = this.statements.keys().next().value as string;
        this.statements.delete(oldest);
        this.columns.delete(oldest);
      }
    }
    this.statements.set(query, stmt);
    return stmt;
  }

  /** Opens the write-coalescing transaction of this synchronous stretch, if not yet open. */
  private begin(): void {
    if (this.closed) throw new Error("the object's storage is closed");
    if (this.implicit) return;
    this.db.exec("BEGIN");
    this.implicit = true;
    queueMicrotask(() => this.commit());
  }

  /** Commits the stretch's writes (also called before closing). */
  commit(): void {
    if (!this.implicit) return;
    this.implicit = false;
    try {
      this.db.exec("COMMIT");
    } catch (error) {
      // SQLite already rolled the transaction back (an error it ends transactions on): nothing
      // to commit. Anything else is a real failure.
      if (!/no transaction is active/i.test(String(error))) throw error;
    }
  }

  private exec<Row extends SqlRow>(query: string, raw: SqlValue[]): SqlCursor<Row> {
    this.begin();
    // A query seen before is one statement (only single statements are cached): no re-scan.
    const statements = this.statements.has(query) ? [query] : splitStatements(query);
    if (statements.length === 0) throw new Error("sql.exec: no SQL statement");
    if (statements.length > 1 || SCHEMA.test(query)) {
      // A prepared statement may keep its former columns until it runs again: made anew too.
      this.statements.clear();
      this.columns.clear();
    }
    if (statements.length > 1) {
      if (raw.length > 0) {
        throw new Error("sql.exec: bindings with several statements in one call are not supported");
      }
      this.db.exec(statements.slice(0, -1).join(";\n"));
    }
    const last = statements.length > 1 ? statements[statements.length - 1]! : query;
    const bindings = raw.map(toDriver);
    const stmt = this.statement(last);
    let columnNames = this.columns.get(last);
    if (columnNames === undefined) {
      columnNames = stmt.columnNames();
      this.columns.set(last, columnNames);
    }
    if (columnNames.length === 0) {
      const { changes } = stmt.run(...bindings);
      return new Cursor<Row>({ columnNames, rowsWritten: changes, rows: [] });
    }
    if (READS.test(last)) {
      // Rows stream when iterated; a statement of its own, so a cached one is never mid-iteration.
      return new Cursor<Row>({
        columnNames,
        rowsWritten: 0,
        lazy: () => this.db.prepare(last).iterate(...bindings),
        eager: () => stmt.all(...bindings),
      });
    }
    // A write returning rows (RETURNING): done now, whether or not the rows are read.
    const rows = stmt.all(...bindings).map((r) => fromDriver(r) as Row);
    return new Cursor<Row>({ columnNames, rowsWritten: rows.length, rows });
  }

  transactionSync<T>(fn: () => T): T {
    this.begin();
    const name = `sy_tx_${++this.depth}`;
    this.db.exec(`SAVEPOINT ${name}`);
    try {
      const result = fn();
      if (result instanceof Promise) {
        throw new Error("transactionSync: the callback must be synchronous");
      }
      this.db.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      this.db.exec(`ROLLBACK TO ${name}`);
      this.db.exec(`RELEASE ${name}`);
      throw error;
    } finally {
      this.depth--;
    }
  }

  async getAlarm(): Promise<number | null> {
    if (this.alarm === undefined) this.alarm = storedAlarm(this.db);
    return this.alarm;
  }

  async setAlarm(scheduledTime: number | Date): Promise<void> {
    const at = typeof scheduledTime === "number" ? scheduledTime : scheduledTime.getTime();
    if (!Number.isFinite(at)) throw new TypeError("setAlarm: the time is not a number");
    this.begin();
    this.db.exec(
      `CREATE TABLE IF NOT EXISTS ${ALARM_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 0), at_ms INTEGER NOT NULL)`,
    );
    this.statement(
      `INSERT INTO ${ALARM_TABLE} (id, at_ms) VALUES (0, ?) ON CONFLICT (id) DO UPDATE SET at_ms = excluded.at_ms`,
    ).run(Math.trunc(at));
    this.alarm = Math.trunc(at);
    this.hooks.alarmChanged(this.alarm);
  }

  async deleteAlarm(): Promise<void> {
    if ((await this.getAlarm()) === null) return;
    this.begin();
    this.db.exec(`DELETE FROM ${ALARM_TABLE}`);
    this.alarm = null;
    this.hooks.alarmChanged(null);
  }

  /**
   * The alarm fired: `getAlarm` answers null while the handler runs (as on Cloudflare), but the
   * row stays until `alarmDone`, so a crash mid-run fires it again at the next start (alarms are
   * delivered at least once).
   */
  alarmFired(atMs: number): void {
    if (this.alarm === atMs) this.alarm = null;
  }

  /** The handler finished: the spent alarm's row goes unless the handler set a new alarm. */
  alarmDone(): void {
    if (this.alarm !== null || this.closed) return;
    if (storedAlarm(this.db) === null) return;
    this.begin();
    this.db.exec(`DELETE FROM ${ALARM_TABLE}`);
  }

  /** Commits what is pending and closes the database. */
  close(): void {
    if (this.closed) return;
    this.commit();
    const empty = isEmptyDatabase(this.db);
    this.closed = true;
    this.statements.clear();
    this.db.close();
    this.hooks.closed?.(empty);
  }
}
