export interface RepoRef {
  id: number;
  fullName: string;
}

export type InstallationStatus = "active" | "suspended" | "deleted";
export type RepoStatus = "active" | "suspended" | "removed";

/** An installation lifecycle event, normalized from `installation` / `installation_repositories`. */
export type LifecycleChange =
  | { kind: "created"; account: string; repos: RepoRef[] }
  | { kind: "deleted" }
  | { kind: "suspended" }
  | { kind: "unsuspended" }
  | { kind: "repos-added"; repos: RepoRef[] }
  | { kind: "repos-removed"; repos: RepoRef[] };

export interface LifecycleOutcome {
  status: InstallationStatus;
  /** The repositories whose status this change sets. */
  repos: Array<RepoRef & { status: RepoStatus }>;
}

/** The status a repository of an installation in `status` has: a deleted installation's are removed. */
export const repoStatusFor = (status: InstallationStatus): RepoStatus =>
  status === "active" ? "active" : status === "suspended" ? "suspended" : "removed";

/**
 * What an installation change means for the installation and each repository: deleting stops
 * every repository and deletes its data; suspending pauses them (data kept); repositories added
 * to a suspended installation stay paused.
 */
export function lifecycleOutcome(
  current: InstallationStatus | null,
  change: LifecycleChange,
  installed: readonly RepoRef[],
): LifecycleOutcome {
  const status = current ?? "active";
  const all = (s: RepoStatus) => installed.map((r) => ({ ...r, status: s }));
  switch (change.kind) {
    case "created":
      return { status: "active", repos: change.repos.map((r) => ({ ...r, status: "active" })) };
    case "deleted":
      return { status: "deleted", repos: all("removed") };
    case "suspended":
      return { status: "suspended", repos: all("suspended") };
    case "unsuspended":
      return { status: "active", repos: all("active") };
    case "repos-added":
      return { status, repos: change.repos.map((r) => ({ ...r, status: repoStatusFor(status) })) };
    case "repos-removed":
      return { status, repos: change.repos.map((r) => ({ ...r, status: "removed" })) };
  }
}
