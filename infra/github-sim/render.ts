// REST and webhook JSON shapes, as GitHub renders them. The contract tests validate every
// object built here against GitHub's published OpenAPI description.
import {
  accountId,
  DEFAULT_BRANCH,
  DEFAULT_INSTALLATION_PERMISSIONS,
  fullName,
  nodeId,
  REPO_ROLES,
  type RepoRole,
  type SimComment,
  type SimCommit,
  type SimFile,
  type SimInstallation,
  type SimIssue,
  type SimLabel,
  type SimLabelEvent,
  type SimRepo,
} from "./model.ts";

export interface RenderContext {
  /** The API origin the client used, e.g. `http://127.0.0.1:8787`. */
  base: string;
  repoOf(issue: SimIssue): SimRepo;
  issueById(id: number): SimIssue | undefined;
  appId: number;
  appSlug: string;
  /** A login's role on a repository (registered users; the owner's login is `admin`). */
  roleOf(login: string, repo: SimRepo): RepoRole | undefined;
}

/** GitHub's `permissions` of a repository for a role: each role includes the weaker ones. */
export function renderRepoPermissions(role: RepoRole) {
  const rank = REPO_ROLES.indexOf(role);
  return {
    admin: rank >= 4,
    maintain: rank >= 3,
    push: rank >= 2,
    triage: rank >= 1,
    pull: rank >= 0,
  };
}

/**
 * `author_association` of an issue's or a comment's author: `OWNER` for the repository owner's login, `COLLABORATOR`
 * for a registered user with write, maintain or admin on the repository, `NONE` otherwise
 * (App bots included).
 */
export function authorAssociation(
  ctx: Pick<RenderContext, "roleOf">,
  repo: SimRepo,
  login: string,
): "OWNER" | "COLLABORATOR" | "NONE" {
  if (login.toLowerCase() === repo.owner.toLowerCase()) return "OWNER";
  const role = ctx.roleOf(login, repo);
  return role === "write" || role === "maintain" || role === "admin" ? "COLLABORATOR" : "NONE";
}

export function renderUser(
  base: string,
  login: string,
  type: "User" | "Organization" | "Bot" = "User",
) {
  const id = accountId(login);
  const path = encodeURIComponent(login);
  const url = `${base}/users/${path}`;
  return {
    login,
    id,
    node_id: nodeId(type === "Organization" ? "O" : "U", id),
    avatar_url: `${base}/avatars/${path}`,
    gravatar_id: "",
    url,
    html_url: `${base}/${path}`,
    followers_url: `${url}/followers`,
    following_url: `${url}/following{/other_user}`,
    gists_url: `${url}/gists{/gist_id}`,
    starred_url: `${url}/starred{/owner}{/repo}`,
    subscriptions_url: `${url}/subscriptions`,
    organizations_url: `${url}/orgs`,
    repos_url: `${url}/repos`,
    events_url: `${url}/events{/privacy}`,
    received_events_url: `${url}/received_events`,
    type,
    user_view_type: "public",
    site_admin: false,
  };
}

export function renderOrganization(base: string, login: string) {
  const id = accountId(login);
  const url = `${base}/orgs/${login}`;
  return {
    login,
    id,
    node_id: nodeId("O", id),
    url,
    repos_url: `${url}/repos`,
    events_url: `${url}/events`,
    hooks_url: `${url}/hooks`,
    issues_url: `${url}/issues`,
    members_url: `${url}/members{/member}`,
    public_members_url: `${url}/public_members{/member}`,
    avatar_url: `${base}/avatars/${login}`,
    description: null,
  };
}

