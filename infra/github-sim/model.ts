// The simulator's state: repositories, issues, labels, comments, edges and installations.
// Plain data with small mutation helpers; every change that GitHub would announce goes through
// `SimState` methods so the webhook emitter sees it (see state.ts).

export type IssueState = "open" | "closed";
export type StateReason = "completed" | "not_planned" | "reopened" | "duplicate" | null;

export interface SimLabel {
  id: number;
  nodeId: string;
  name: string;
  color: string;
  description: string | null;
  default: boolean;
}

export interface SimLabelEvent {
  id: number;
  label: string;
  color: string;
  action: "labeled" | "unlabeled";
  actor: string;
  createdAt: string;
}

export interface SimComment {
  id: number;
  nodeId: string;
  issueId: number;
  body: string;
  user: string;
  createdAt: string;
  updatedAt: string;
}

export interface SimIssue {
  id: number;
  nodeId: string;
  repoId: number;
  number: number;
  title: string;
  body: string | null;
  user: string;
  state: IssueState;
  stateReason: StateReason;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  closedBy: string | null;
  /** Label names, in the order they were added. */
  labels: string[];
  labelEvents: SimLabelEvent[];
  comments: SimComment[];
  parentId: number | null;
  /** Sub-issue ids in priority (insertion) order. */
  subIssueIds: number[];
  /** Blocking issue ids with the time each dependency was added. */
  blockedBy: { issueId: number; addedAt: string }[];
  /** Reverse index of `blockedBy`: ids of the issues this one blocks. */
  blockingIds: number[];
}

/** A file on the default branch. */
export interface SimFile {
  path: string;
  text: string;
  /** Git's blob id: SHA-1 of `blob <bytes>\0<content>` (what `git hash-object` prints). */
  sha: string;
  /** Size in bytes (UTF-8). */
  size: number;
}

/** One commit on the default branch, as a push webhook describes it. */
export interface SimCommit {
  id: string;
  treeId: string;
  message: string;
  timestamp: string;
  author: string;
  added: string[];
  modified: string[];
  removed: string[];
}

/** Every simulated repository has exactly one branch, its default branch. */
export const DEFAULT_BRANCH = "main";

export interface SimRepo {
  id: number;
  nodeId: string;
  owner: string;
  ownerId: number;
  name: string;
  createdAt: string;
  /** When the default branch last moved (GitHub's `pushed_at`). */
  pushedAt: string;
  labels: Map<string, SimLabel>;
  issues: Map<number, SimIssue>;
  nextNumber: number;
  /** Files on the default branch, by path (no leading slash). */
  files: Map<string, SimFile>;
  /** The default branch's head commit id; null until the first push. */
  head: string | null;
  /** Archived repositories are read-only: REST writes answer 403. */
  archived: boolean;
  /** `private`/`visibility` of the rendered repository (access rules do not change with it). */
  private: boolean;
}

/** A collaborator role on one repository, weakest first (each includes the ones before it). */
export const REPO_ROLES = ["read", "triage", "write", "maintain", "admin"] as const;
export type RepoRole = (typeof REPO_ROLES)[number];

/** A user registered through the control API: a personal token and a role per repository. */
export interface SimUser {
  login: string;
  token: string;
  /** Roles by lower-cased `owner/name`. */
  repos: Map<string, RepoRole>;
  createdAt: string;
}

export interface SimInstallation {
  id: number;
  account: string;
  accountId: number;
  /** `null` means every repository of the account ("all"). */
  repositoryIds: number[] | null;
  createdAt: string;
  suspendedAt: string | null;
}

export function fullName(repo: SimRepo): string {
  return `${repo.owner}/${repo.name}`;
}

export function nodeId(prefix: string, id: number): string {
  return `${prefix}_${btoa(`0:${id}`).replace(/=+$/, "")}`;
}

/** GitHub's timestamp format: ISO-8601, second precision, `Z`. */
export function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A small deterministic id for an account login (the simulator has no user directory). */
export function accountId(login: string): number {
  let h = 0x811c9dc5;
  for (const ch of login.toLowerCase()) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return (h % 90_000_000) + 10_000_000;
}
