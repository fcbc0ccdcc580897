import { PERMIT_LEASE_MS } from "../../../shared/budget/reconcile-permits.ts";
import type { RepositoryMismatchError } from "../../../shared/github/errors.ts";
import { DAY_MS, formatInstant, HOUR_MS } from "../../../shared/graph/time.ts";
import { retentionCutoffs } from "../../../shared/schedule/retention.ts";
import { directory } from "../directory/directory-object.ts";
import type { RepoContext } from "./context.ts";
import { owePush, pushHead } from "./owner-push.ts";
import type { RepoIdentity } from "./repo-store.ts";

// The repository's lifecycle in its object: installed (watching), suspended, removed (wiped),
// moved to another installation, and what a read by name that found another repository
// means. The installation's side is functions/objects/installation/; what GitHub must confirm
// first is confirmations.ts.

/**
 * Starts watching: learn the whole graph, prune delivery ids daily, kick only recent closes.
 * `paced`: the installation put this repository in line for its first full reconcile and tells
 * it when its turn comes (`permitGranted`); asking after a lease's time is the fallback.
 */
function activate(c: RepoContext, nowMs: number, paced = false): void {
  c.store.setWatchingSince(formatInstant(nowMs - c.store.config().kicks.windowHours * HOUR_MS));
  c.schedules.at("reconcile-full", paced ? nowMs + PERMIT_LEASE_MS : nowMs);
  c.schedules.ensure("prune", nowMs + DAY_MS);
  // Back from a suspension: claims may have expired meanwhile and fleet writes may be owed.
  c.schedules.at("claims", nowMs);
  c.schedules.at("fleet", nowMs);
}

/**
 * The repository is first seen through its own webhook (events can outrun the installation
 * event; they prove the App is installed here): it starts watching, and `sync` tells the
 * directory and the installation.
 */
export function adoptFromWebhook(c: RepoContext, identity: RepoIdentity, atMs: number): void {
  c.store.setIdentity(identity);
  activate(c, atMs);
  c.schedules.at("sync", atMs);
}

/** Installation lifecycle reached this repository (from the InstallationObject). */
export async function setLifecycle(
  c: RepoContext,
  identity: RepoIdentity,
  options: { paced?: boolean } = {},
): Promise<"applied" | "ignored"> {
  const paced = options.paced === true;
  const before = c.store.identity();
  // A repository moved to another installation: the old one's suspension or removal is not
  // about it any more (its activation by the new one is).
  if (before && identity.status !== "active" && before.installationId !== identity.installationId) {
    return "ignored";
  }
  // Another installation's activation: a move, or a late or replayed event of a former
  // installation. Only GitHub can tell: accepted if that installation covers it now.
  if (
    before &&
    identity.status === "active" &&
    before.installationId !== identity.installationId &&
    !(await c.covers(identity.installationId, {
      id: identity.repoId,
      fullName: identity.fullName,
    }))
  ) {
    c.store.audit(
      "installation-refused",
      { installation: identity.installationId, current: before.installationId },
      Date.now(),
    );
    return "ignored";
  }
  const nowMs = Date.now();
  // Accepted from another installation: the repository changed owner. The former owner's fleet
  // keys and claims end here, as they do when its `removed` comes first (the wipe), so the
  // outcome does not depend on which webhook arrives first.
  const moved = before !== undefined && before.installationId !== identity.installationId;
  c.store.transaction(() => {
    if (moved) {
      c.store.bumpGeneration();
      c.store.dropProducerQueue();
      wipe(c);
      c.store.audit(
        "installation-moved",
        { from: before.installationId, to: identity.installationId },
        nowMs,
      );
      if (identity.status === "active") activate(c, nowMs, paced);
    } else if (identity.status !== "active") {
      // Work in flight (a fetch, a write) must not land after this: see `stillActive`. Queued
      // writes belong to a plan of a graph that may be stale when (if) it comes back.
      c.store.bumpGeneration();
      c.store.dropProducerQueue();
      c.schedules.clear();
    } else if (before?.status !== "active") {
      activate(c, nowMs, paced);
    }
    c.store.audit("lifecycle", { from: before?.status ?? null, to: identity.status }, nowMs);
    // Removed: every stored row goes, this audit entry too (see `wipe` for what stays).
    if (identity.status === "removed") wipe(c);
    // The name in a lifecycle payload is a hint (a replayed `added` carries an old one): the
    // stored name stays, and `sync` reads the repository by id to learn the real one.
    const renamed = before !== undefined && before.fullName !== identity.fullName;
    c.store.setIdentity(renamed ? { ...identity, fullName: before.fullName } : identity);
    if (renamed && identity.status === "active") c.schedules.at("sync", nowMs);
  });
  if (identity.status !== "active") {
    // Out of the owner's queue now (schedules are cleared): told at once, not by the alarm. The
    // InstallationObject withdrew it on receipt already; this push makes it final there.
    await pushHead(c, c.store.identity()!, Date.now()).catch((error: unknown) =>
      console.error(`${identity.fullName}: telling the owner of ${identity.status} failed`, error),
    );
  } else {
    owePush(c, Date.now());
  }
  await c.schedules.rearm();
  return "applied";
}

