// The portable host's object executor (functions/host/executor.ts) keeps Durable Object
// ordering under random interleavings (fast-check's scheduler decides when every awaited
// "network" call returns): events start in arrival order, one event's transactions never
// interleave with another's, objects awaiting each other make progress, blockConcurrencyWhile
// holds events, and values are cloned across the boundary.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { ObjectState, ObjectStub } from "../../../functions/host/boundary.ts";
import { ObjectExecutor } from "../../../functions/host/executor.ts";
import { idFromName, stubFor } from "../../../functions/host/namespace.ts";
import { loadSqliteDriver, type SqliteDriver } from "../../../functions/host/sqlite-driver.ts";
import { openObjectDatabase, SqliteObjectStorage } from "../../../functions/host/sqlite-storage.ts";
import { Tracker } from "../../../functions/host/tracker.ts";

let driver: SqliteDriver;
beforeAll(async () => {
  driver = await loadSqliteDriver();
});

type Step = { kind: "tx"; rows: number } | { kind: "net" } | { kind: "peer"; steps: Step[] };

interface World {
  net: () => Promise<void>;
  peers: Map<string, ObjectStub<TestObject>>;
  started: string[];
  gate: Promise<void>;
}

/** A test object: its calls run a plan of transactions, network waits and calls to the peer. */
class TestObject {
  private readonly ctx: ObjectState;
  private readonly world: World;
  private readonly name: string;
  constructor(ctx: ObjectState, world: World, name: string) {
    this.ctx = ctx;
    this.world = world;
    this.name = name;
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY AUTOINCREMENT, call TEXT, tx INTEGER, i INTEGER)",
    );
  }

  async run(call: string, steps: Step[]): Promise<number> {
    this.world.started.push(`${this.name}:${call}`);
    let txs = 0;
    for (const [index, step] of steps.entries()) {
      if (step.kind === "tx") {
        const tx = txs++;
        this.ctx.storage.transactionSync(() => {
          for (let i = 0; i < step.rows; i++) {
            this.ctx.storage.sql.exec(
              "INSERT INTO log (call, tx, i) VALUES (?, ?, ?)",
              call,
              tx,
              i,
            );
          }
        });
      } else if (step.kind === "net") {
        await this.world.net();
      } else {
        const peer = this.world.peers.get(this.name === "a" ? "b" : "a")!;
        await peer.run(`${call}>${index}`, step.steps);
      }
    }
    return txs;
  }

  log(): Array<{ seq: number; call: string; tx: number; i: number }> {
    return this.ctx.storage.sql
      .exec<{ seq: number; call: string; tx: number; i: number }>(
        "SELECT seq, call, tx, i FROM log ORDER BY seq",
      )
      .toArray();
  }

  mutate(value: { n: number }): { n: number } {
    value.n += 1;
    return value;
  }

  /** Holds the object's events until the world's gate opens (returns at once). */
  block(): void {
    void this.ctx.blockConcurrencyWhile(() => this.world.gate);
  }
}

function makeObjects(world: World) {
  const tracker = new Tracker();
  const executors = new Map<string, ObjectExecutor>();
  for (const name of ["a", "b"]) {
    const id = idFromName("TestObject", name);
    const executor = new ObjectExecutor({
      id,
      tracker,
      openStorage: (alarmChanged) =>
        new SqliteObjectStorage(openObjectDatabase(driver, ":memory:"), { alarmChanged }),
      construct: (state) => new TestObject(state, world, name),
    });
    executors.set(name, executor);
    world.peers.set(
      name,
      stubFor<TestObject>(id, () => executor),
    );
  }
  return {
    executors,
    close: () => {
      for (const e of executors.values()) e.close();
    },
  };
}

const step: fc.Memo<Step> = fc.memo((depth) =>
  depth <= 1
    ? fc.oneof(
        fc.record({ kind: fc.constant("tx" as const), rows: fc.integer({ min: 1, max: 4 }) }),
        fc.constant({ kind: "net" as const }),
      )
    : fc.oneof(
        fc.record({ kind: fc.constant("tx" as const), rows: fc.integer({ min: 1, max: 4 }) }),
        fc.constant({ kind: "net" as const }),
        fc.record({
          kind: fc.constant("peer" as const),
          steps: fc.array(step(depth - 1), { maxLength: 4 }),
        }),
      ),
);

/** Lets the executors' macrotasks and the scheduler's releases run until `done`, or fails. */
async function settle(s: fc.Scheduler, done: () => boolean): Promise<void> {
  for (let round = 0; round < 2_000 && !done(); round++) {
    if (s.count() > 0) await s.waitOne();
    else await new Promise((resolve) => setImmediate(resolve));
  }
  if (!done()) throw new Error("no progress: the calls are stuck (a deadlock)");
}

