// The portable host's object storage (functions/host/sqlite-storage.ts) on the runtime's SQLite:
// the cursor the Worker's code reads, transactions, write coalescing and the persisted alarm.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadSqliteDriver, type SqliteDriver } from "../../../functions/host/sqlite-driver.ts";
import {
  openObjectDatabase,
  SqliteObjectStorage,
  storedAlarm,
} from "../../../functions/host/sqlite-storage.ts";

let driver: SqliteDriver;
const dirs: string[] = [];
beforeAll(async () => {
  driver = await loadSqliteDriver();
});
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function fresh() {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-storage-"));
  dirs.push(dir);
  const path = join(dir, "object.sqlite");
  const alarms: Array<number | null> = [];
  const open = () =>
    new SqliteObjectStorage(openObjectDatabase(driver, path), {
      alarmChanged: (at) => alarms.push(at),
    });
  return { path, alarms, open };
}

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe("sql.exec", () => {
  it("returns the cursor the objects read: toArray, one, raw, columnNames, rowsWritten", async () => {
    const storage = fresh().open();
    const sql = storage.sql;
    sql.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, data BLOB)");
    const insert = sql.exec("INSERT INTO t (id, name) VALUES (?, ?), (?, ?)", 1, "a", 2, "b");
    expect(insert.rowsWritten).toBe(2);
    expect(sql.exec("SELECT id, name FROM t ORDER BY id").toArray()).toEqual([
      { id: 1, name: "a" },
      { id: 2, name: "b" },
    ]);
    expect(sql.exec("SELECT name FROM t WHERE id = ?", 2).one()).toEqual({ name: "b" });
    expect(() => sql.exec("SELECT name FROM t").one()).toThrow(/exactly one/);
    const cursor = sql.exec("SELECT id, name FROM t ORDER BY id");
    expect(cursor.columnNames).toEqual(["id", "name"]);
    expect([...cursor.raw()]).toEqual([
      [1, "a"],
      [2, "b"],
    ]);
    // A write returning rows has run whether or not its rows are read.
    sql.exec("UPDATE t SET name = 'c' WHERE id = 1 RETURNING id");
    expect(sql.exec("SELECT name FROM t WHERE id = 1").one().name).toBe("c");
    // Blobs go in and come out as ArrayBuffer, as Durable Objects' SqlStorageValue.
    sql.exec("UPDATE t SET data = ? WHERE id = 2", new Uint8Array([1, 2, 3]).buffer);
    const data = sql.exec<{ data: ArrayBuffer }>("SELECT data FROM t WHERE id = 2").one().data;
    expect(data).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(data)]).toEqual([1, 2, 3]);
    storage.close();
  });

  it("runs several statements in one call and streams reads while the loop writes", () => {
    const storage = fresh().open();
    const sql = storage.sql;
    sql.exec(`CREATE TABLE a (n INTEGER); -- two tables, one call
      CREATE TABLE b (n INTEGER, note TEXT DEFAULT 'x;y');
      INSERT INTO a (n) VALUES (1), (2), (3)`);
    for (const row of sql.exec<{ n: number }>("SELECT n FROM a ORDER BY n")) {
      sql.exec("INSERT INTO b (n) VALUES (?)", row.n * 10);
    }
    expect(sql.exec("SELECT n, note FROM b ORDER BY n").toArray()).toEqual([
      { n: 10, note: "x;y" },
      { n: 20, note: "x;y" },
      { n: 30, note: "x;y" },
    ]);
    expect(() => sql.exec("SELECT 1; SELECT ?", 1)).toThrow(/bindings/);
    storage.close();
  });

  it("reads a cached statement's columns again after a migration changed its table", () => {
    const storage = fresh().open();
    const sql = storage.sql;
    sql.exec("CREATE TABLE t (n INTEGER)");
    sql.exec("INSERT INTO t (n) VALUES (1)");
    const read = () => sql.exec("SELECT * FROM t");
    expect(read().columnNames).toEqual(["n"]);
    expect(read().toArray()).toEqual([{ n: 1 }]);
    sql.exec("ALTER TABLE t ADD COLUMN note TEXT DEFAULT 'x'");
    expect(read().columnNames).toEqual(["n", "note"]);
    expect(read().toArray()).toEqual([{ n: 1, note: "x" }]);
    // Several statements in one call, the schema change not first: forgotten as well.
    sql.exec("INSERT INTO t (n) VALUES (2); ALTER TABLE t ADD COLUMN more INTEGER");
    expect(read().columnNames).toEqual(["n", "note", "more"]);
    expect([...read().raw()]).toEqual([
      [1, "x", null],
      [2, "x", null],
    ]);
    storage.close();
  });
});

