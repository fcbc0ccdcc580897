/**
 * The portable host: the Worker's module (functions/worker.ts) in one process, its Durable
 * Objects on SQLite under a data directory (one file per object:
 * `DATA/objects/<Class>/<id>.sqlite`), their alarms re-armed at start, and the Worker's `fetch`
 * and `scheduled` handlers called with an `env` of namespaces and settings.
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type {
  ExecutionContext,
  ObjectClass,
  ObjectId,
  ObjectState,
  WorkerModule,
} from "./boundary.ts";
import { ObjectExecutor } from "./executor.ts";
import { HostNamespace, idFromString } from "./namespace.ts";
import type { SqliteDriver } from "./sqlite-driver.ts";
import {
  isEmptyDatabase,
  openObjectDatabase,
  SqliteObjectStorage,
  type Synchronous,
  storedAlarm,
} from "./sqlite-storage.ts";
import { Tracker } from "./tracker.ts";

export interface HostOptions {
  dataDir: string;
  driver: SqliteDriver;
  worker: WorkerModule<never>;
  /** Binding name → exported class name (functions/host/bindings.ts). */
  bindings: Readonly<Record<string, string>>;
  /** Vars and secrets (functions/host/settings.ts). */
  settings: Readonly<Record<string, string>>;
  log?: (message: string, error?: unknown) => void;
  /** Commit durability (functions/host/sqlite-storage.ts); default `full`. */
  synchronous?: Synchronous;
  /** Objects idle this long are evicted from memory (default 10 minutes). */
  evictIdleMs?: number;
}

const EVICT_IDLE_MS = 10 * 60_000;

export class PortableHost {
  readonly env: Record<string, unknown>;
  readonly tracker = new Tracker();
  private readonly options: HostOptions;
  private readonly executors = new Map<string, ObjectExecutor>();
  private readonly classes = new Map<string, ObjectClass>();
  private closing = false;
  private evictTimer: ReturnType<typeof setInterval> | null = null;

  private constructor(options: HostOptions) {
    this.options = options;
    const env: Record<string, unknown> = { ...options.settings };
    for (const [binding, className] of Object.entries(options.bindings)) {
      const cls = options.worker[className];
      if (typeof cls !== "function") {
        throw new Error(`the Worker exports no class ${className} (binding ${binding})`);
      }
      this.classes.set(className, cls as ObjectClass);
      mkdirSync(this.classDir(className), { recursive: true });
      env[binding] = new HostNamespace(className, (id) => this.executor(className, id));
    }
    this.env = env;
  }

  /** Opens the data directory and re-arms every stored alarm. */
  static async start(options: HostOptions): Promise<PortableHost> {
    const host = new PortableHost(options);
    await host.restoreAlarms();
    const idleMs = options.evictIdleMs ?? EVICT_IDLE_MS;
    host.evictTimer = setInterval(
      () => host.evictIdle(Date.now(), idleMs),
      Math.min(idleMs, 60_000),
    );
    host.evictTimer.unref?.();
    return host;
  }

  private classDir(className: string): string {
    return join(this.options.dataDir, "objects", className);
  }

  private log(message: string, error?: unknown): void {
    (this.options.log ?? ((m, e) => console.error(m, e ?? "")))(message, error);
  }

  private executor(className: string, id: ObjectId): ObjectExecutor {
    const key = `${className}/${id.toString()}`;
    let executor = this.executors.get(key);
    if (!executor) {
      const cls = this.classes.get(className)!;
      const path = join(this.classDir(className), `${id.toString()}.sqlite`);
      executor = new ObjectExecutor({
        id,
        tracker: this.tracker,
        openStorage: (alarmChanged) =>
          new SqliteObjectStorage(
            openObjectDatabase(this.options.driver, path, this.options.synchronous),
            // An object only ever read (a lookup of a name nobody wrote) leaves no file behind,
            // as on Cloudflare, where reading does not create an object's storage.
            { alarmChanged, closed: (empty) => empty && removeDatabase(path) },
          ),
        construct: (state: ObjectState) => new cls(state, this.env as never),
        onAlarmError: (error) => this.log(`alarm of ${className} ${id.toString()} failed`, error),
      });
      this.executors.set(key, executor);
    }
    return executor;
  }

  private async restoreAlarms(): Promise<void> {
    for (const className of this.classes.keys()) {
      for (const file of readdirSync(this.classDir(className))) {
        const match = /^([0-9a-f]{64})\.sqlite$/.exec(file);
        if (!match) continue;
        const db = openObjectDatabase(this.options.driver, join(this.classDir(className), file));
        let alarm: number | null;
        let empty: boolean;
        try {
          alarm = storedAlarm(db);
          empty = isEmptyDatabase(db);
        } finally {
          db.close();
        }
        if (empty) removeDatabase(join(this.classDir(className), file));
        if (alarm !== null) await this.executor(className, idFromString(match[1]!)).restoreAlarm();
      }
    }
  }

  private executionContext(): ExecutionContext {
    return {
      waitUntil: (promise) => {
        this.tracker.track(promise);
      },
      passThroughOnException: () => {},
      props: {},
    };
  }

  /** The Worker's `fetch`. */
  fetch(request: Request): Promise<Response> {
    if (this.closing) return Promise.resolve(new Response("shutting down", { status: 503 }));
    return this.tracker.track(
      Promise.resolve(
        this.options.worker.default.fetch(request, this.env as never, this.executionContext()),
      ),
    );
  }

  /** The Worker's `scheduled` (the cron trigger). */
  async scheduled(scheduledTime: number, cron: string): Promise<void> {
    const handler = this.options.worker.default.scheduled;
    if (!handler || this.closing) return;
    await this.tracker.track(
      handler(
        { scheduledTime, cron, noRetry: () => {} },
        this.env as never,
        this.executionContext(),
      ),
    );
  }

  /** Evicts idle objects; an executor without an armed alarm is forgotten entirely. */
  evictIdle(nowMs: number, idleMs: number): number {
    let evicted = 0;
    for (const [key, executor] of this.executors) {
      if (!executor.evictIfIdle(nowMs, idleMs)) continue;
      evicted++;
      if (!executor.alarmArmed) this.executors.delete(key);
    }
    return evicted;
  }

  /** Objects with an executor in memory (evicted ones with an armed alarm included). */
  get objectCount(): number {
    return this.executors.size;
  }

  /**
   * Graceful stop: no new alarm runs, work in flight (requests, alarm runs, calls between
   * objects) finishes, then every database commits and closes.
   */
  async close(): Promise<void> {
    this.closing = true;
    if (this.evictTimer) clearInterval(this.evictTimer);
    for (const executor of this.executors.values()) executor.stopAlarms();
    await this.tracker.drain();
    for (const executor of this.executors.values()) executor.close();
    this.executors.clear();
  }
}

/** Removes a database file and its WAL companions. */
function removeDatabase(path: string): void {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
}
