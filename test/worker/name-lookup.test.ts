// Name lookups off the one DirectoryObject (issue 10 item 5): every `/v1` request here goes
// through the Worker's app with the DIRECTORY binding poisoned (any use throws and is recorded),
// so the answers come from the name and id shards the directory writes through; the events
// (rename, removal, reinstall, a late removal) are applied by the real Worker beforehand.
import {
  createScheduledController,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { app } from "../../functions/app.ts";
import { scheduled } from "../../functions/cron.ts";
import type { Env } from "../../functions/env.ts";
import {
  type DirectoryEntry,
  DirectoryObject,
  directory,
} from "../../functions/objects/directory/directory-object.ts";
import { lookupName } from "../../functions/objects/directory/name-lookup.ts";
import {
  BUCKETS,
  bucketName,
  bucketOf,
  idShardKey,
  type NameObject,
  nameShardKey,
  type ShardOp,
  shard,
  shardAnswer,
} from "../../functions/objects/names/name-object.ts";
import {
  CHECK_TICK_MS,
  installationCheckSlot,
  installationChecksDue,
} from "../../shared/schedule/installation-check.ts";
import {
  deliverAll,
  install,
  repoStub,
  runInstallation,
  seed,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";

const DAY = 86_400_000;

/** Shard writes a directory still has queued. */
const pendingOf = (dir: DurableObjectStub<DirectoryObject>) =>
  runInDurableObject(dir, (o: DirectoryObject) =>
    (o as unknown as { store: { pending(): number } }).store.pending(),
  );

/** A name `prefix-<i>/app` whose key shares the bucket of `key` (the hash spreads them: try). */
function bucketMate(key: string, prefix: string, skip = 0): string {
  for (let i = 0, found = 0; ; i++) {
    const name = `${prefix}-${i}/app`;
    if (bucketOf(nameShardKey(name)) === bucketOf(key) && found++ === skip) return name;
  }
}

/** Every call the routes made to the DirectoryObject (each one also fails the request). */
const asked: string[] = [];
const poisoned = {
  ...env,
  DIRECTORY: new Proxy(
    {},
    {
      get(_, prop) {
        return () => {
          asked.push(String(prop));
          throw new Error("the DirectoryObject must not be on the request path");
        };
      },
    },
  ),
} as unknown as Env;

afterEach(() => {
  expect(asked, "DirectoryObject calls on the request path").toEqual([]);
});

async function v1(method: string, path: string, token: string, body?: unknown) {
  const response = await app.request(
    `https://switchyard.test/v1/repos/${path}`,
    {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    },
    poisoned,
  );
  const text = await response.text();
  return {
    status: response.status,
    body: (text ? JSON.parse(text) : null) as Record<string, unknown> | null,
  };
}

const graph = (name: string, token: string) => v1("GET", `${name}/graph`, token);

async function admin(login: string, repos: string[]): Promise<string> {
  const token = `ghp_${login.replace(/[^A-Za-z0-9]/g, "")}${crypto.randomUUID().replace(/-/g, "")}`;
  await sim("/users", {
    body: { login, token, repos: Object.fromEntries(repos.map((r) => [r, "admin"])) },
  });
  return token;
}

async function mintKey(name: string, token: string): Promise<string> {
  const answer = await v1("POST", `${name}/keys`, token, { name: "fleet" });
  expect(answer.status, `key for ${name}`).toBe(201);
  return String(answer.body?.key);
}

beforeAll(async () => {
  await sim("/reset", { method: "POST" });
});

describe("the route's memory of a complete directory", () => {
  // First in this file: the route remembers "complete" for the isolate's life (this file's
  // modules), and later tests' lookups make the real directory say it.
  it("does not take a directory of another layout's 'complete' for its own", async () => {
    // A directory still running the version before buckets: complete for its per-key objects.
    let asked = 0;
    const oldDirectory = {
      ...env,
      DIRECTORY: {
        idFromName: () => ({}),
        get: () => ({
          resolve: async () => {
            asked += 1;
            return { entry: null, shardsComplete: true };
          },
        }),
      },
    } as unknown as Env;
    // Keys no write reached (the buckets are still being filled): asked every time.
    expect(await lookupName(oldDirectory, "layout-a/app")).toBeNull();
    expect(await lookupName(oldDirectory, "layout-b/app")).toBeNull();
    expect(asked).toBe(2);
  });
});

describe("/v1 name lookups without the DirectoryObject", () => {
  it("a rename: the old name stops answering once the event is applied, the new one answers", async () => {
    const a = await install({ repo: "nl-rename/app", issues: [seedIssue(1), seedIssue(2)] });
    const user = await admin("nl-renamer", ["nl-rename/app"]);
    const key = await mintKey("nl-rename/app", user);
    expect((await graph("nl-rename/app", key)).status).toBe(200);

    await sim("/repos/nl-rename/app/rename", { body: { name: "app-new" } });
    await deliverAll();
    await settle(a.stub);
    expect((await directory(env).get(a.repoId))?.fullName).toBe("nl-rename/app-new");

    // The key's repository no longer has the old name: 403 with the key, 404 for a person.
    expect((await graph("nl-rename/app", key)).status).toBe(403);
    expect((await graph("nl-rename/app", user)).status).toBe(404);
    const renamed = await graph("nl-rename/app-new", key);
    expect(renamed.status).toBe(200);
    expect((renamed.body as { stats: { issues: number } }).stats.issues).toBe(2);
    // GitHub names are case-insensitive.
    expect((await graph("NL-Rename/App-New", key)).status).toBe(200);
    expect((await graph("nl-rename/APP-NEW", user)).status).toBe(200);
  }, 60_000);

  it("a removal: the key is unknown and the repository is not installed once it is applied", async () => {
    const r = await install({ repo: "nl-remove/app", issues: [seedIssue(1)] });
    const user = await admin("nl-remover", ["nl-remove/app"]);
    const key = await mintKey("nl-remove/app", user);
    expect((await graph("nl-remove/app", key)).status).toBe(200);

    await sim(`/installations/${r.installationId}/repositories`, { body: { remove: ["app"] } });
    await runInstallation(r.installationId);
    expect((await directory(env).get(r.repoId))?.status).toBe("removed");

    expect(await graph("nl-remove/app", key)).toMatchObject({ status: 401 });
    expect(await graph("nl-remove/app", user)).toMatchObject({
      status: 404,
      body: { error: "not-found" },
    });
  }, 60_000);

  it("a reinstall under the same name (a new repository id), then a late removal of the former one", async () => {
    const old = await install({ repo: "nl-reuse/app", issues: [seedIssue(1)] });
    const user = await admin("nl-reuser", ["nl-reuse/app"]);
    const oldKey = await mintKey("nl-reuse/app", user);
    expect((await graph("nl-reuse/app", oldKey)).status).toBe(200);

    await sim("/repos/nl-reuse/app", { method: "DELETE", body: {} });
    await deliverAll();
    await settle(old.stub);
    expect((await directory(env).get(old.repoId))?.status).toBe("removed");
    expect((await graph("nl-reuse/app", user)).status).toBe(404);

    const fresh = await seed(
      { repo: "nl-reuse/app", issues: [seedIssue(1), seedIssue(2), seedIssue(3)] },
      old.installationId,
    );
    expect(fresh.repoId).not.toBe(old.repoId);
    await runInstallation(old.installationId);
    await settle(repoStub(fresh.repoId));
    // A new token: GitHub's answer for the old one (the former repository's id) is cached.
    const owner = await admin("nl-reuser-2", ["nl-reuse/app"]);
    const key = await mintKey("nl-reuse/app", owner);
    const answer = await graph("nl-reuse/app", key);
    expect(answer.status).toBe(200);
    expect((answer.body as { stats: { issues: number } }).stats.issues).toBe(3);
    expect(await graph("nl-reuse/app", oldKey)).toMatchObject({ status: 401 });

    // A late or replayed removal of the name's former repository, stamped after the new one's
    // install: the installed repository keeps the name, in the directory and in its shard.
    const late: DirectoryEntry = {
      repoId: old.repoId,
      fullName: "nl-reuse/app",
      installationId: old.installationId,
      status: "removed",
    };
    await directory(env).upsert([late], Date.now() + DAY);
    expect((await directory(env).lookup("nl-reuse/app"))?.repoId).toBe(fresh.repoId);
    expect((await graph("nl-reuse/app", key)).status).toBe(200);
    expect((await graph("NL-REUSE/app", owner)).status).toBe(200);
    expect(await graph("nl-reuse/app", oldKey)).toMatchObject({ status: 401 });
  }, 60_000);

  it("a name no repository ever had: 404 from the shards once the directory said they are complete", async () => {
    const user = await admin("nl-stranger", ["nl-never/app"]);
    await sim("/repos", { body: { owner: "nl-never", name: "app" } });
    // First with the real directory (an isolate learns once that the shards are complete)...
    const first = await app.request(
      "https://switchyard.test/v1/repos/nl-never/app/graph",
      { headers: { authorization: `Bearer ${user}` } },
      env,
    );
    expect(first.status).toBe(404);
    // ...then without it: a shard that never received a write means "no such repository".
    expect((await graph("nl-never/app", user)).status).toBe(404);
  }, 60_000);
});

describe("shards follow the directory", () => {
  const entryOf = (seed: number, repoId: number, names: string[]): DirectoryEntry => ({
    repoId,
    fullName: names[seed % names.length]!,
    installationId: 1 + (seed % 2),
    status: (["active", "suspended", "removed"] as const)[seed % 3]!,
  });

  it("after any sequence of upserts, every name's and id's shard answers what the directory does", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            repoId: fc.integer({ min: 1, max: 4 }),
            pick: fc.nat(100),
            atMs: fc.integer({ min: 0, max: 5 }),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        async (steps) => {
          run += 1;
          // A directory of its own (same class, another name) and names no other run uses.
          const names = ["A/x", "a/X", "a/y", "b/z"].map((n) => `p${run}-${n}`);
          const own = env.DIRECTORY.get(env.DIRECTORY.idFromName(`property-${run}`));
          const base = 900_000_000 + run * 10;
          for (const s of steps) {
            await own.upsert([entryOf(s.pick, base + s.repoId, names)], s.atMs);
          }
          for (const name of names) {
            const answer = await shardAnswer(env, nameShardKey(name));
            expect(answer.entry, name).toEqual(await own.lookup(name));
          }
          for (let id = 1; id <= 4; id++) {
            const answer = await shardAnswer(env, idShardKey(base + id));
            expect(answer.entry, `#${base + id}`).toEqual(await own.get(base + id));
          }
        },
      ),
      { numRuns: 15 },
    );
  }, 60_000);

  it("writes delivered out of order or twice end in the latest state", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            repoId: fc.integer({ min: 1, max: 3 }),
            pick: fc.nat(100),
            present: fc.boolean(),
            atMs: fc.integer({ min: 0, max: 5 }),
          }),
          { minLength: 1, maxLength: 10 },
        ),
        fc.nat(),
        async (steps, seedValue) => {
          run += 1;
          const ops = (key: string): ShardOp[] =>
            steps.map((s, i) => ({
              key,
              repoId: s.repoId,
              seq: i + 1,
              updatedMs: s.atMs,
              entry: s.present ? entryOf(s.pick, s.repoId, ["o/n"]) : null,
            }));
          const a = `order-${run}-a`;
          for (const op of ops(a)) await shard(env, a).apply([op]);
          // A deterministic shuffle with a replayed prefix.
          // Another key of the same bucket, so both keys' rows live side by side.
          const b = bucketMate(a, `order-${run}-b`);
          const shuffled = [...ops(b), ...ops(b).slice(0, 2)]
            .map((op, i) => ({ op, k: (Math.imul(i + 1, 0x9e3779b1) ^ seedValue) >>> 0 }))
            .sort((x, y) => x.k - y.k)
            .map((x) => x.op);
          for (const op of shuffled) await shard(env, b).apply([op]);
          expect(await shardAnswer(env, b)).toEqual(await shardAnswer(env, a));
        },
      ),
      { numRuns: 30 },
    );
  }, 60_000);

  it("keys that share a bucket answer each their own repository", async () => {
    // Names whose keys land in the bucket of the first.
    const first = "mates-0/app";
    const mates = [first, ...[1, 2, 3].map((k) => bucketMate(first, "mates", k))];
    const own = env.DIRECTORY.get(env.DIRECTORY.idFromName("bucket-mates"));
    const [a, b, c, never] = mates as [string, string, string, string];
    await own.upsert(
      [
        { repoId: 700_000_001, fullName: a, installationId: 1, status: "active" },
        { repoId: 700_000_002, fullName: b, installationId: 2, status: "suspended" },
        { repoId: 700_000_003, fullName: c, installationId: 3, status: "active" },
      ],
      1_000,
    );
    // c renamed to a name outside the bucket; b removed.
    await own.upsert(
      [
        { repoId: 700_000_003, fullName: "elsewhere/app", installationId: 3, status: "active" },
        { repoId: 700_000_002, fullName: b, installationId: 2, status: "removed" },
      ],
      2_000,
    );
    expect(await shardAnswer(env, nameShardKey(a))).toEqual({
      known: true,
      entry: { repoId: 700_000_001, fullName: a, installationId: 1, status: "active" },
    });
    expect((await shardAnswer(env, nameShardKey(b))).entry).toEqual(await own.lookup(b));
    expect((await shardAnswer(env, nameShardKey(b))).entry?.status).toBe("removed");
    // The former name of c is known (its repository left it) and answers nothing.
    expect(await shardAnswer(env, nameShardKey(c))).toEqual({ known: true, entry: null });
    expect(await shardAnswer(env, nameShardKey(never))).toEqual({ known: false, entry: null });
    expect((await shardAnswer(env, nameShardKey("Elsewhere/App"))).entry?.repoId).toBe(700_000_003);
    // Every key's writes were delivered, not only the first of its bucket's.
    expect(await pendingOf(own)).toBe(0);
  });

  it("a bucket that cannot be written fails the upsert; the others are written, the alarm delivers the rest", async () => {
    const own = env.DIRECTORY.get(env.DIRECTORY.idFromName("bucket-down"));
    const entry = {
      repoId: 700_100_001,
      fullName: "down-a/app",
      installationId: 1,
      status: "active" as const,
    };
    const downBucket = env.NAMES.idFromName(bucketName(nameShardKey(entry.fullName)));
    // The id's key is in another bucket than the name's.
    expect(bucketOf(idShardKey(entry.repoId))).not.toBe(bucketOf(nameShardKey(entry.fullName)));
    const failing = {
      ...env,
      NAMES: {
        idFromName: (name: string) => env.NAMES.idFromName(name),
        get: (id: DurableObjectId) =>
          id.equals(downBucket)
            ? {
                apply: async () => {
                  throw new Error("bucket unavailable");
                },
              }
            : env.NAMES.get(id),
      },
    } as unknown as Env;
    await runInDurableObject(own, async (_: DirectoryObject, state) => {
      const dir = new DirectoryObject(state, failing);
      await expect(dir.upsert([entry], 1_000)).rejects.toThrow("bucket unavailable");
    });
    expect(await shardAnswer(env, idShardKey(entry.repoId))).toEqual({ known: true, entry });
    expect(await shardAnswer(env, nameShardKey(entry.fullName))).toEqual({
      known: false,
      entry: null,
    });
    expect(await pendingOf(own)).toBe(1);
    expect(await runDurableObjectAlarm(own)).toBe(true);
    expect(await shardAnswer(env, nameShardKey(entry.fullName))).toEqual({ known: true, entry });
    expect(await pendingOf(own)).toBe(0);
  });

  it("a lookup without its key (an isolate of the version before buckets) fails, it is not told 'no such repository'", async () => {
    await runInDurableObject(shard(env, nameShardKey("mates-0/app")), (o: NameObject) => {
      const oldStyle = o.lookup as unknown as () => unknown;
      expect(() => oldStyle.call(o)).toThrow(/names its key/);
    });
    // A directory of that version writing a per-key object the old way: refused, nothing made.
    const perKey = env.NAMES.get(env.NAMES.idFromName("old-style/app"));
    await runInDurableObject(perKey, (o: NameObject, state) => {
      const oldOp = { repoId: 1, seq: 1, updatedMs: 1, entry: null } as unknown as ShardOp;
      expect(() => o.apply([oldOp])).toThrow(/names its key/);
      const tables = state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE name = 'shard_entries'")
        .toArray();
      expect(tables).toEqual([]);
    });
  });

  it("a key's bucket is stable: FNV-1a of its UTF-8 bytes, modulo BUCKETS", () => {
    // Changing it moves every key to another object: only with a directory migration that
    // queues every entry again (directory-store.ts).
    expect(BUCKETS).toBe(256);
    expect(bucketOf("a")).toBe(0xe40c292c % 256);
    expect(bucketOf("")).toBe(0x811c9dc5 % 256);
    expect(bucketOf("foobar")).toBe(0xbf9cf968 % 256);
    expect(bucketOf("#1")).not.toBe(bucketOf("#2"));
  });
});

