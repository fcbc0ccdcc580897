/**
 * One object's executor: the ordering a Durable Object gives, in one process.
 *
 * - Events (RPC calls, alarm runs) are delivered one at a time, in arrival order, each in a
 *   macrotask of its own: an event's synchronous code and the microtasks it queues (storage
 *   calls resolve at once) run to the end before the next event starts. Storage is synchronous
 *   SQLite, so one object's statements and transactions never interleave with another event's.
 * - An `await` on the network or on another object lets the next event in (as the input gate
 *   opens while a Durable Object waits on I/O), so objects that call each other cannot deadlock.
 * - `blockConcurrencyWhile` holds all further events until its callback settles, and a block
 *   started by the constructor holds the event that constructed the object too; a rejection
 *   resets the object (a new instance on the next event), as on Cloudflare.
 * - Arguments and results cross the boundary through structuredClone (no shared references;
 *   functions are refused), as across a real object boundary.
 * - One alarm at a time, retried with backoff when it throws (up to six retries).
 */
import type { ObjectId, ObjectState } from "./boundary.ts";
import type { SqliteObjectStorage } from "./sqlite-storage.ts";
import type { Tracker } from "./tracker.ts";

const MAX_TIMER_MS = 2 ** 31 - 1;
const ALARM_RETRIES = 6;

const nextMacrotask: (fn: () => void) => void =
  typeof globalThis.setImmediate === "function"
    ? (fn) => {
        globalThis.setImmediate(fn);
      }
    : (fn) => {
        setTimeout(fn, 0);
      };

export interface ExecutorOptions {
  id: ObjectId;
  /** Opens the object's storage; `alarmChanged` is the executor's own hook. */
  openStorage(alarmChanged: (atMs: number | null) => void): SqliteObjectStorage;
  /** Constructs the object class. */
  construct(state: ObjectState): object;
  tracker: Tracker;
  /** Called for an alarm handler's failure (logged by the host). */
  onAlarmError?(error: unknown): void;
}

type Turn = () => Promise<void>;

function cloneAcross<T>(value: T, what: string): T {
  try {
    return structuredClone(value);
  } catch (error) {
    throw new TypeError(`${what} cannot cross the object boundary: ${String(error)}`);
  }
}

export class ObjectExecutor {
  readonly id: ObjectId;
  private readonly options: ExecutorOptions;
  private storage: SqliteObjectStorage | null = null;
  private instance: object | null = null;
  private readonly queue: Turn[] = [];
  private blockers = 0;
  private pumping = false;
  private closed = false;
  private alarmTimer: ReturnType<typeof setTimeout> | null = null;
  private alarmRunning: Promise<void> | null = null;
  private alarmRetries = 0;
  private alarmsStopped = false;
  /** Events started and not finished (an event awaiting the network counts). */
  private running = 0;
  private lastActiveMs = Date.now();
  /** Counts instances: a failed start-up resets only the instance it belonged to. */
  private generation = 0;
  /** Whether the constructor is running, and the blocks it started (its start-up). */
  private constructing = false;
  private startup: Promise<unknown>[] = [];

  constructor(options: ExecutorOptions) {
    this.id = options.id;
    this.options = options;
  }

  /** Storage opened on first use (and the stored alarm armed). */
  private store(): SqliteObjectStorage {
    if (!this.storage) {
      this.storage = this.options.openStorage((at) => this.armTimer(at));
    }
    return this.storage;
  }

  /** Re-arms the timer of an alarm stored by an earlier process (host start-up). */
  async restoreAlarm(): Promise<void> {
    this.armTimer(await this.store().getAlarm());
  }

  private state(): ObjectState {
    const storage = this.store();
    return {
      id: this.id,
      storage,
      blockConcurrencyWhile: (fn) => this.blockConcurrencyWhile(fn),
      waitUntil: (promise) => {
        this.options.tracker.track(promise);
      },
    };
  }

  /**
   * The instance, constructed if need be. The event that constructs it waits for the blocks
   * its constructor started (`blockConcurrencyWhile`), as Cloudflare holds it: the handler
   * never runs on a half-loaded object. A failed start-up fails that event (the next one
   * constructs a new instance).
   */
  private async object(): Promise<object> {
    if (!this.instance) {
      this.generation++;
      const state = this.state();
      this.startup = [];
      this.constructing = true;
      try {
        this.instance = this.options.construct(state);
      } finally {
        this.constructing = false;
      }
      const startup = this.startup;
      this.startup = [];
      await Promise.all(startup);
    }
    // A start-up that failed while this event waited left no instance.
    if (!this.instance) throw new Error("the object's start-up failed");
    return this.instance;
  }

  private blockConcurrencyWhile<T>(fn: () => T | Promise<T>): Promise<T> {
    this.blockers++;
    const generation = this.generation;
    const run = (async () => fn())();
    if (this.constructing) this.startup.push(run);
    void run.then(
      () => this.unblock(),
      () => {
        // A failed start-up leaves the instance in an unknown state: the next event gets a new one.
        if (this.generation === generation) this.instance = null;
        this.unblock();
      },
    );
    return run;
  }

  private unblock(): void {
    this.blockers--;
    this.schedulePump();
  }

  private schedulePump(): void {
    if (this.pumping || this.queue.length === 0 || this.blockers > 0) return;
    this.pumping = true;
    nextMacrotask(() => {
      this.pumping = false;
      if (this.blockers > 0) return; // unblock() schedules again
      const turn = this.queue.shift();
      if (turn) void turn();
      this.schedulePump();
    });
  }