export function renderRepo(base: string, repo: SimRepo) {
  const url = `${base}/repos/${fullName(repo)}`;
  const html = `${base}/${fullName(repo)}`;
  const openIssues = [...repo.issues.values()].filter((i) => i.state === "open").length;
  return {
    id: repo.id,
    node_id: repo.nodeId,
    name: repo.name,
    full_name: fullName(repo),
    private: repo.private,
    owner: renderUser(base, repo.owner, "Organization"),
    html_url: html,
    description: null,
    fork: false,
    url,
    archive_url: `${url}/{archive_format}{/ref}`,
    assignees_url: `${url}/assignees{/user}`,
    blobs_url: `${url}/git/blobs{/sha}`,
    branches_url: `${url}/branches{/branch}`,
    collaborators_url: `${url}/collaborators{/collaborator}`,
    comments_url: `${url}/comments{/number}`,
    commits_url: `${url}/commits{/sha}`,
    compare_url: `${url}/compare/{base}...{head}`,
    contents_url: `${url}/contents/{+path}`,
    contributors_url: `${url}/contributors`,
    deployments_url: `${url}/deployments`,
    downloads_url: `${url}/downloads`,
    events_url: `${url}/events`,
    forks_url: `${url}/forks`,
    git_commits_url: `${url}/git/commits{/sha}`,
    git_refs_url: `${url}/git/refs{/sha}`,
    git_tags_url: `${url}/git/tags{/sha}`,
    git_url: `git://sim.invalid/${fullName(repo)}.git`,
    hooks_url: `${url}/hooks`,
    issue_comment_url: `${url}/issues/comments{/number}`,
    issue_events_url: `${url}/issues/events{/number}`,
    issues_url: `${url}/issues{/number}`,
    keys_url: `${url}/keys{/key_id}`,
    labels_url: `${url}/labels{/name}`,
    languages_url: `${url}/languages`,
    merges_url: `${url}/merges`,
    milestones_url: `${url}/milestones{/number}`,
    notifications_url: `${url}/notifications{?since,all,participating}`,
    pulls_url: `${url}/pulls{/number}`,
    releases_url: `${url}/releases{/id}`,
    ssh_url: `git@sim.invalid:${fullName(repo)}.git`,
    stargazers_url: `${url}/stargazers`,
    statuses_url: `${url}/statuses/{sha}`,
    subscribers_url: `${url}/subscribers`,
    subscription_url: `${url}/subscription`,
    tags_url: `${url}/tags`,
    teams_url: `${url}/teams`,
    trees_url: `${url}/git/trees{/sha}`,
    clone_url: `${html}.git`,
    mirror_url: null,
    svn_url: html,
    homepage: null,
    language: null,
    forks_count: 0,
    forks: 0,
    stargazers_count: 0,
    watchers_count: 0,
    watchers: 0,
    size: 0,
    default_branch: DEFAULT_BRANCH,
    open_issues_count: openIssues,
    open_issues: openIssues,
    is_template: false,
    topics: [],
    has_issues: true,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    has_downloads: false,
    has_discussions: false,
    archived: repo.archived,
    disabled: false,
    visibility: repo.private ? "private" : "public",
    pushed_at: repo.pushedAt,
    created_at: repo.createdAt,
    updated_at: repo.createdAt,
    license: null,
    network_count: 0,
    subscribers_count: 0,
  };
}

/** A user's commit e-mail as GitHub hides it. */
function noreplyEmail(login: string): string {
  return `${accountId(login)}+${login}@users.noreply.github.com`;
}

function unixSeconds(iso: string): number {
  return Math.floor(Date.parse(iso) / 1000);
}

/**
 * The repository of a `push` payload differs from the REST one: `created_at` and `pushed_at`
 * are Unix seconds, the owner carries `name` and `email`, and `stargazers`, `master_branch`
 * and (for an organization) `organization` are added.
 */
export function renderPushRepository(base: string, repo: SimRepo) {
  const rest = renderRepo(base, repo);
  return {
    ...rest,
    owner: { name: repo.owner, email: null, ...rest.owner },
    created_at: unixSeconds(repo.createdAt),
    pushed_at: unixSeconds(repo.pushedAt),
    stargazers: 0,
    master_branch: DEFAULT_BRANCH,
    organization: repo.owner,
  };
}

export function renderPusher(login: string) {
  return { name: login, email: noreplyEmail(login) };
}

