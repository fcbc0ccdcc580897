import { DurableObject } from "cloudflare:workers";
import type { RepoStatus } from "../../../shared/ingest/lifecycle.ts";
import type { Env } from "../../env.ts";
import { bucketOf, SHARD_LAYOUT, shard } from "../names/name-object.ts";
import { type DirectoryEntry, DirectoryStore } from "./directory-store.ts";

export type { DirectoryEntry, RepoStatus };

/**
 * Shard keys written per alarm run while catching up (a backfill, or writes that failed): their
 * calls are one per bucket, so at most 256 whatever the count.
 */
const FLUSH_BATCH = 2_000;
/** Bucket calls in flight at once from one flush. */
const FLUSH_PARALLEL = 16;
const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 60_000;

/** `run` over every item, at most `parallel` at a time; every outcome, in order. */
async function settleAll<T>(
  items: readonly T[],
  parallel: number,
  run: (item: T) => Promise<void>,
): Promise<PromiseSettledResult<void>[]> {
  const results: PromiseSettledResult<void>[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        results[i] = { status: "fulfilled", value: await run(items[i]!) };
      } catch (reason) {
        results[i] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
  return results;
}

/**
 * The one global index (a single instance named "directory"): repository name → numeric id and
 * installation. It is the authority, read by the cron (in pages) and the objects; the `/v1`
 * routes read its shards instead (functions/objects/names/), which every upsert writes
 * through before it returns: the keys of the lower-cased name (the new one, and the old one
 * after a rename) and of the repository id, held by BUCKETS objects.
 */
export class DirectoryObject extends DurableObject<Env> {
  private readonly store: DirectoryStore;
  private failures = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new DirectoryStore(ctx.storage);
    if (this.store.pending() > 0) {
      // A backfill, or writes a failed run left: delivered by the alarm.
      void ctx.blockConcurrencyWhile(async () => {
        if ((await ctx.storage.getAlarm()) === null) await ctx.storage.setAlarm(Date.now());
      });
    }
  }

  ping(): boolean {
    return this.store.ping();
  }

  /**
   * Writes `entries` and, before returning, their shards: the name's (and the former name's,
   * on a rename) and the id's. A shard that cannot be written makes the call throw (the entry
   * stays written and its shard write queued; the alarm retries it), so no caller takes an
   * event as applied while a shard still answers the old state.
   */
  async upsert(entries: DirectoryEntry[], atMs: number): Promise<void> {
    await this.flush(this.store.upsert(entries, atMs));
  }

  /**
   * Delivers the queued writes of `keys`: one call per bucket, with the writes of all its keys
   * (`FLUSH_PARALLEL` buckets at a time); throws if one fails, after trying them all.
   */
  private async flush(keys: string[]): Promise<void> {
    const buckets = new Map<number, string[]>();
    for (const key of keys) {
      const b = bucketOf(key);
      const group = buckets.get(b);
      if (group) group.push(key);
      else buckets.set(b, [key]);
    }
    const results = await settleAll([...buckets.values()], FLUSH_PARALLEL, async (group) => {
      const queued = group.map((key) => ({ key, ...this.store.queued(key) }));
      const ops = queued.flatMap((q) => q.ops);
      if (ops.length === 0) return;
      await shard(this.env, group[0]!).apply(ops);
      for (const q of queued) this.store.delivered(q.key, q.seqs);
    });
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) {
      this.failures += 1;
      const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (this.failures - 1));
      await this.ctx.storage.setAlarm(Date.now() + delay);
      throw failed.reason;
    }
    this.failures = 0;
  }

  /** Delivers queued shard writes a batch of keys at a time, re-arming until none is left. */
  override async alarm(): Promise<void> {
    const keys = this.store.pendingShards(FLUSH_BATCH);
    if (keys.length === 0) return;
    try {
      await this.flush(keys);
    } catch (error) {
      console.error("directory: shard writes failed; retrying", error);
      return;
    }
    if (this.store.pending() > 0) await this.ctx.storage.setAlarm(Date.now());
  }

  /**
   * Whether every shard key holds every entry stored before the shards existed, or before they
   * moved into buckets (the backfill is delivered). Once true it stays true for this version,
   * so a route may remember it: from then on a shard key that
   * never received a write means "no such repository" without asking here.
   */
  shardsComplete(): boolean {
    return this.store.backfillDelivered();
  }

  /**
   * A route's fallback for a shard key that never received a write: the directory's own
   * answer, whether the shards are complete (see `shardsComplete`) and for which layout of the
   * keys (a route of another version must not take "complete" for its own).
   */
  resolve(query: { fullName: string } | { repoId: number }): {
    entry: DirectoryEntry | null;
    shardsComplete: boolean;
    layout: string;
  } {
    const found = "fullName" in query ? this.lookup(query.fullName) : this.get(query.repoId);
    return { entry: found, shardsComplete: this.shardsComplete(), layout: SHARD_LAYOUT };
  }

  /** By name, case-insensitively; an installed repository owns its name (directory-store.ts). */
  lookup(fullName: string): DirectoryEntry | null {
    return this.store.lookup(fullName);
  }

  get(repoId: number): DirectoryEntry | null {
    return this.store.get(repoId);
  }

  /**
   * Entries by id, filtered; `afterId` and `limit` page through them (the cron reads a bounded
   * page at a time; without a limit, everything that matches).
   */
  list(
    filter: { status?: RepoStatus; installationId?: number; afterId?: number; limit?: number } = {},
  ): DirectoryEntry[] {
    return this.store.list(filter);
  }
}

export function directory(env: Env) {
  return env.DIRECTORY.get(env.DIRECTORY.idFromName("directory"));
}
