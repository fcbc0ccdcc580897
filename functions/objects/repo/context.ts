import { htmlBaseFor } from "../../../shared/claims/rules.ts";
import type { GitHubClient } from "../../../shared/github/client.ts";
import { type Env, numberSetting } from "../../env.ts";
import { installationClient } from "../../github-client.ts";
import { installationCovers } from "../../installation-check.ts";
import { Breaker } from "./breaker.ts";
import { Claims } from "./claims.ts";
import { OwedWrites } from "./fleet-writes.ts";
import { GraphScans } from "./graph-scans.ts";
import type { KeysStore } from "./keys-store.ts";
import { Producer } from "./producer.ts";
import { QueueViews } from "./queue.ts";
import { RepoStore } from "./repo-store.ts";
import type { Schedules } from "./schedules-store.ts";

/**
 * What the RepoObject's capability modules share: its storage (one store per table family,
 * behind `store`'s transactions), its schedules, the kept analyses (scan, queue view), and its
 * ways out: GitHub clients for the repository's installation, the InstallationObject (token
 * cache, write budget) and the other objects. Made once per instance.
 */
export class RepoContext {
  readonly env: Env;
  readonly ctx: DurableObjectState;
  readonly store: RepoStore;
  readonly schedules: Schedules;
  /** The scan of the stored graph, kept since its last change (graph API and producer share it). */
  readonly scans: GraphScans;
  readonly views: QueueViews;
  /** The circuit breaker: the default branch's CI and whether it pauses ordinary work. */
  readonly breaker: Breaker;
  readonly claims: Claims;
  readonly owed: OwedWrites;
  readonly producer: Producer;
  /** `fleet_keys` (only hashes reach this object: the route mints and shows a key once). */
  readonly keys: KeysStore;
  /** When this instance last began a producer run (the debounce window; null after a restart). */
  lastProducerRunMs: number | null = null;
  /** The alarm run in progress: a second trigger joins it instead of running alongside. */
  alarmRun: Promise<void> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    this.ctx = ctx;
    this.env = env;
    this.store = new RepoStore(ctx.storage);
    this.schedules = this.store.schedules;
    this.keys = this.store.keys;
    const writeDelayMs = () => this.envMs("FLEET_WRITE_DELAY_MS", 2_000);
    this.breaker = new Breaker(this.store, this.schedules);
    this.views = new QueueViews(this.store, this.schedules, {
      paused: (nowMs) => this.breaker.paused(nowMs),
      htmlBase: () => htmlBaseFor(this.env.GITHUB_API_URL ?? "https://api.github.com"),
      owe: (nowMs) => this.schedules.at("fleet", nowMs + writeDelayMs()),
    });
    this.claims = new Claims(this.store, this.schedules, this.views, { writeDelayMs });
    this.owed = new OwedWrites(this.store, this.claims);
    this.scans = new GraphScans(this.store);
    this.producer = new Producer(this.store, this.claims, this.scans);
  }

  /** A millisecond setting of the environment, zero allowed (tests turn delays off). */
  envMs(
    key: "PRODUCER_DEBOUNCE_MS" | "FLEET_WRITE_DELAY_MS" | "FENCED_WRITE_MARGIN_MS",
    fallback: number,
  ): number {
    return numberSetting(this.env[key], { allowZero: true }) ?? fallback;
  }

  installationObject(installationId: number) {
    return this.env.INSTALLATION.get(this.env.INSTALLATION.idFromName(String(installationId)));
  }

  /** The InstallationObject of the repository's installation (token cache, write budget). */
  installation() {
    const identity = this.store.identity();
    if (!identity) throw new Error("the repository's installation is not known yet");
    return this.installationObject(identity.installationId);
  }

  repoObject(repoId: number) {
    return this.env.REPO.get(this.env.REPO.idFromName(String(repoId)));
  }

  /**
   * Whether installation `installationId` covers this repository now, asked by id with the
   * App's JWT (`GET /repositories/{id}/installation`, functions/installation-check.ts). A read
   * with that installation's token would not tell: any installation token reads a public
   * repository. A repository belongs to one account and so to at most one installation.
   */
  covers(installationId: number, repo: { id: number; fullName: string }): Promise<boolean> {
    return installationCovers(this.env, installationId, repo);
  }

  /** A client for this repository's installation; tokens live in the InstallationObject's memory. */
  client(operation: string): GitHubClient {
    const identity = this.store.identity();
    if (!identity) throw new Error(`${operation}: the repository's installation is not known yet`);
    const installation = this.installation();
    return installationClient(
      this.env,
      identity.installationId,
      {
        get: (key) => installation.tokenCacheGet(key),
        set: (key, value) => installation.tokenCacheSet(key, value),
      },
      operation,
      // Every request about this repository goes by its id, never by its (reusable) name.
      { id: identity.repoId, fullName: identity.fullName },
    );
  }

  /** Archived on GitHub: read-only, so no writes are planned or made (the graph API says so). */
  archived(): boolean {
    return this.store.meta.get("repository")?.archived === true;
  }

  /** Fleet calls on a repository that is not active answer like an unknown one. */
  active(): boolean {
    return this.store.identity()?.status === "active";
  }
}