export function renderPushCommit(base: string, repo: SimRepo, commit: SimCommit) {
  const person = {
    name: commit.author,
    email: noreplyEmail(commit.author),
    username: commit.author,
  };
  return {
    id: commit.id,
    tree_id: commit.treeId,
    distinct: true,
    message: commit.message,
    timestamp: commit.timestamp,
    url: `${base}/${fullName(repo)}/commit/${commit.id}`,
    author: person,
    // Commits made on github.com are committed by GitHub itself ("web-flow").
    committer: { name: "GitHub", email: "noreply@github.com", username: "web-flow" },
    added: commit.added,
    removed: commit.removed,
    modified: commit.modified,
  };
}

function contentLinks(
  base: string,
  repo: SimRepo,
  path: string,
  ref: string,
  sha: string,
  kind: "blob" | "tree",
) {
  const encoded = path.split("/").map(encodeURIComponent).join("/");
  const url = `${base}/repos/${fullName(repo)}/contents/${encoded}?ref=${encodeURIComponent(ref)}`;
  const git = `${base}/repos/${fullName(repo)}/git/${kind === "blob" ? "blobs" : "trees"}/${sha}`;
  const html = `${base}/${fullName(repo)}/${kind}/${encodeURIComponent(ref)}/${encoded}`;
  return { encoded, url, git, html };
}

/** An entry of a directory listing (`GET .../contents/{dir}`): a file or a subdirectory. */
export function renderContentEntry(
  base: string,
  repo: SimRepo,
  ref: string,
  entry: { type: "file" | "dir"; path: string; sha: string; size: number },
) {
  const kind = entry.type === "file" ? "blob" : "tree";
  const l = contentLinks(base, repo, entry.path, ref, entry.sha, kind);
  return {
    type: entry.type,
    size: entry.size,
    name: entry.path.slice(entry.path.lastIndexOf("/") + 1),
    path: entry.path,
    sha: entry.sha,
    url: l.url,
    git_url: l.git,
    html_url: l.html,
    download_url:
      entry.type === "file"
        ? `${base}/${fullName(repo)}/raw/${encodeURIComponent(ref)}/${l.encoded}`
        : null,
    _links: { self: l.url, git: l.git, html: l.html },
  };
}

/**
 * A file as `GET .../contents/{path}` answers in its JSON form: base64 `content` wrapped at 60
 * characters, or (over `maxContentBytes`, as GitHub does above 1 MB) empty `content` with
 * `encoding: "none"`.
 */
export function renderContentFile(
  base: string,
  repo: SimRepo,
  ref: string,
  file: SimFile,
  maxContentBytes: number,
) {
  const entry = renderContentEntry(base, repo, ref, { type: "file", ...file });
  const inline = file.size <= maxContentBytes;
  return {
    type: "file" as const,
    encoding: inline ? "base64" : "none",
    size: entry.size,
    name: entry.name,
    path: entry.path,
    content: inline ? base64Lines(new TextEncoder().encode(file.text)) : "",
    sha: entry.sha,
    url: entry.url,
    git_url: entry.git_url,
    html_url: entry.html_url,
    download_url: entry.download_url,
    _links: entry._links,
  };
}

/** Base64 in lines of 60 characters, each ending in a newline, as GitHub sends it. */
function base64Lines(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  const b64 = btoa(binary);
  let out = "";
  for (let i = 0; i < b64.length; i += 60) out += `${b64.slice(i, i + 60)}\n`;
  return out;
}

export function renderLabel(base: string, repo: SimRepo, label: SimLabel) {
  return {
    id: label.id,
    node_id: label.nodeId,
    url: `${base}/repos/${fullName(repo)}/labels/${encodeURIComponent(label.name)}`,
    name: label.name,
    description: label.description,
    color: label.color,
    default: label.default,
  };
}

