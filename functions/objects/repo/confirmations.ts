import { GitHubApiError } from "../../../shared/github/errors.ts";
import { splitRepo } from "../../../shared/github/fetch-snapshot.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import { removalVerdict } from "../../../shared/ingest/confirm.ts";
import {
  type InstallationCheckAction,
  installationCheckAction,
} from "../../../shared/schedule/installation-check.ts";
import {
  askInstallation,
  coveringInstallation,
  installationOnGitHub,
} from "../../installation-check.ts";
import { directory } from "../directory/directory-object.ts";
import type { RepoContext } from "./context.ts";
import { adoptCandidate, setLifecycle } from "./lifecycle.ts";
import { producerDue } from "./producer.ts";
import type { RepoIdentity } from "./repo-store.ts";

// What a webhook only claims, confirmed with GitHub before it changes anything (spec 6.1: the
// body is signed, the event name and delivery id are not): the repository's name, archived
// state and installation (the `sync` schedule), issue removals, and the cron's daily check of
// which installation covers the repository. The verdict rules are in shared/ingest/confirm.ts
// and shared/schedule/installation-check.ts.

/**
 * The `sync` schedule: the installation and the directory learn of the repository, GitHub is
 * asked (by id) what it is now, and announced issue removals are confirmed. A repository that
 * is not active only answers whether another installation took it.
 */
export async function sync(c: RepoContext, identity: RepoIdentity, nowMs: number): Promise<void> {
  if (identity.status !== "active") {
    await adoptCandidate(c, identity, nowMs);
    return;
  }
  if (await adoptCandidate(c, identity, nowMs)) return;
  // The directory (name → id, for routes and the cron) and the installation (for
  // lifecycle) must know every repository this object serves.
  const status = await c.installation().registerRepo({
    id: identity.repoId,
    fullName: identity.fullName,
  });
  if (status !== "active") {
    // The directory follows the outcome this object accepted, never the request.
    if ((await setLifecycle(c, { ...identity, status })) === "applied") {
      await directory(c.env).upsert([c.store.identity()!], nowMs);
    }
    return;
  }
  await directory(c.env).upsert([identity], nowMs);
  await checkRepository(c, identity);
  await confirmIssueRemovals(c);
}

/**
 * First asks GitHub which installation covers the repository (by id, with the App's JWT: a
 * read with the installation's token cannot tell, any token reads a public repository). None
 * means deleted or no longer installed: the repository is removed, unless the installation
 * itself is gone (`GET /app/installations/{id}` 404), which takes the installation's deletion
 * path. Another installation: the repository moves there (`adoptCandidate`). Then reads the
 * repository by id (`GET /repositories/{id}`): its current name (a rename or a transfer),
 * archived state and visibility. A webhook never changes these by itself; it only asks for
 * this read. The directory follows only a transition this object applied.
 */
async function checkRepository(c: RepoContext, identity: RepoIdentity): Promise<void> {
  const generation = c.store.generation();
  const ref = { id: identity.repoId, fullName: identity.fullName };
  const covering = await coveringInstallation(c.env, ref);
  if (covering !== null && covering.id !== identity.installationId) {
    if (!c.store.stillActive(generation)) return;
    c.store.meta.set("installationCandidate", covering.id);
    await adoptCandidate(c, identity, Date.now());
    return;
  }
  if (covering === null) {
    const installation = await installationOnGitHub(c.env, identity.installationId);
    if (!c.store.stillActive(generation)) return;
    if (removalVerdict(installation.status) === "gone") {
      // A lost `installation.deleted`: the installation's deletion path removes every
      // repository of it, this one included.
      await c
        .installationObject(identity.installationId)
        .installationGone(identity.installationId, Date.now());
      return;
    }
    c.store.audit("repository-gone", { repoId: identity.repoId }, Date.now());
    // The object decides first; the directory follows only what it applied.
    if ((await setLifecycle(c, { ...identity, status: "removed" })) === "applied") {
      await directory(c.env).upsert([c.store.identity()!], Date.now());
    }
    return;
  }
  const client = c.client(`read repository ${identity.repoId} (${identity.fullName}) by id`);
  const repo = (
    await client.send<{ full_name: string; archived?: boolean; private?: boolean }>({
      operation: `read repository ${identity.repoId} (${identity.fullName}) by id`,
      route: "GET /repositories/{repository_id}",
      params: { repository_id: identity.repoId },
      idempotent: true,
    })
  ).data;
  const nowMs = Date.now();
  let renamed: RepoIdentity | null = null;
  let resumed = false;
  c.store.transaction(() => {
    if (!c.store.stillActive(generation)) return;
    const current = c.store.identity()!;
    if (current.fullName !== repo.full_name) {
      c.store.audit("renamed", { from: current.fullName, to: repo.full_name }, nowMs);
      renamed = { ...current, fullName: repo.full_name };
      c.store.setIdentity(renamed);
    }
    const before = c.store.meta.get("repository");
    const archived = repo.archived === true;
    if (before?.archived !== archived || before?.private !== (repo.private ?? null)) {
      c.store.audit("repository", { archived, private: repo.private ?? null }, nowMs);
    }
    c.store.meta.set("repository", {
      archived,
      private: repo.private ?? null,
      checkedAt: formatInstant(nowMs),
    });
    if (before?.archived === true && !archived) resumed = true;
  });
  if (renamed) {
    const { repoId, fullName } = renamed as RepoIdentity;
    // The installation (lifecycle) and the directory (routes, the cron) follow the new name.
    await c.installation().registerRepo({ id: repoId, fullName });
    await directory(c.env).upsert([renamed], nowMs);
  }
  if (resumed) {
    // Unarchived: plan and write again.
    c.schedules.at("producer", nowMs);
    c.schedules.at("fleet", nowMs);
  }
}

