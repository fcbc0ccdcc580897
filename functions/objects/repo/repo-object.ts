import { DurableObject } from "cloudflare:workers";
import {
  type KeyCallExpectation,
  type KeyVerdict,
  keyCallVerdict,
} from "../../../shared/auth/keys.ts";
import type { KeySummary } from "../../../shared/auth/schemas.ts";
import type { CiFact } from "../../../shared/breaker/facts.ts";
import type { GraphEvent } from "../../../shared/ingest/events.ts";
import type { RepositoryAction } from "../../../shared/ingest/from-webhook.ts";
import { CrossBlockersSchema } from "../../../shared/org/head.ts";
import type { ProjectItemNotice } from "../../../shared/queue/project-item.ts";
import type { InstallationCheckAction } from "../../../shared/schedule/installation-check.ts";
import type { Env } from "../../env.ts";
import { alarm, releaseLeases } from "./alarm.ts";
import { ingestCi } from "./breaker.ts";
import { checkInstallation } from "./confirmations.ts";
import { RepoContext } from "./context.ts";
import type { CrossRepoDelivery } from "./cross-repo.ts";
import type { FencedOp } from "./fenced-write.ts";
import * as fleet from "./fleet.ts";
import type {
  ClaimRequest,
  FenceRequest,
  FleetResult,
  QueueRequest,
  ReleaseOutcome,
} from "./fleet-api.ts";
import { graph, graphPage } from "./graph-api.ts";
import type { GraphPageRequest } from "./graph-scans.ts";
import { type Delivery, externalStates, type IngestOutcome, ingest } from "./ingest.ts";
import * as keys from "./keys.ts";
import type { NewKey } from "./keys-store.ts";
import { prune, setLifecycle } from "./lifecycle.ts";
import { tellCrossBlockers } from "./owner-push.ts";
import { permitGranted } from "./permits.ts";
import { applyProjectItem } from "./priority.ts";
import { armReconcile, requestScan } from "./reconcile.ts";
import type { ReconcileProgress } from "./reconcile-progress-store.ts";
import type { RepoIdentity } from "./repo-store.ts";
import {
  type ObjectStatus,
  objectStatus,
  publicPage,
  type StatusView,
  statusView,
} from "./status.ts";

export type { Delivery, IngestOutcome };

/** What `callWithKey` answers: the operation's value, or why the key's call was refused. */
export type KeyCallAnswer =
  | { ok: true; value: unknown }
  | { ok: false; status: 401 | 403 | 503; message: string };

/**
 * The operations a fleet key's request may reach: the `/v1` routes' own calls. A route that
 * calls another method for a key's request must add it here (else the call throws).
 */
const KEYED_METHODS = new Set([
  "identity",
  "graph",
  "graphPage",
  "workQueue",
  "claim",
  "heartbeat",
  "release",
  "liveClaims",
  "write",
  "listKeys",
  "requestScan",
]);

/**
 * One per repository (named by GitHub's numeric repository id): the graph, its watermarks, the
 * fleet's claims, and every schedule that keeps them and the `agent:ready` labels true. This
 * class is the object's RPC surface and its alarm; each capability is a module of this folder
 * (lifecycle, confirmations, ingest, reconcile, producer, fleet and claims, keys, status) that
 * works on the `RepoContext` made here.
 */