export function renderIssue(ctx: RenderContext, issue: SimIssue) {
  const repo = ctx.repoOf(issue);
  const base = ctx.base;
  const url = `${base}/repos/${fullName(repo)}/issues/${issue.number}`;
  const subIssues = issue.subIssueIds.map((id) => ctx.issueById(id)).filter((i) => i !== undefined);
  const completed = subIssues.filter((i) => i.state === "closed").length;
  const blockers = issue.blockedBy
    .map((b) => ctx.issueById(b.issueId))
    .filter((i) => i !== undefined);
  const blocked = issue.blockingIds.map((id) => ctx.issueById(id)).filter((i) => i !== undefined);
  const parent = issue.parentId === null ? undefined : ctx.issueById(issue.parentId);
  const parentRepo = parent ? ctx.repoOf(parent) : undefined;
  return {
    id: issue.id,
    node_id: issue.nodeId,
    url,
    repository_url: `${base}/repos/${fullName(repo)}`,
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: `${base}/${fullName(repo)}/issues/${issue.number}`,
    number: issue.number,
    state: issue.state,
    state_reason: issue.stateReason,
    title: issue.title,
    body: issue.body,
    user: renderUser(base, issue.user, issue.user.endsWith("[bot]") ? "Bot" : "User"),
    labels: issue.labels
      .map((name) => {
        const label = repo.labels.get(name.toLowerCase());
        return label ? renderLabel(base, repo, label) : null;
      })
      .filter((l) => l !== null),
    assignee: null,
    assignees: [],
    milestone: null,
    locked: false,
    active_lock_reason: null,
    comments: issue.comments.length,
    closed_at: issue.closedAt,
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
    closed_by: issue.closedBy ? renderUser(base, issue.closedBy) : null,
    author_association: authorAssociation(ctx, repo, issue.user),
    timeline_url: `${url}/timeline`,
    performed_via_github_app: null,
    reactions: {
      url: `${url}/reactions`,
      total_count: 0,
      "+1": 0,
      "-1": 0,
      laugh: 0,
      hooray: 0,
      confused: 0,
      heart: 0,
      rocket: 0,
      eyes: 0,
    },
    sub_issues_summary: {
      total: subIssues.length,
      completed,
      percent_completed:
        subIssues.length === 0 ? 0 : Math.floor((completed * 100) / subIssues.length),
    },
    parent_issue_url:
      parent && parentRepo ? `${base}/repos/${fullName(parentRepo)}/issues/${parent.number}` : null,
    issue_dependencies_summary: {
      blocked_by: blockers.filter((b) => b.state === "open").length,
      blocking: blocked.filter((b) => b.state === "open").length,
      total_blocked_by: blockers.length,
      total_blocking: blocked.length,
    },
  };
}

export function renderComment(ctx: RenderContext, issue: SimIssue, comment: SimComment) {
  const repo = ctx.repoOf(issue);
  const base = ctx.base;
  return {
    id: comment.id,
    node_id: comment.nodeId,
    url: `${base}/repos/${fullName(repo)}/issues/comments/${comment.id}`,
    html_url: `${base}/${fullName(repo)}/issues/${issue.number}#issuecomment-${comment.id}`,
    issue_url: `${base}/repos/${fullName(repo)}/issues/${issue.number}`,
    body: comment.body,
    user: renderUser(base, comment.user, comment.user.endsWith("[bot]") ? "Bot" : "User"),
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    author_association: authorAssociation(ctx, repo, comment.user),
    performed_via_github_app: null,
    reactions: {
      url: `${base}/repos/${fullName(repo)}/issues/comments/${comment.id}/reactions`,
      total_count: 0,
      "+1": 0,
      "-1": 0,
      laugh: 0,
      hooray: 0,
      confused: 0,
      heart: 0,
      rocket: 0,
      eyes: 0,
    },
  };
}

export function renderLabelEvent(ctx: RenderContext, issue: SimIssue, event: SimLabelEvent) {
  const repo = ctx.repoOf(issue);
  return {
    id: event.id,
    node_id: nodeId(event.action === "labeled" ? "LE" : "UNLE", event.id),
    url: `${ctx.base}/repos/${fullName(repo)}/issues/events/${event.id}`,
    actor: renderUser(ctx.base, event.actor, event.actor.endsWith("[bot]") ? "Bot" : "User"),
    event: event.action,
    commit_id: null,
    commit_url: null,
    created_at: event.createdAt,
    performed_via_github_app: null,
    label: { name: event.label, color: event.color },
  };
}

