import type { CrossRepoNotice } from "../../../shared/ingest/cross-repo.ts";
import type { Sql } from "../sql.ts";

export interface Watermarks {
  /** Time of the last webhook delivery applied. */
  lastEventAt: string | null;
  /** Incremental reconcile: the listing's `since`, its ETag and the issues seen at `since`. */
  incremental: { since: string; etag: string | null; boundary: number[]; at: string } | null;
  lastFullReconcileAt: string | null;
  /** The producer has materialized every close learned up to `seq` (at time `at`). */
  producer: { seq: number; at: string | null };
}

export interface RepoIdentity {
  repoId: number;
  fullName: string;
  installationId: number;
  status: "active" | "suspended" | "removed";
}

/** The producer run whose writes are in the outbox. */
export interface ProducerRun {
  fence: number;
  /** The producer watermark this run advances to once all its writes succeeded. */
  throughSeq: number;
  at: string;
  /** The repository's lifecycle generation when the run was planned. */
  generation: number;
}

/** Every key of the RepoObject's `meta` table and the type of its value (stored as JSON). */
export interface MetaValues {
  identity: RepoIdentity;
  /** Bumped when the repository stops being active: work begun before must not land. */
  generation: number;
  watermarks: Partial<Watermarks>;
  /** `.github/switchyard.yml` as last read (unparsed: the reader validates it). */
  config: unknown;
  configStatus: { error: string | null; at: string | null };
  configEtag: string | null;
  /** The last close sequence number handed out (see shared/ingest/merge-event.ts). */
  closedSeq: number;
  /** When switchyard began watching: closes before it are history, not kicks. */
  watchingSince: string;
  producerRun: ProducerRun;
  producerFence: number;
  /** The repository as GitHub last answered for its id (`GET /repositories/{id}`). */
  repository: { archived: boolean; private: boolean | null; checkedAt: string };
  /** Issues a webhook said were deleted or transferred, until GitHub confirms or denies it. */
  pendingIssueRemovals: number[];
  /** An installation other than the repository's sent an event about it: asked about by `sync`. */
  installationCandidate: number;
  /**
   * Closes and reopens of this repository's issues learned from webhooks, not yet delivered to
   * the other repositories of the installation (functions/objects/cross-repo.ts).
   */
  crossRepoNotices: CrossRepoNotice[];
  /** When a caller last asked for a reconcile through the API (rate-limited). */
  scanRequestedMs: number;
  /**
   * A label was renamed or deleted at this time: stored labels may be wrong everywhere, so a
   * full reconcile run begun before it starts over (pages it already read would not be re-read).
   */
  fullReconcileRestartMs: number;
  /** When this repository's current reconcile permit was granted (permits.ts). */
  permitHeldSinceMs: number;
  /** The version of the last head pushed to the owner's object (shared/org/head.ts). */
  ownerHeadVersion: number;
  /**
   * This repository's issues that other repositories of the owner wait on, as the owner's object
   * last told (`order=impact` across repositories, owner-push.ts).
   */
  crossBlockers: number[];
  /**
   * A full reconcile's plan is being written: its label writes (one per ready issue after a
   * first reconcile) take the reconciles' part of the hour, never the webhooks' reserve, until
   * the outbox has drained once. Other label writes (a close making an issue ready) are a
   * webhook's own need and use the write budget alone.
   */
  bulkLabelWrites: boolean;
  /** Operational counters (deliveries applied, duplicates seen). */
  [counter: `counter:${string}`]: number;
}

export type MetaKey = keyof MetaValues;

/** What an uninstall keeps: who the repository is and its generation (fences never go back). */
const KEPT_ON_WIPE = ["identity", "generation"] as const satisfies readonly MetaKey[];

/**
 * The `meta` table: typed keys, JSON values, read on every delivery and so cached. Writes go
 * through; `clearCache` after a rolled-back transaction. Values are shared: never mutate them.
 * The only code that runs SQL on `meta`.
 */
export class MetaStore {
  private readonly sql: Sql;
  private readonly cache = new Map<string, unknown>();
  /** Called after a key's value changed (set or deleted). */
  onChange: ((key: MetaKey) => void) | null = null;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  get<K extends MetaKey>(key: K): MetaValues[K] | undefined {
    if (this.cache.has(key)) return this.cache.get(key) as MetaValues[K] | undefined;
    const row = this.sql<{ value: string }>`SELECT value FROM meta WHERE key = ${key}`[0];
    const value = row ? (JSON.parse(row.value) as MetaValues[K]) : undefined;
    this.cache.set(key, value);
    return value;
  }

  set<K extends MetaKey>(key: K, value: MetaValues[K]): void {
    const text = JSON.stringify(value);
    this.sql`INSERT INTO meta (key, value) VALUES (${key}, ${text})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
    this.cache.set(key, JSON.parse(text));
    this.onChange?.(key);
  }

  delete(key: MetaKey): void {
    this.sql`DELETE FROM meta WHERE key = ${key}`;
    this.cache.set(key, undefined);
    this.onChange?.(key);
  }

  clearCache(): void {
    this.cache.clear();
  }

  /** Deletes every key but the identity and the generation (an uninstall). */
  wipe(): void {
    const [identity, generation] = KEPT_ON_WIPE;
    this.sql`DELETE FROM meta WHERE key NOT IN (${identity}, ${generation})`;
    this.cache.clear();
  }
}