describe("the upgrade that introduced shards", () => {
  /** Writes `rows` straight into the directory's `repos` table, as an earlier version stored them. */
  const storeRows = (sql: SqlStorage, rows: DirectoryEntry[]) =>
    rows.forEach((r, i) => {
      sql.exec(
        "INSERT INTO repos (id, full_name, name_key, installation_id, status, updated_ms) VALUES (?, ?, ?, ?, ?, ?)",
        r.repoId,
        r.fullName,
        r.fullName.toLowerCase(),
        r.installationId,
        r.status,
        1_000 + i,
      );
    });

  it("entries stored before the shards existed reach them (the migration's backfill, by the alarm)", async () => {
    const own = env.DIRECTORY.get(env.DIRECTORY.idFromName("backfill"));
    const rows: DirectoryEntry[] = [
      { repoId: 800_000_001, fullName: "bf-one/App", installationId: 7, status: "active" },
      { repoId: 800_000_002, fullName: "bf-one/app", installationId: 7, status: "removed" },
      { repoId: 800_000_003, fullName: "bf-two/app", installationId: 8, status: "suspended" },
    ];
    await runInDurableObject(own, async (instance: DirectoryObject, state) => {
      // The storage as the directory left it before shards: schema version 1, some entries.
      const sql = state.storage.sql;
      sql.exec("DROP TABLE shard_outbox");
      sql.exec("DROP TABLE meta");
      sql.exec("UPDATE _schema SET version = 1");
      storeRows(sql, rows);
      // The new version's constructor over that storage: it migrates and queues the backfill.
      new DirectoryObject(state, env);
      expect(instance.shardsComplete()).toBe(false);
    });
    expect((await shardAnswer(env, nameShardKey("bf-one/app"))).known).toBe(false);
    expect(await runDurableObjectAlarm(own)).toBe(true);
    expect(await own.shardsComplete()).toBe(true);
    expect(await pendingOf(own)).toBe(0);
    for (const name of ["bf-one/app", "bf-two/app"]) {
      const answer = await shardAnswer(env, nameShardKey(name));
      expect(answer).toEqual({ known: true, entry: await own.lookup(name) });
    }
    expect((await own.lookup("BF-ONE/app"))?.repoId).toBe(800_000_001);
    for (const r of rows) {
      expect((await shardAnswer(env, idShardKey(r.repoId))).entry).toEqual(r);
    }
  }, 60_000);

  it("entries the per-key shards held reach their buckets when the directory upgrades (issue 25)", async () => {
    const own = env.DIRECTORY.get(env.DIRECTORY.idFromName("to-buckets"));
    const rows: DirectoryEntry[] = [
      { repoId: 810_000_001, fullName: "tb-one/App", installationId: 7, status: "active" },
      { repoId: 810_000_002, fullName: "tb-two/app", installationId: 8, status: "removed" },
    ];
    await runInDurableObject(own, async (instance: DirectoryObject, state) => {
      // Schema version 2 with every write delivered (to the per-key shards of that version).
      const sql = state.storage.sql;
      sql.exec("DELETE FROM shard_outbox");
      sql.exec("UPDATE _schema SET version = 2");
      storeRows(sql, rows);
      expect(instance.shardsComplete()).toBe(true);
      new DirectoryObject(state, env);
      expect(instance.shardsComplete()).toBe(false);
    });
    expect((await shardAnswer(env, nameShardKey("tb-one/app"))).known).toBe(false);
    expect(await runDurableObjectAlarm(own)).toBe(true);
    expect(await own.shardsComplete()).toBe(true);
    expect(await pendingOf(own)).toBe(0);
    for (const r of rows) {
      expect(await shardAnswer(env, nameShardKey(r.fullName))).toEqual({ known: true, entry: r });
      expect(await shardAnswer(env, idShardKey(r.repoId))).toEqual({ known: true, entry: r });
    }
  }, 60_000);
});