/** The App's permissions: those its installations get by default (model.ts). */
export const APP_PERMISSIONS = DEFAULT_INSTALLATION_PERMISSIONS;
export const APP_EVENTS = [
  "issues",
  "issue_comment",
  "label",
  "sub_issues",
  "issue_dependencies",
  "push",
  "check_run",
  "check_suite",
  "status",
  "workflow_run",
  "projects_v2_item",
];

export function renderInstallation(ctx: RenderContext, installation: SimInstallation) {
  const base = ctx.base;
  return {
    id: installation.id,
    client_id: `Iv1.sim${ctx.appId}`,
    // GitHub's description of this field is allOf(simple-user, enterprise): carry both.
    account: {
      ...renderUser(base, installation.account, "Organization"),
      name: installation.account,
      slug: installation.account.toLowerCase(),
      created_at: installation.createdAt,
      updated_at: installation.createdAt,
    },
    repository_selection: installation.repositoryIds === null ? "all" : "selected",
    access_tokens_url: `${base}/app/installations/${installation.id}/access_tokens`,
    repositories_url: `${base}/installation/repositories`,
    html_url: `${base}/organizations/${installation.account}/settings/installations/${installation.id}`,
    app_id: ctx.appId,
    app_slug: ctx.appSlug,
    target_id: installation.accountId,
    target_type: "Organization",
    permissions: { ...installation.permissions },
    events: [...APP_EVENTS],
    created_at: installation.createdAt,
    updated_at: installation.createdAt,
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
    suspended_by: installation.suspendedAt ? renderUser(base, installation.account) : null,
    suspended_at: installation.suspendedAt,
  };
}

/** `GET /user` with a user token: the authenticated user as GitHub's `private-user`. */
export function renderAuthenticatedUser(base: string, login: string, createdAt: string) {
  return {
    ...renderUser(base, login, "User"),
    name: null,
    company: null,
    blog: "",
    location: null,
    email: null,
    notification_email: null,
    hireable: null,
    bio: null,
    twitter_username: null,
    public_repos: 0,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: createdAt,
    updated_at: createdAt,
    private_gists: 0,
    total_private_repos: 0,
    owned_private_repos: 0,
    disk_usage: 0,
    collaborators: 0,
    two_factor_authentication: true,
    plan: { name: "free", space: 976562499, collaborators: 0, private_repos: 10000 },
  };
}

/**
 * `GET .../collaborators/{username}/permission`: `permission` is the legacy level (maintain
 * counts as write, triage as read), `role_name` the role itself.
 */
export function renderCollaboratorPermission(base: string, login: string, role: RepoRole | null) {
  const permission =
    role === null
      ? "none"
      : role === "admin"
        ? "admin"
        : role === "maintain" || role === "write"
          ? "write"
          : "read";
  const roleName = role ?? "none";
  return {
    permission,
    role_name: roleName,
    user: {
      ...renderUser(base, login, login.endsWith("[bot]") ? "Bot" : "User"),
      permissions: role
        ? renderRepoPermissions(role)
        : { admin: false, maintain: false, push: false, triage: false, pull: false },
      role_name: roleName,
    },
  };
}

export function renderApp(ctx: RenderContext, createdAt: string) {
  return {
    id: ctx.appId,
    slug: ctx.appSlug,
    node_id: nodeId("A", ctx.appId),
    client_id: `Iv1.sim${ctx.appId}`,
    owner: renderUser(ctx.base, "switchyard-dev", "Organization"),
    name: ctx.appSlug,
    description: "GitHub App served by the switchyard simulator",
    external_url: `${ctx.base}/apps/${ctx.appSlug}`,
    html_url: `${ctx.base}/apps/${ctx.appSlug}`,
    created_at: createdAt,
    updated_at: createdAt,
    permissions: { ...APP_PERMISSIONS },
    events: [...APP_EVENTS],
  };
}