  /** Queues an event; it starts after every earlier event started and no blocker is active. */
  private enqueue<T>(body: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error("the host is shutting down"));
    const done = new Promise<T>((resolve, reject) => {
      this.queue.push(async () => {
        this.running++;
        try {
          resolve(await body());
        } catch (error) {
          reject(error);
        } finally {
          this.running--;
          this.lastActiveMs = Date.now();
        }
      });
    });
    this.options.tracker.track(done);
    this.schedulePump();
    return done;
  }

  /** An RPC call: `stub.method(...args)`. */
  call(method: string, args: unknown[]): Promise<unknown> {
    let cloned: unknown[];
    try {
      cloned = cloneAcross(args, `an argument of ${method}()`);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.enqueue(async () => {
      const instance = (await this.object()) as Record<string, unknown>;
      const fn = instance[method];
      if (typeof fn !== "function" || method === "constructor" || method.startsWith("#")) {
        throw new TypeError(`The RPC receiver does not implement the method "${method}".`);
      }
      let result: unknown;
      try {
        result = await (fn as (...a: unknown[]) => unknown).apply(instance, cloned);
      } catch (error) {
        throw cloneError(error);
      }
      return cloneAcross(result, `the result of ${method}()`);
    });
  }

  private armTimer(atMs: number | null): void {
    if (this.alarmTimer) clearTimeout(this.alarmTimer);
    this.alarmTimer = null;
    if (atMs === null || this.alarmsStopped) return;
    const delay = Math.max(0, Math.min(atMs - Date.now(), MAX_TIMER_MS));
    this.alarmTimer = setTimeout(() => {
      this.alarmTimer = null;
      if (atMs > Date.now())
        this.armTimer(atMs); // past the longest timer: wait again
      else {
        this.fireAlarm(atMs).catch((error: unknown) => this.options.onAlarmError?.(error));
      }
    }, delay);
  }

  /** Runs the alarm due at `atMs` (one run at a time; a later alarm waits for the current run). */
  fireAlarm(atMs: number): Promise<void> {
    if (this.alarmRunning) {
      return this.alarmRunning.then(async () => {
        if ((await this.store().getAlarm()) === atMs) return this.fireAlarm(atMs);
      });
    }
    const run = this.enqueue(() => this.runAlarm(atMs));
    this.alarmRunning = run.finally(() => {
      this.alarmRunning = null;
    });
    return this.alarmRunning;
  }

  private async runAlarm(atMs: number): Promise<void> {
    const storage = this.store();
    if ((await storage.getAlarm()) !== atMs) return; // replaced or deleted meanwhile
    let instance: { alarm?: (info: unknown) => unknown };
    try {
      instance = (await this.object()) as typeof instance;
    } catch (error) {
      // The object cannot start: the alarm stays stored and is tried again shortly.
      this.armTimer(Date.now() + 5_000);
      throw error;
    }
    storage.alarmFired(atMs);
    if (typeof instance.alarm !== "function") {
      storage.alarmDone();
      return;
    }
    const retryCount = this.alarmRetries;
    try {
      await instance.alarm({ retryCount, isRetry: retryCount > 0 });
      this.alarmRetries = 0;
      storage.alarmDone();
    } catch (error) {
      this.options.onAlarmError?.(error);
      // Retried with backoff unless the handler set an alarm of its own before failing.
      if (this.alarmRetries < ALARM_RETRIES && (await storage.getAlarm()) === null) {
        this.alarmRetries++;
        await storage.setAlarm(Date.now() + 2_000 * 2 ** (this.alarmRetries - 1));
      } else {
        this.alarmRetries = 0;
        storage.alarmDone();
      }
    }
  }

  /**
   * Drops the instance and closes the database when nothing has run for `idleMs` and nothing
   * is running or queued (Cloudflare evicts idle objects too; the next event constructs a new
   * instance). The alarm timer stays: it reopens the object when it fires. Work an object left
   * running detached from any event (no such code in the Worker today) would find its storage
   * closed, hence the long idle time.
   */
  evictIfIdle(nowMs: number, idleMs: number): boolean {
    if (!this.storage || this.closed) return false;
    if (this.queue.length > 0 || this.running > 0 || this.blockers > 0 || this.alarmRunning) {
      return false;
    }
    if (nowMs - this.lastActiveMs < idleMs) return false;
    this.storage.close();
    this.storage = null;
    this.instance = null;
    return true;
  }

  /** Whether a stored alarm's timer is armed (the host keeps such an executor when evicting). */
  get alarmArmed(): boolean {
    return this.alarmTimer !== null;
  }

  /**
   * Shutdown, first step: no new alarm runs (their alarms stay stored for the next start).
   * Calls still come in: work in flight may need this object to finish.
   */
  stopAlarms(): void {
    this.alarmsStopped = true;
    if (this.alarmTimer) clearTimeout(this.alarmTimer);
    this.alarmTimer = null;
  }

  /** Closes the database (after `stopAlarms` and the host's drain); later calls are refused. */
  close(): void {
    this.stopAlarms();
    this.closed = true;
    this.storage?.close();
    this.storage = null;
    this.instance = null;
  }
}

/** An error as the caller sees it across the boundary: its type, message and stack, cloned. */
function cloneError(error: unknown): unknown {
  try {
    return structuredClone(error);
  } catch {
    return new Error(error instanceof Error ? error.message : String(error));
  }
}
