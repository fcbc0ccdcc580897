import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env.ts";
import {
  idShardKey,
  NameStore,
  nameShardKey,
  type ShardEntry,
  type ShardOp,
} from "./name-store.ts";

export type { ShardEntry, ShardOp };
export { idShardKey, nameShardKey };

/** What a shard answers: whether any write ever reached it, and its entry under the rule. */
export interface ShardAnswer {
  known: boolean;
  entry: ShardEntry | null;
}

/**
 * A shard of the directory (issue 10, item 5): the candidate rows of one lower-cased repository
 * name (or of one repository id, `#<id>`), written through by the DirectoryObject on every
 * upsert and read by the `/v1` routes instead of the one global directory. The directory stays
 * the authority; a shard answers the same lookup rule over the same rows (name-store.ts).
 */
export class NameObject extends DurableObject<Env> {
  private readonly store: NameStore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new NameStore(ctx.storage);
  }

  /** Applies the directory's writes; an op older than what the shard holds changes nothing. */
  apply(ops: ShardOp[]): void {
    this.store.apply(ops);
  }

  lookup(): ShardAnswer {
    if (!this.store.written) return { known: false, entry: null };
    return { known: true, entry: this.store.winner() };
  }
}

export function shard(env: Env, key: string) {
  return env.NAMES.get(env.NAMES.idFromName(key));
}
