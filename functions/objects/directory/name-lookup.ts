// The `/v1` routes' name and id lookups (issue 10 item 5): answered by the shards the directory
// writes through (functions/objects/names/), so no request waits on the one global
// DirectoryObject. A shard key that never received a write is asked of the directory until it says
// the shards hold every entry stored before they existed (or before they moved into buckets);
// for a deployed version that fact only ever becomes true, so
// each isolate remembers it (nothing that can go stale is cached here).
import type { Env } from "../../env.ts";
import { idShardKey, nameShardKey, SHARD_LAYOUT, shardAnswer } from "../names/name-object.ts";
import { type DirectoryEntry, directory } from "./directory-object.ts";

let shardsComplete = false;

async function answer(
  env: Env,
  key: string,
  query: { fullName: string } | { repoId: number },
): Promise<DirectoryEntry | null> {
  const found = await shardAnswer(env, key);
  if (found.known || shardsComplete) return found.entry;
  const fallback = await directory(env).resolve(query);
  // A directory still running the version before buckets says "complete" of its own keys.
  if (fallback.shardsComplete && fallback.layout === SHARD_LAYOUT) shardsComplete = true;
  return fallback.entry;
}

/** The repository that owns `fullName` (case-insensitive), under `DirectoryObject.lookup`'s rule. */
export function lookupName(env: Env, fullName: string): Promise<DirectoryEntry | null> {
  return answer(env, nameShardKey(fullName), { fullName });
}

/** The directory entry of repository `repoId`, as `DirectoryObject.get` answers it. */
export function lookupRepo(env: Env, repoId: number): Promise<DirectoryEntry | null> {
  return answer(env, idShardKey(repoId), { repoId });
}