export class RepoObject extends DurableObject<Env> {
  private readonly c: RepoContext;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.c = new RepoContext(ctx, env);
    // Leases of a run cut short (an eviction, a deploy) are released before any event runs.
    void ctx.blockConcurrencyWhile(() => releaseLeases(this.c));
  }

  // Parts tests reach with runInDurableObject.
  get store() {
    return this.c.store;
  }
  get schedules() {
    return this.c.schedules;
  }
  get scans() {
    return this.c.scans;
  }
  get producer() {
    return this.c.producer;
  }
  get views() {
    return this.c.views;
  }
  get claims() {
    return this.c.claims;
  }
  get breaker() {
    return this.c.breaker;
  }

  override alarm(): Promise<void> {
    return alarm(this.c);
  }

  /** Resolves once no alarm run is in progress (tests and shutdowns wait on it, not the clock). */
  async idle(): Promise<void> {
    await this.c.alarmRun?.catch(() => undefined);
  }

  // --- lifecycle, webhooks, reconciliation ---

  /**
   * Installation lifecycle reached this repository (from the InstallationObject). `paced`: the
   * installation puts it in line for its first full reconcile and tells it when its turn comes.
   */
  setLifecycle(
    identity: RepoIdentity,
    options: { paced?: boolean } = {},
  ): Promise<"applied" | "ignored"> {
    return setLifecycle(this.c, identity, options);
  }

  /** The installation granted this repository a reconcile permit: the full reconcile runs now. */
  permitGranted(): Promise<"woken" | "gone"> {
    return permitGranted(this.c);
  }

  /** One webhook delivery's events, applied atomically (the acknowledgement path). */
  ingest(
    delivery: Delivery,
    repo: { id: number; fullName: string; installationId: number },
    events: GraphEvent[],
    extra: { repositoryAction?: RepositoryAction; confirmIssueRemoved?: number } = {},
  ): Promise<IngestOutcome> {
    return ingest(this.c, delivery, repo, events, extra);
  }

  /** A CI webhook of the default branch (the circuit breaker; the acknowledgement path). */
  ciEvent(
    delivery: Delivery,
    repo: { id: number; fullName: string; installationId: number },
    fact: CiFact,
  ): Promise<IngestOutcome> {
    return ingestCi(this.c, delivery, repo, fact);
  }

  /** A project item's change, resolved to issue `number` here by the InstallationObject. */
  projectItem(notice: ProjectItemNotice & { number: number }) {
    return applyProjectItem(this.c, notice);
  }

  /** Another repository of the installation says one of its issues closed or reopened. */
  externalStates(delivery: CrossRepoDelivery): Promise<{ applied: number }> {
    return externalStates(this.c, delivery);
  }

  /** `POST /v1/.../scan`: a reconcile now, at most once a minute. */
  async requestScan(nowMs = Date.now()): Promise<FleetResult> {
    return fleet.inactive(this.c) ?? requestScan(this.c, nowMs);
  }

  /** Cron entry: reconcile now (fully when a day has passed); keeps the daily prune alive. */
  armReconcile(nowMs = Date.now()): Promise<boolean> {
    return armReconcile(this.c, nowMs);
  }

  /** Cron entry, once a day: which installation covers this repository, asked of GitHub. */
  checkInstallation(): Promise<InstallationCheckAction["kind"] | null> {
    return checkInstallation(this.c);
  }

  /** The daily prune (also the `prune` schedule). */
  prune(nowMs = Date.now()): void {
    prune(this.c, nowMs);
  }

  // --- reads ---

  identity(): RepoIdentity | null {
    return this.c.store.identity() ?? null;
  }

  graph(nowMs = Date.now(), machine?: string, limit?: number) {
    return graph(this.c, nowMs, machine, limit);
  }

  graphPage(
    request: Required<Pick<GraphPageRequest, "list">> & GraphPageRequest,
    nowMs = Date.now(),
    machine?: string,
  ) {
    return graphPage(this.c, request, nowMs, machine);
  }

  auditLog(limit = 100) {
    return this.c.store.auditLog(limit);
  }

  status(): ObjectStatus {
    return objectStatus(this.c);
  }

  /** The full reconcile in progress, for the status page; null when none is. */
  reconcileProgress(): ReconcileProgress | null {
    return this.c.store.reconcileProgress();
  }

  /**
   * Whether the status page may be shown without login (public, opted in): read from stored
   * facts only, before any graph is built for an anonymous request.
   */
  publicPage(): boolean {
    return publicPage(this.c);
  }

  /** Its dead letters, counted: the org status page's figure (the pushed head lacks it). */
  stuckCount(): number {
    return this.c.store.claims.stuckCount();
  }

  /** The status page's read beyond `graph()` (status.ts). */
  statusView(nowMs = Date.now()): Promise<StatusView> {
    return statusView(this.c, nowMs);
  }

  // --- fleet API (spec 6.4) ---

  /** The claimable issues for one caller (named so: `queue` is a Durable Object handler's name). */
  workQueue(request: QueueRequest, nowMs = Date.now()): Promise<FleetResult> {
    return fleet.workQueue(this.c, request, nowMs);
  }

  /** Claims issue `number`, or the queue's first available issue when `number` is null. */
  claim(number: number | null, request: ClaimRequest, nowMs = Date.now()): Promise<FleetResult> {
    return fleet.claim(this.c, number, request, nowMs);
  }

  /** The owner's org claim-next asks for a grant here (fleet.ts `orgClaim`). */
  orgClaim(
    number: number | null,
    request: ClaimRequest,
    installationId: number,
    nowMs = Date.now(),
  ): Promise<FleetResult> {
    return fleet.orgClaim(this.c, number, request, installationId, nowMs);
  }

  /**
   * The owner's object tells which of these issues other repositories of the owner wait on
   * (`order=impact` across repositories): a push is owed when that changed.
   */
  crossBlockers(numbers: unknown, nowMs = Date.now()): boolean {
    return tellCrossBlockers(this.c, CrossBlockersSchema.parse(numbers), nowMs);
  }

  heartbeat(number: number, request: FenceRequest, nowMs = Date.now()): Promise<FleetResult> {
    return fleet.heartbeat(this.c, number, request, nowMs);
  }

  release(
    number: number,
    request: FenceRequest & { outcome: ReleaseOutcome; note?: string },
    nowMs = Date.now(),
  ): Promise<FleetResult> {
    return fleet.release(this.c, number, request, nowMs);
  }

  liveClaims(nowMs = Date.now()): FleetResult {
    return fleet.liveClaims(this.c, nowMs);
  }

  /** A GitHub write on behalf of a claim holder, done only while its fence is current. */
  write(number: number, request: FenceRequest, op: FencedOp, nowMs = Date.now()) {
    return fleet.write(this.c, number, request, op, nowMs);
  }

  // --- fleet keys ---

  createKey(key: NewKey): KeySummary {
    return keys.createKey(this.c, key);
  }

  listKeys(): KeySummary[] {
    return keys.listKeys(this.c);
  }

  /** False for an unknown id; revoking twice keeps the first revocation. */
  revokeKey(id: string, nowMs = Date.now(), who?: keys.KeyActor): boolean {
    return keys.revokeKey(this.c, id, nowMs, who);
  }

  /** The key whose SHA-256 is `hash`, if valid at `nowMs` (its use recorded once a minute). */
  verifyKey(hash: string, nowMs = Date.now()): KeyVerdict {
    return keys.verifyKey(this.c, hash, nowMs);
  }

  /**
   * A `/v1` operation on behalf of a fleet key, in one call (issue 21 item 5): the key is
   * verified here and the Worker's routing checked against this object's own identity
   * (shared/auth/keys.ts `keyCallVerdict`) before `method` runs with `args`. `method` is
   * chosen by the Worker's route code (functions/routes/v1/key-calls.ts), never by a request.
   */
  async callWithKey(
    call: { hash: string } & KeyCallExpectation,
    method: string,
    args: unknown[],
  ): Promise<KeyCallAnswer> {
    const verdict = keyCallVerdict(
      keys.verifyKey(this.c, call.hash, Date.now()),
      this.identity(),
      call,
    );
    if (!verdict.ok) return verdict;
    const target = KEYED_METHODS.has(method)
      ? (this as unknown as Record<string, unknown>)[method]
      : undefined;
    if (typeof target !== "function") throw new TypeError(`${method} is not a fleet operation`);
    return { ok: true, value: await target.apply(this, args) };
  }
}
