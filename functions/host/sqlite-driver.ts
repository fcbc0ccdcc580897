/**
 * One small interface over the SQLite each runtime ships: `node:sqlite` (Node 22.13+/24, Deno 2.2+)
 * and `bun:sqlite` (Bun). Loaded by dynamic import, so no runtime sees the other's module.
 */

export type DriverValue = string | number | bigint | null | Uint8Array;
export type DriverRow = Record<string, DriverValue>;

export interface DriverStatement {
  /** Result column names ([] for a statement that returns no rows). */
  columnNames(): string[];
  all(...bindings: DriverValue[]): DriverRow[];
  iterate(...bindings: DriverValue[]): IterableIterator<DriverRow>;
  run(...bindings: DriverValue[]): { changes: number };
}

export interface DriverDatabase {
  /** Runs one or more statements without results. */
  exec(sql: string): void;
  prepare(sql: string): DriverStatement;
  close(): void;
}

export interface SqliteDriver {
  readonly name: "node:sqlite" | "bun:sqlite";
  open(path: string): DriverDatabase;
}

interface NodeStatement {
  columns(): { name: string }[];
  all(...b: DriverValue[]): DriverRow[];
  iterate(...b: DriverValue[]): IterableIterator<DriverRow>;
  run(...b: DriverValue[]): { changes: number | bigint };
}
interface NodeDatabase {
  exec(sql: string): void;
  prepare(sql: string): NodeStatement;
  close(): void;
}

interface BunStatement {
  columnNames: string[];
  all(...b: DriverValue[]): DriverRow[];
  iterate(...b: DriverValue[]): IterableIterator<DriverRow>;
  run(...b: DriverValue[]): { changes: number };
  finalize(): void;
}
interface BunDatabase {
  exec(sql: string): void;
  prepare(sql: string): BunStatement;
  close(throwOnError?: boolean): void;
}

function nodeDriver(mod: { DatabaseSync: new (path: string) => NodeDatabase }): SqliteDriver {
  return {
    name: "node:sqlite",
    open(path) {
      const db = new mod.DatabaseSync(path);
      return {
        exec: (sql) => db.exec(sql),
        prepare(sql) {
          const stmt = db.prepare(sql);
          return {
            columnNames: () => stmt.columns().map((c) => c.name),
            all: (...b) => stmt.all(...b),
            iterate: (...b) => stmt.iterate(...b),
            run: (...b) => ({ changes: Number(stmt.run(...b).changes) }),
          };
        },
        close: () => db.close(),
      };
    },
  };
}

function bunDriver(mod: {
  Database: new (path: string, options: { create: boolean; strict: boolean }) => BunDatabase;
}): SqliteDriver {
  return {
    name: "bun:sqlite",
    open(path) {
      const db = new mod.Database(path, { create: true, strict: true });
      return {
        exec: (sql) => db.exec(sql),
        prepare(sql) {
          // Not cached by Bun (db.query would cache): the storage layer keeps its own cache.
          const stmt = db.prepare(sql);
          return {
            columnNames: () => stmt.columnNames,
            all: (...b) => stmt.all(...b),
            iterate: (...b) => stmt.iterate(...b),
            run: (...b) => ({ changes: stmt.run(...b).changes }),
          };
        },
        close: () => db.close(false),
      };
    },
  };
}

/** The SQLite driver of the runtime this process runs on. */
export async function loadSqliteDriver(): Promise<SqliteDriver> {
  if ("Bun" in globalThis) {
    const specifier = "bun:sqlite";
    return bunDriver(await import(specifier));
  }
  const specifier = "node:sqlite";
  return nodeDriver(await import(specifier));
}
