import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env.ts";
import {
  BUCKETS,
  bucketName,
  bucketOf,
  idShardKey,
  NameStore,
  nameShardKey,
  SHARD_LAYOUT,
  type ShardAnswer,
  type ShardEntry,
  type ShardOp,
} from "./name-store.ts";

export type { ShardAnswer, ShardEntry, ShardOp };
export { BUCKETS, bucketName, bucketOf, idShardKey, nameShardKey, SHARD_LAYOUT };

/**
 * A bucket of the directory's shards (issue 10 item 5, issue 25): for each of its keys (a
 * lower-cased repository name, or a repository id `#<id>`) the candidate rows, written through
 * by the DirectoryObject on every upsert and read by the `/v1` routes instead of the one global
 * directory. The directory stays the authority; a key answers the same lookup rule over the
 * same rows (name-store.ts).
 */
export class NameObject extends DurableObject<Env> {
  private readonly store: NameStore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new NameStore(ctx.storage);
  }

  /** Applies the directory's writes; an op older than what the bucket holds changes nothing. */
  apply(ops: ShardOp[]): void {
    // A directory of the version before buckets (during a rollout) writes per-key objects
    // without keys: refused before any schema is made (it retries until it runs this version).
    if (ops.some((op) => typeof op.key !== "string")) {
      throw new Error("a shard write names its key");
    }
    this.store.apply(ops);
  }

  lookup(key: string): ShardAnswer {
    // An isolate of the version before buckets asks the object named after the key, without
    // the key: no answer here is right (that object is no longer written), so it fails and the
    // request can be retried, rather than "no such repository" (docs/worker.md, Upgrade).
    if (typeof key !== "string") throw new Error("a shard lookup names its key");
    return this.store.answer(key);
  }
}

/** The object that holds shard key `key` (its bucket). */
export function shard(env: Env, key: string) {
  return env.NAMES.get(env.NAMES.idFromName(bucketName(key)));
}

/** Shard key `key`'s answer, from its bucket. */
export function shardAnswer(env: Env, key: string): Promise<ShardAnswer> {
  return shard(env, key).lookup(key);
}