/**
 * Issues a webhook said were deleted or transferred away, asked about one by one (by
 * repository id, redirects not followed): 301 means transferred, 404 or 410 gone, and then the
 * issue is removed as of the answer's `Date`; 200 means it is still here and nothing changes.
 */
async function confirmIssueRemovals(c: RepoContext): Promise<void> {
  const pending = c.store.meta.get("pendingIssueRemovals") ?? [];
  if (pending.length === 0) return;
  const identity = c.store.identity()!;
  const generation = c.store.generation();
  const client = c.client(`confirm issue removals in ${identity.fullName}`);
  const { owner, name: repo } = splitRepo(identity.fullName);
  for (const number of pending) {
    let status: number;
    let date: string | undefined;
    try {
      const res = await client.send({
        operation: `confirm the removal of ${identity.fullName}#${number}`,
        route: "GET /repos/{owner}/{repo}/issues/{issue_number}",
        params: { owner, repo, issue_number: number },
        idempotent: true,
        redirect: "manual",
      });
      status = res.status;
      date = res.headers.date;
    } catch (error) {
      if (!(error instanceof GitHubApiError) || error.kind !== "not-found") throw error;
      status = error.status ?? 404;
      date = error.responseDate;
    }
    const verdict = removalVerdict(status);
    const nowMs = Date.now();
    c.store.transaction(() => {
      if (!c.store.stillActive(generation)) return;
      const left = (c.store.meta.get("pendingIssueRemovals") ?? []).filter((n) => n !== number);
      c.store.meta.set("pendingIssueRemovals", left);
      if (verdict === "here") {
        c.store.audit("removal-denied", { issue: number, status }, nowMs);
        return;
      }
      const atMs = date && !Number.isNaN(Date.parse(date)) ? Date.parse(date) : nowMs;
      const { changes, graphChanged } = c.store.applyEvents([
        { type: "issue-removed", number, at: formatInstant(Math.floor(atMs / 1000) * 1000) },
      ]);
      c.store.audit("removal-confirmed", { issue: number, verdict, status, changes }, nowMs);
      if (graphChanged) c.schedules.at("producer", producerDue(c, nowMs));
    });
  }
}

/**
 * Cron entry, once a day per repository (shared/schedule/installation-check.ts): asks GitHub
 * which installation covers this repository and, where that differs from what this object or
 * the directory holds, starts the installation transition its lost webhook would have. The
 * decision is made on the state read after GitHub answered.
 */
export async function checkInstallation(
  c: RepoContext,
): Promise<InstallationCheckAction["kind"] | null> {
  const before = c.store.identity();
  if (!before) return null;
  const answer = await askInstallation(
    c.env,
    { id: before.repoId, fullName: before.fullName },
    before,
    (installationId) => {
      const installation = c.installationObject(installationId);
      return {
        get: (key) => installation.tokenCacheGet(key),
        set: (key, value) => installation.tokenCacheSet(key, value),
      };
    },
  );
  const identity = c.store.identity()!;
  const action = installationCheckAction(
    identity,
    await directory(c.env).get(identity.repoId),
    answer,
  );
  const nowMs = Date.now();
  // A removed repository keeps no audit log (see lifecycle.ts `wipe`).
  if (action.kind !== "none" && identity.status !== "removed") {
    c.store.audit("installation-check", { answer, action }, nowMs);
  }
  const ref = { id: identity.repoId, fullName: identity.fullName };
  switch (action.kind) {
    case "directory":
      await directory(c.env).upsert([identity], nowMs);
      break;
    case "removed":
      await c
        .installationObject(action.installationId)
        .coverageChanged(action.installationId, { kind: "repos-removed", repos: [ref] }, nowMs);
      break;
    case "added":
      await c
        .installationObject(action.installationId)
        .coverageChanged(
          action.installationId,
          { kind: "repos-added", repos: [{ ...ref, fullName: action.fullName }] },
          nowMs,
        );
      break;
  }
  return action.kind;
}
