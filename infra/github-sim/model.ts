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
  /** The previous head (none for a repository's first commit). */
  parents: string[];
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
  /** Every commit the default branch has had, by id (checks and statuses name them). */
  commits: Map<string, SimCommit>;
  /** Archived repositories are read-only: REST writes answer 403. */
  archived: boolean;
  /** `private`/`visibility` of the rendered repository (access rules do not change with it). */
  private: boolean;
}

/** A collaborator role on one repository, weakest first (each includes the ones before it). */
export const REPO_ROLES = ["read", "triage", "write", "maintain", "admin"] as const;
export type RepoRole = (typeof REPO_ROLES)[number];

/**
 * What a token is, told by its prefix as GitHub tells it: `ghp_` a classic personal token,
 * `gho_` an OAuth App token, `ghu_` a GitHub App user token, `github_pat_` a fine-grained
 * personal token, `ghs_` an installation token. A token without a known prefix is a classic
 * token in the format GitHub used before 2021 (40 hex digits), with scopes like `ghp_`.
 */
export type TokenKind =
  | "classic"
  | "oauth"
  | "app-user"
  | "fine-grained"
  | "installation"
  | "legacy";

export function tokenKindOf(token: string): TokenKind {
  if (token.startsWith("ghp_")) return "classic";
  if (token.startsWith("gho_")) return "oauth";
  if (token.startsWith("ghu_")) return "app-user";
  if (token.startsWith("github_pat_")) return "fine-grained";
  if (token.startsWith("ghs_")) return "installation";
  return "legacy";
}

/** Classic and OAuth tokens carry scopes (`X-OAuth-Scopes`); the other kinds do not. */
export function hasScopes(kind: TokenKind): boolean {
  return kind === "classic" || kind === "oauth" || kind === "legacy";
}

/** One of a registered user's tokens. */
export interface SimUserToken {
  token: string;
  kind: TokenKind;
  /** Classic and OAuth tokens: their scopes (default `["repo"]`); `[]` for the other kinds. */
  scopes: string[];
  /**
   * `ghu_` tokens: the client id of the GitHub App they were issued to; null is the simulated
   * App itself, whatever its client id is now (a manifest conversion changes it).
   */
  clientId: string | null;
  /** A stable id for `POST /applications/{client_id}/token`'s `id`. */
  id: number;
  createdAt: string;
}

/** A user registered through the control API: tokens and a role per repository. */
export interface SimUser {
  login: string;
  /** The token it was registered with (what the OAuth flow hands out unless it is not `ghu_`). */
  token: string;
  /** Every token of the user, by token (the registered one first). */
  tokens: Map<string, SimUserToken>;
  /** Roles by lower-cased `owner/name`. */
  repos: Map<string, RepoRole>;
  createdAt: string;
}

export type PermissionLevel = "read" | "write";

/**
 * What an installation of the simulated App is granted unless a test says otherwise: what
 * switchyard's App asks for (issues, contents, metadata), plus what its queue policy and
 * organization features read (checks, statuses and actions for the default branch's CI state,
 * `organization_projects` for a Projects field, `members` for organization owners), so the
 * happy path works; a test removes one to see the "missing permission" answers.
 */
export const DEFAULT_INSTALLATION_PERMISSIONS: Readonly<Record<string, PermissionLevel>> = {
  issues: "write",
  metadata: "read",
  contents: "read",
  checks: "read",
  statuses: "read",
  actions: "read",
  organization_projects: "read",
  members: "read",
};