/**
 * Uninstalled (or the repository removed from the installation): deletes every stored row of
 * the repository, audit and deliveries included, but the fencing counter (`fence`: fences never
 * go backwards, even across a reinstall) and the `identity` and `generation` meta rows (what
 * says "removed", and what work begun before checks). Every table must be wiped here: the
 * retention test lists them all.
 */
function wipe(c: RepoContext): void {
  c.store.wipe();
  c.store.claims.wipe();
  c.store.writes.wipe();
  c.store.keys.wipe();
  c.store.ci.wipe();
  c.store.priority.wipe();
  c.schedules.clear();
}

/**
 * The daily prune: every table to its bound (shared/schedule/retention.ts; the table of bounds
 * is in docs/worker.md). Each store prunes its own tables.
 */
export function prune(c: RepoContext, nowMs: number): void {
  const cutoffs = retentionCutoffs(nowMs);
  c.store.transaction(() => {
    c.store.prune(cutoffs);
    c.store.claims.prune(cutoffs);
    // Closed write records are kept as long as idempotency keys: a late comment is matched to
    // its record within that time.
    c.store.writes.prune(cutoffs.idempotencyMs);
    c.store.keys.prune(cutoffs.fleetKeysMs);
    c.store.ci.prune(cutoffs.ciReportsMs);
    c.store.priority.prune(cutoffs.tombstonesMs, cutoffs.ciReportsMs);
  });
}

/**
 * An installation other than the repository's sent an event about it (see ingest.ts): if
 * GitHub says that installation covers the repository now, the repository moves there (with
 * the status that installation gives it), the directory follows, and a full reconcile learns
 * what the events it ignored meanwhile said. True when it moved.
 */
export async function adoptCandidate(
  c: RepoContext,
  identity: RepoIdentity,
  nowMs: number,
): Promise<boolean> {
  const candidate = c.store.meta.get("installationCandidate");
  if (candidate === undefined) return false;
  const clear = () => c.store.meta.delete("installationCandidate");
  if (candidate === identity.installationId) {
    clear();
    return false;
  }
  if (!(await c.covers(candidate, { id: identity.repoId, fullName: identity.fullName }))) {
    clear();
    c.store.audit("installation-refused", { installation: candidate }, nowMs);
    return false;
  }
  const status = await c.installationObject(candidate).registerRepo({
    id: identity.repoId,
    fullName: identity.fullName,
  });
  clear();
  const moved = { ...identity, installationId: candidate, status };
  if ((await setLifecycle(c, moved)) !== "applied") return false;
  const accepted = c.store.identity()!;
  await directory(c.env).upsert([accepted], Date.now());
  if (accepted.status === "active") {
    c.schedules.at("reconcile-full", Date.now());
    c.schedules.at("sync", Date.now());
  }
  return true;
}

/**
 * A read by name answered for another repository (renamed or deleted, its name reused): work
 * in flight must not land and queued writes go (their plan may be about the other one), until
 * `sync` has read the repository again by id.
 */
export function mismatch(c: RepoContext, error: RepositoryMismatchError): void {
  const nowMs = Date.now();
  c.store.transaction(() => {
    c.store.bumpGeneration();
    c.store.dropProducerQueue();
    c.store.audit(
      "repository-mismatch",
      { name: error.fullName, expected: error.expectedId, found: error.foundId },
      nowMs,
    );
    c.schedules.at("sync", nowMs);
  });
}