describe("the object executor", () => {
  it("never interleaves transactions, starts calls in order, and objects awaiting each other make progress", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(
          fc.record({
            target: fc.constantFrom("a", "b"),
            steps: fc.array(step(3), { minLength: 1, maxLength: 5 }),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        async (s, calls) => {
          const world: World = {
            net: () => s.schedule(Promise.resolve(), "net"),
            peers: new Map(),
            started: [],
            gate: Promise.resolve(),
          };
          const { close } = makeObjects(world);
          try {
            let finished = 0;
            const results = calls.map((c, n) =>
              world.peers
                .get(c.target)!
                .run(`c${n}`, c.steps)
                .finally(() => {
                  finished++;
                }),
            );
            await settle(s, () => finished === calls.length);
            await Promise.all(results);
            // Top-level calls to one object start in the order they arrived.
            for (const name of ["a", "b"]) {
              const arrived = calls.flatMap((c, n) => (c.target === name ? [`${name}:c${n}`] : []));
              const started = world.started.filter((e) => arrived.includes(e));
              expect(started).toEqual(arrived);
            }
            // Each transaction's rows are contiguous in the object's log: nothing interleaved.
            for (const name of ["a", "b"]) {
              const log = await world.peers.get(name)!.log();
              const seen = new Set<string>();
              let current = "";
              for (const row of log) {
                const key = `${row.call}/${row.tx}`;
                if (key !== current) {
                  expect(seen.has(key)).toBe(false);
                  seen.add(key);
                  current = key;
                  expect(row.i).toBe(0);
                }
              }
            }
          } finally {
            close();
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("holds every event while blockConcurrencyWhile runs", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const world: World = { net: async () => {}, peers: new Map(), started: [], gate };
    const { close } = makeObjects(world);
    const a = world.peers.get("a")!;
    await a.block();
    const held = a.run("held", [{ kind: "tx", rows: 1 }]);
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(world.started).toEqual([]);
    release();
    expect(await held).toBe(1);
    expect(world.started).toEqual(["a:held"]);
    // A function cannot cross the boundary (it does not clone).
    await expect(a.mutate((() => {}) as never)).rejects.toThrow(/cannot cross the object boundary/);
    close();
  });

  it("clones arguments and results: the caller's object is never the callee's", async () => {
    const world: World = {
      net: async () => {},
      peers: new Map(),
      started: [],
      gate: Promise.resolve(),
    };
    const { close } = makeObjects(world);
    const value = { n: 1 };
    const result = await world.peers.get("a")!.mutate(value);
    expect(value.n).toBe(1);
    expect(result).toEqual({ n: 2 });
    close();
  });
});

describe("idle eviction", () => {
  it("drops an idle object and its open database; the next call constructs it again on the same data", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-evict-"));
    let constructed = 0;
    const world: World = {
      net: async () => {},
      peers: new Map(),
      started: [],
      gate: Promise.resolve(),
    };
    const id = idFromName("TestObject", "a");
    const executor = new ObjectExecutor({
      id,
      tracker: new Tracker(),
      openStorage: (alarmChanged) =>
        new SqliteObjectStorage(openObjectDatabase(driver, join(dir, "a.sqlite")), {
          alarmChanged,
        }),
      construct: (state) => {
        constructed++;
        return new TestObject(state, world, "a");
      },
    });
    const a = stubFor<TestObject>(id, () => executor);
    await a.run("one", [{ kind: "tx", rows: 2 }]);
    // Not idle long enough, then evicted.
    expect(executor.evictIfIdle(Date.now(), 60_000)).toBe(false);
    expect(executor.evictIfIdle(Date.now() + 60_000, 60_000)).toBe(true);
    expect(executor.evictIfIdle(Date.now() + 120_000, 60_000)).toBe(false);
    await a.run("two", [{ kind: "tx", rows: 1 }]);
    expect(constructed).toBe(2);
    expect((await a.log()).map((r) => r.call)).toEqual(["one", "one", "two"]);
    // A call in flight (awaiting the network) keeps the object.
    let release!: () => void;
    world.net = () =>
      new Promise<void>((resolve) => {
        release = resolve;
      });
    const pending = a.run("three", [{ kind: "net" }, { kind: "tx", rows: 1 }]);
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(executor.evictIfIdle(Date.now() + 3_600_000, 60_000)).toBe(false);
    release();
    await pending;
    executor.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

/** An object whose constructor starts up under blockConcurrencyWhile (loads, then is ready). */
class StartingObject {
  ready = false;
  constructor(ctx: ObjectState, startUp: () => Promise<void>) {
    void ctx.blockConcurrencyWhile(async () => {
      await startUp();
      this.ready = true;
    });
  }
  isReady(): boolean {
    return this.ready;
  }
  alarm(): void {
    alarmsSawReady.push(this.ready);
  }
}
const alarmsSawReady: boolean[] = [];

describe("start-up under blockConcurrencyWhile", () => {
  function starting(startUp: () => Promise<void>) {
    const id = idFromName("StartingObject", crypto.randomUUID());
    let constructed = 0;
    const executor = new ObjectExecutor({
      id,
      tracker: new Tracker(),
      openStorage: (alarmChanged) =>
        new SqliteObjectStorage(openObjectDatabase(driver, ":memory:"), { alarmChanged }),
      construct: (state) => {
        constructed++;
        return new StartingObject(state, startUp);
      },
    });
    return {
      executor,
      stub: stubFor<StartingObject>(id, () => executor),
      constructed: () => constructed,
    };
  }
  const later = () => new Promise<void>((resolve) => setTimeout(resolve, 20));

  it("holds the event that constructs the object until its constructor's block settles", async () => {
    const { executor, stub } = starting(later);
    expect(await stub.isReady()).toBe(true);
    executor.close();
  });

  it("holds an alarm that constructs the object too", async () => {
    const { executor } = starting(later);
    alarmsSawReady.length = 0;
    const storage = (executor as unknown as { store(): SqliteObjectStorage }).store();
    const at = Date.now() - 1;
    await storage.setAlarm(at);
    await executor.fireAlarm(at);
    expect(alarmsSawReady).toEqual([true]);
    executor.close();
  });

  it("a failed start-up fails the event that constructed it; the next event starts a new instance", async () => {
    let fail = true;
    const { executor, stub, constructed } = starting(async () => {
      await later();
      if (fail) throw new Error("start-up failed");
    });
    await expect(stub.isReady()).rejects.toThrow(/start-up failed/);
    fail = false;
    expect(await stub.isReady()).toBe(true);
    expect(constructed()).toBe(2);
    executor.close();
  });
});