export interface SimInstallation {
  id: number;
  account: string;
  accountId: number;
  /** `null` means every repository of the account ("all"). */
  repositoryIds: number[] | null;
  createdAt: string;
  suspendedAt: string | null;
  /** Granted permissions by name (`checks`, `organization_projects`, ...). */
  permissions: Record<string, PermissionLevel>;
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

// --- CI on the default branch: check suites and runs, commit statuses, workflow runs --------

/** The App that owns a check suite and its runs (GitHub Actions unless a test names another). */
export interface SimCheckApp {
  id: number;
  slug: string;
  name: string;
  /** The account that owns the App. */
  owner: string;
  permissions: Record<string, PermissionLevel>;
  events: string[];
}

/** Check run conclusions GitHub's REST description allows (`stale` is GitHub's own, set by it). */
export const CHECK_RUN_CONCLUSIONS = [
  "success",
  "failure",
  "neutral",
  "cancelled",
  "skipped",
  "timed_out",
  "action_required",
] as const;
export type CheckRunConclusion = (typeof CHECK_RUN_CONCLUSIONS)[number];

/** Suites and workflow runs also end `startup_failure` (a workflow that could not start) or `stale`. */
export const RUN_CONCLUSIONS = [...CHECK_RUN_CONCLUSIONS, "startup_failure", "stale"] as const;
export type RunConclusion = (typeof RUN_CONCLUSIONS)[number];

export type CheckStatus = "queued" | "in_progress" | "completed";

export interface SimCheckSuite {
  id: number;
  nodeId: string;
  repoId: number;
  headSha: string;
  app: SimCheckApp;
  status: CheckStatus;
  conclusion: RunConclusion | null;
  createdAt: string;
  updatedAt: string;
  /** The workflow run this suite belongs to (GitHub Actions makes one suite per run). */
  workflowRunId: number | null;
}

export interface SimCheckRun {
  id: number;
  nodeId: string;
  suiteId: number;
  repoId: number;
  headSha: string;
  name: string;
  status: CheckStatus;
  conclusion: CheckRunConclusion | null;
  startedAt: string;
  completedAt: string | null;
  detailsUrl: string | null;
  title: string | null;
  summary: string | null;
}

export const STATUS_STATES = ["error", "failure", "pending", "success"] as const;
export type StatusState = (typeof STATUS_STATES)[number];

export interface SimStatus {
  id: number;
  nodeId: string;
  repoId: number;
  sha: string;
  context: string;
  state: StatusState;
  description: string | null;
  targetUrl: string | null;
  creator: string;
  createdAt: string;
  updatedAt: string;
}

export interface SimWorkflow {
  id: number;
  nodeId: string;
  repoId: number;
  name: string;
  path: string;
  createdAt: string;
}

export interface SimWorkflowRun {
  id: number;
  nodeId: string;
  repoId: number;
  workflowId: number;
  suiteId: number;
  headSha: string;
  event: string;
  status: CheckStatus;
  conclusion: RunConclusion | null;
  runNumber: number;
  actor: string;
  createdAt: string;
  updatedAt: string;
}

/** GitHub Actions, as GitHub names it in check suites and runs. */
export const GITHUB_ACTIONS: SimCheckApp = {
  id: 15368,
  slug: "github-actions",
  name: "GitHub Actions",
  owner: "github",
  permissions: {
    actions: "write",
    checks: "write",
    contents: "write",
    metadata: "read",
    pull_requests: "write",
    statuses: "write",
  },
  events: ["check_run", "check_suite", "push", "pull_request", "workflow_dispatch"],
};

/** Another CI App a test names by its slug (an id of its own, the checks it reports). */
export function ciApp(slug: string): SimCheckApp {
  return {
    id: accountId(`app:${slug}`),
    slug,
    name: slug,
    owner: slug,
    permissions: { checks: "write", metadata: "read", statuses: "write" },
    events: ["check_run", "check_suite"],
  };
}

/**
 * The worst conclusion wins: a suite (or a run's combination) is `action_required` if any
 * member is, else `startup_failure`, `failure`, `timed_out`, `cancelled`, `stale`, `neutral`,
 * then `success`, and `skipped` only when every member was skipped.
 */
const SEVERITY: readonly RunConclusion[] = [
  "action_required",
  "startup_failure",
  "failure",
  "timed_out",
  "cancelled",
  "stale",
  "neutral",
  "success",
  "skipped",
];

export function worstConclusion(conclusions: RunConclusion[]): RunConclusion | null {
  for (const c of SEVERITY) if (conclusions.includes(c)) return c;
  return null;
}

// --- Projects (v2) of an organization --------------------------------------------------------

/** The colours GitHub's single-select options take. */
export const OPTION_COLORS = [
  "GRAY",
  "BLUE",
  "GREEN",
  "YELLOW",
  "ORANGE",
  "RED",
  "PINK",
  "PURPLE",
] as const;
export type OptionColor = (typeof OPTION_COLORS)[number];

export interface SimProjectOption {
  /** GitHub's option ids are 8 hex digits. */
  id: string;
  name: string;
  color: OptionColor;
  description: string;
}

/** A single-select field (the only kind of field the simulator models). */
export interface SimProjectField {
  id: number;
  nodeId: string;
  name: string;
  options: SimProjectOption[];
  createdAt: string;
}

export interface SimProjectValue {
  /** The value's own node id (`ProjectV2ItemFieldSingleSelectValue.id`). */
  nodeId: string;
  optionId: string;
  createdAt: string;
  updatedAt: string;
}

/** An issue in a project, with its field values by field id. */
export interface SimProjectItem {
  id: number;
  nodeId: string;
  issueId: number;
  /** The issue's node id (`content_node_id`), kept should the issue go. */
  contentNodeId: string;
  values: Map<number, SimProjectValue>;
  creator: string;
  createdAt: string;
  updatedAt: string;
}

export interface SimProject {
  id: number;
  nodeId: string;
  org: string;
  number: number;
  title: string;
  fields: SimProjectField[];
  items: SimProjectItem[];
  creator: string;
  createdAt: string;
  updatedAt: string;
}