describe("transactions", () => {
  it("transactionSync commits, rolls back on a throw, and nests as savepoints", () => {
    const storage = fresh().open();
    const sql = storage.sql;
    sql.exec("CREATE TABLE t (n INTEGER)");
    storage.transactionSync(() => sql.exec("INSERT INTO t VALUES (1)"));
    expect(() =>
      storage.transactionSync(() => {
        sql.exec("INSERT INTO t VALUES (2)");
        throw new Error("no");
      }),
    ).toThrow("no");
    storage.transactionSync(() => {
      sql.exec("INSERT INTO t VALUES (3)");
      expect(() =>
        storage.transactionSync(() => {
          sql.exec("INSERT INTO t VALUES (4)");
          throw new Error("inner");
        }),
      ).toThrow("inner");
      sql.exec("INSERT INTO t VALUES (5)");
    });
    expect(
      sql
        .exec<{ n: number }>("SELECT n FROM t ORDER BY n")
        .toArray()
        .map((r) => r.n),
    ).toEqual([1, 3, 5]);
    storage.close();
  });

  it("commits a synchronous stretch's writes together, before the next await resumes", async () => {
    const { path, open } = fresh();
    const storage = open();
    storage.sql.exec("CREATE TABLE t (n INTEGER)");
    await tick();
    const reader = driver.open(path);
    const count = () => Number(reader.prepare("SELECT COUNT(*) AS c FROM t").all()[0]!.c);
    storage.sql.exec("INSERT INTO t VALUES (1)");
    storage.sql.exec("INSERT INTO t VALUES (2)");
    // Another connection sees nothing of the stretch until it has run to its end…
    expect(count()).toBe(0);
    await Promise.resolve();
    // …and all of it right after (the reply to a request goes out later still).
    expect(count()).toBe(2);
    reader.close();
    storage.close();
  });
});

describe("the alarm", () => {
  it("is stored in the object's database and survives closing it", async () => {
    const { path, alarms, open } = fresh();
    const storage = open();
    expect(await storage.getAlarm()).toBeNull();
    await storage.deleteAlarm();
    await storage.setAlarm(new Date(5_000));
    await storage.setAlarm(7_000);
    expect(await storage.getAlarm()).toBe(7_000);
    expect(alarms).toEqual([5_000, 7_000]);
    storage.close();

    const db = openObjectDatabase(driver, path);
    expect(storedAlarm(db)).toBe(7_000);
    db.close();

    const again = open();
    expect(await again.getAlarm()).toBe(7_000);
    // While the handler runs the alarm reads as spent, but stays stored until the run is done
    // (a crash mid-run fires it again).
    again.alarmFired(7_000);
    expect(await again.getAlarm()).toBeNull();
    await tick();
    const peek = driver.open(path);
    expect(storedAlarm(peek)).toBe(7_000);
    again.alarmDone();
    await tick();
    expect(storedAlarm(peek)).toBeNull();
    peek.close();
    await again.setAlarm(9_000);
    await again.deleteAlarm();
    expect(await again.getAlarm()).toBeNull();
    expect(alarms.at(-1)).toBeNull();
    again.close();
  });
});

describe("closing", () => {
  it("reports a database nobody created a table in as empty (the host then removes its file)", () => {
    const { path } = fresh();
    const closed: boolean[] = [];
    const hooks = { alarmChanged: () => {}, closed: (empty: boolean) => closed.push(empty) };
    const read = new SqliteObjectStorage(openObjectDatabase(driver, path), hooks);
    expect(read.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray()).toEqual(
      [],
    );
    read.close();
    const written = new SqliteObjectStorage(openObjectDatabase(driver, path), hooks);
    written.sql.exec("CREATE TABLE t (n INTEGER)");
    written.close();
    expect(closed).toEqual([true, false]);
  });
});
