/**
 * The host boundary: everything the Worker's code (functions/app.ts, functions/cron.ts and the
 * Durable Object classes in functions/objects/) asks of the platform it runs on. Types only.
 *
 * Cloudflare implements it with Workers and Durable Objects (the objects import `DurableObject`
 * from `cloudflare:workers` and receive a `DurableObjectState`); the portable host
 * (functions/host/, `switchyard serve`) implements it on SQLite in one process and resolves
 * `cloudflare:workers` to functions/host/cloudflare-workers.ts, so the object classes stay one
 * code base. Only the members listed here are provided; code that starts using another one
 * (e.g. `ctx.storage.get`, `ctx.storage.sql.databaseSize`) must add it here and to the portable
 * host first.
 */

/** A value SQLite stores and returns (Durable Objects' `SqlStorageValue`). */
export type SqlValue = ArrayBuffer | string | number | null;

export type SqlRow = Record<string, SqlValue>;

/**
 * The cursor `sql.exec` returns. Read rows stream as the caller iterates (the compact graph
 * reads rely on it); a statement that reads nothing has run when `exec` returns.
 */
export interface SqlCursor<Row extends SqlRow = SqlRow> extends Iterable<Row> {
  next(): IteratorResult<Row>;
  toArray(): Row[];
  /** Exactly one row, else it throws. */
  one(): Row;
  raw<T extends SqlValue[] = SqlValue[]>(): IterableIterator<T>;
  readonly columnNames: string[];
  readonly rowsRead: number;
  readonly rowsWritten: number;
}

/** `ctx.storage.sql`: one SQLite database per object. */
export interface ObjectSql {
  exec<Row extends SqlRow = SqlRow>(query: string, ...bindings: SqlValue[]): SqlCursor<Row>;
}

/** `ctx.storage`: the SQL database, synchronous transactions, one alarm. */
export interface ObjectStorage {
  readonly sql: ObjectSql;
  /** Runs `fn` as one transaction (nested calls are savepoints); a throw rolls it back. */
  transactionSync<T>(fn: () => T): T;
  /** The alarm's time in epoch milliseconds, or null when none is set. */
  getAlarm(): Promise<number | null>;
  /** Replaces the object's one alarm; it survives restarts (persisted in the object's database). */
  setAlarm(scheduledTime: number | Date): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** An object's identity: a name hashed into a 64-hex-digit id. */
export interface ObjectId {
  toString(): string;
  equals(other: ObjectId): boolean;
  /** The name it was made from (`idFromName`), when known. */
  readonly name?: string | undefined;
}

/** The `ctx` (DurableObjectState) an object's constructor receives. */
export interface ObjectState {
  readonly id: ObjectId;
  readonly storage: ObjectStorage;
  /**
   * Holds every other event for this object until `fn` settles (used in constructors to finish
   * asynchronous start-up before the first request). A rejection resets the object.
   */
  blockConcurrencyWhile<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Keeps the host alive (and shutdown waiting) until the promise settles. */
  waitUntil(promise: Promise<unknown>): void;
}

/** An object class as the host constructs it. */
export type ObjectClass = new (ctx: ObjectState, env: never) => object;

/**
 * A stub: each method of the object, called across the object boundary. Arguments and results
 * are structured-cloned (no shared references, functions refused), and every call is async.
 */
export type ObjectStub<T> = {
  readonly [K in keyof T as T[K] extends (...args: never[]) => unknown ? K : never]: T[K] extends (
    ...args: infer A
  ) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
} & { readonly id: ObjectId; readonly name?: string | undefined };

/** A Durable Object namespace binding (`env.REPO`): names → ids → stubs. */
export interface ObjectNamespace<T = object> {
  idFromName(name: string): ObjectId;
  idFromString(hex: string): ObjectId;
  get(id: ObjectId): ObjectStub<T>;
}

/** The controller the cron handler receives (Workers' `ScheduledController`). */
export interface ScheduledEvent {
  readonly scheduledTime: number;
  readonly cron: string;
  noRetry(): void;
}

/** The third argument of `fetch` and `scheduled` (Workers' `ExecutionContext`). */
export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
  readonly props: unknown;
}

/** The Worker module's default export as the host drives it (functions/worker.ts). */
export interface WorkerHandlers<Env> {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response>;
  scheduled?(controller: ScheduledEvent, env: Env, ctx: ExecutionContext): Promise<void>;
}

/** What the host imports: the handlers and the object classes the bindings name. */
export interface WorkerModule<Env = Record<string, unknown>> {
  default: WorkerHandlers<Env>;
  [className: string]: unknown;
}