describe("the cron pages through the directory", () => {
  it("visits every repository when there are more than one page", async () => {
    for (const owner of ["nl-page-a", "nl-page-b", "nl-page-c"]) {
      await install({ repo: `${owner}/app`, issues: [seedIssue(1)] });
    }
    const all = await directory(env).list();
    const active = all.filter((e) => e.status === "active");
    expect(all.length).toBeGreaterThan(4);
    // The tick whose installation checks include the last page's repository.
    const time =
      Date.parse("2026-11-29T00:00:00Z") +
      installationCheckSlot(all.at(-1)!.repoId) * CHECK_TICK_MS;
    const controller = createScheduledController({ cron: "*/15 * * * *", scheduledTime: time });
    const paged = await scheduled(controller, env, { pageSize: 2 });
    expect(paged.pages).toBeGreaterThanOrEqual(Math.ceil(all.length / 2));
    expect(paged.armed).toBe(active.length);
    expect(paged.failed).toBe(0);
    expect(paged.checked).toBe(installationChecksDue(all, time).length);
    expect(paged.checked).toBeGreaterThan(0);
    const whole = await scheduled(controller, env);
    expect(whole.pages).toBe(1);
    expect(whole.armed).toBe(paged.armed);
  }, 60_000);
});

describe("the directory's answer for a reused name", () => {
  it("a name's active repository wins over a newer removed one of the same name", async () => {
    // acme/app was deleted and a new repository took its name; then the old one's removal
    // arrived late (or was replayed) and stamped the old row newest.
    const dir = directory(env);
    await dir.upsert(
      [{ repoId: 91_001, fullName: "reg-dir/app", installationId: 910, status: "active" }],
      1_000,
    );
    await dir.upsert(
      [{ repoId: 91_000, fullName: "Reg-Dir/App", installationId: 910, status: "removed" }],
      2_000,
    );
    expect(await dir.lookup("reg-dir/app")).toEqual({
      repoId: 91_001,
      fullName: "reg-dir/app",
      installationId: 910,
      status: "active",
    });
    // Among rows that are all removed (or all live), the newest still wins.
    await dir.upsert(
      [{ repoId: 91_002, fullName: "reg-dir/gone", installationId: 910, status: "removed" }],
      1_000,
    );
    await dir.upsert(
      [{ repoId: 91_003, fullName: "reg-dir/gone", installationId: 910, status: "removed" }],
      2_000,
    );
    expect((await dir.lookup("reg-dir/gone"))?.repoId).toBe(91_003);
  });
});
