// The simulator's mutable world and every state change a user, an App or GitHub itself can
// make. Each change emits the webhook(s) GitHub would send through `onEvent`.

import { CiState } from "./checks.ts";
import { SimHttpError, SimMoved } from "./errors.ts";
import {
  accountId,
  DEFAULT_BRANCH,
  DEFAULT_INSTALLATION_PERMISSIONS,
  fullName,
  hasScopes,
  type IssueState,
  isoSeconds,
  nodeId,
  type RepoRole,
  type SimComment,
  type SimCommit,
  type SimFile,
  type SimInstallation,
  type SimIssue,
  type SimLabel,
  type SimRepo,
  type SimUser,
  type SimUserToken,
  type StateReason,
  tokenKindOf,
} from "./model.ts";
import { OrgDirectory } from "./orgs.ts";
import { ProjectsState } from "./projects.ts";
import { renderOrganization } from "./render.ts";

export { SimHttpError, SimMoved };

/** What a change announces: the webhook event, its action and the payload's specific fields. */
export interface SimEvent {
  event: string;
  /** Empty for events without an action (`push`): the payload then carries no `action`. */
  action: string;
  /** The repository the event belongs to (absent for installation events). */
  repo: SimRepo | null;
  /** Installation events name their installation directly. */
  installation?: SimInstallation;
  sender: string;
  /** Builds the event-specific part of the payload (issue, comment, label, ...). */
  body: (base: string) => Record<string, unknown>;
}

/** What a registered token may do beyond its user's roles (see `SimUserToken`). */
export interface TokenGrant {
  scopes?: string[];
  clientId?: string | null;
}

const DEFAULT_LABEL_COLORS = ["0e8a16", "d93f0b", "1d76db", "fbca04", "5319e7", "b60205"];

export class SimState {
  repos = new Map<string, SimRepo>();
  issuesById = new Map<number, SimIssue>();
  installations = new Map<number, SimInstallation>();
  deletedIssues = new Set<string>();
  /** `repoId#number` of a transferred issue → `repoId#number` of where it went. */
  transferredIssues = new Map<string, string>();
  /** Lower-cased `owner/name` a repository had before a rename or transfer → its id. */
  redirects = new Map<string, number>();
  /** Registered users by lower-cased login. */
  users = new Map<string, SimUser>();
  /** Organization memberships (orgs.ts). */
  readonly orgs = new OrgDirectory();
  /** Check suites and runs, commit statuses and workflow runs (checks.ts). */
  readonly ci = new CiState(this);
  /** Organizations' Projects (v2) (projects.ts). */
  readonly projects = new ProjectsState(this);
  private nextId = 1000;
  clock: () => Date;
  onEvent: (event: SimEvent) => void = () => {};

  constructor(clock: () => Date = () => new Date()) {
    this.clock = clock;
  }

  now(): string {
    return isoSeconds(this.clock());
  }

  newId(): number {
    this.nextId += 1;
    return this.nextId;
  }

  reset(): void {
    this.repos.clear();
    this.issuesById.clear();
    this.installations.clear();
    this.deletedIssues.clear();
    this.transferredIssues.clear();
    this.redirects.clear();
    this.users.clear();
    this.orgs.reset();
    this.ci.reset();
    this.projects.reset();
    this.nextId = 1000;
  }

  // --- lookups -------------------------------------------------------------------------------

  repo(owner: string, name: string): SimRepo | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  requireRepo(owner: string, name: string): SimRepo {
    const repo = this.repo(owner, name);
    if (!repo) throw new SimHttpError(404, "Not Found");
    return repo;
  }

  repoById(id: number): SimRepo | undefined {
    for (const repo of this.repos.values()) if (repo.id === id) return repo;
    return undefined;
  }

  /**
   * The repository at `owner/name` as GitHub's REST API resolves it: a name a repository had
   * before a rename or transfer (and that no repository has taken since) throws `SimMoved` to
   * `/repositories/{id}`; an unknown name 404.
   */
  requireRepoOrMoved(owner: string, name: string): SimRepo {
    const repo = this.repo(owner, name);
    if (repo) return repo;
    const moved = this.renamedRepo(owner, name);
    if (moved) throw new SimMoved(`/repositories/${moved.id}`, true);
    throw new SimHttpError(404, "Not Found");
  }

  /** The repository that was at `owner/name` before a rename or transfer, if it still exists. */
  renamedRepo(owner: string, name: string): SimRepo | undefined {
    const id = this.redirects.get(`${owner}/${name}`.toLowerCase());
    return id === undefined ? undefined : this.repoById(id);
  }

  repoOf(issue: SimIssue): SimRepo {
    for (const repo of this.repos.values()) if (repo.id === issue.repoId) return repo;
    throw new Error(`issue ${issue.id} has no repository`);
  }

  /**
   * The issue `number` of `repo`. A deleted one answers 410; a transferred one throws `SimMoved`
   * to `/repositories/{id}/issues/{n}` of where it lives now (following later transfers; 410
   * when it was deleted there, 404 when its new repository is gone).
   */
  requireIssue(repo: SimRepo, number: number): SimIssue {
    const issue = repo.issues.get(number);
    if (issue) return issue;
    let key = `${repo.id}#${number}`;
    if (this.transferredIssues.has(key)) {
      for (let hops = 0; hops < 100; hops += 1) {
        const next = this.transferredIssues.get(key);
        if (next === undefined) break;
        key = next;
      }
      const [repoId, n] = key.split("#").map(Number) as [number, number];
      const target = this.repoById(repoId)?.issues.get(n);
      if (target) throw new SimMoved(`/repositories/${repoId}/issues/${n}`, false);
    }
    if (this.deletedIssues.has(key)) throw new SimHttpError(410, "This issue was deleted");
    throw new SimHttpError(404, "Not Found");
  }

  /** `owner/name#n` or a number within `repo`. */
  resolveRef(repo: SimRepo, ref: number | string): SimIssue {
    if (typeof ref === "number") return this.requireIssue(repo, ref);
    const m = /^([^/]+)\/([^#]+)#(\d+)$/.exec(ref);
    if (!m) {
      if (/^\d+$/.test(ref)) return this.requireIssue(repo, Number(ref));
      throw new SimHttpError(422, `bad issue reference ${ref}`);
    }
    return this.requireIssue(this.requireRepo(m[1]!, m[2]!), Number(m[3]));
  }

  installationFor(repo: SimRepo): SimInstallation | undefined {
    for (const inst of this.installations.values()) {
      if (inst.account.toLowerCase() !== repo.owner.toLowerCase()) continue;
      if (inst.repositoryIds === null || inst.repositoryIds.includes(repo.id)) return inst;
    }
    return undefined;
  }

  /** How many repositories `inst` covers (what its rate limit grows with), without a list. */
  installationRepoCount(inst: SimInstallation): number {
    if (inst.repositoryIds !== null) return inst.repositoryIds.length;
    const account = inst.account.toLowerCase();
    let n = 0;
    for (const r of this.repos.values()) if (r.owner.toLowerCase() === account) n += 1;
    return n;
  }

  installationRepos(inst: SimInstallation): SimRepo[] {
    return [...this.repos.values()]
      .filter(
        (r) =>
          r.owner.toLowerCase() === inst.account.toLowerCase() &&
          (inst.repositoryIds === null || inst.repositoryIds.includes(r.id)),
      )
      .sort((a, b) => a.id - b.id);
  }

  // --- users -------------------------------------------------------------------------------

  /**
   * Registers `login` with a token and a role per repository (`owner/name`), replacing an
   * earlier registration of the same login (and its tokens). A token already held by another
   * login is refused.
   */
  registerUser(
    login: string,
    token: string,
    repos: Record<string, RepoRole>,
    grant: TokenGrant = {},
  ): SimUser {
    const user: SimUser = {
      login,
      token,
      tokens: new Map(),
      repos: new Map(Object.entries(repos).map(([name, role]) => [name.toLowerCase(), role])),
      createdAt: this.now(),
    };
    this.claimToken(login, token);
    user.tokens.set(token, this.userToken(token, grant));
    this.users.set(login.toLowerCase(), user);
    return user;
  }

  /** Gives a registered user one more token (same roles); refused when another login holds it. */
  addUserToken(user: SimUser, token: string, grant: TokenGrant = {}): SimUserToken {
    this.claimToken(user.login, token);
    const added = this.userToken(token, grant);
    user.tokens.set(token, added);
    return added;
  }

  private claimToken(login: string, token: string): void {
    const holder = this.userByToken(token);
    if (holder && holder.login.toLowerCase() !== login.toLowerCase())
      throw new SimHttpError(409, `token already belongs to the user ${holder.login}`);
  }

  private userToken(token: string, grant: TokenGrant): SimUserToken {
    const kind = tokenKindOf(token);
    return {
      token,
      kind,
      scopes: hasScopes(kind) ? (grant.scopes ?? ["repo"]) : [],
      clientId: kind === "app-user" ? (grant.clientId ?? null) : null,
      id: this.newId(),
      createdAt: this.now(),
    };
  }

  user(login: string): SimUser | undefined {
    return this.users.get(login.toLowerCase());
  }

  userByToken(token: string): SimUser | undefined {
    for (const user of this.users.values()) if (user.tokens.has(token)) return user;
    return undefined;
  }

  /**
   * The role `login` has on `repo`: `admin` for an active owner of the repository's
   * organization (as on GitHub), else a registered user's entry for it, else `admin` for the
   * repository owner's own login, else none.
   */
  roleOf(login: string, repo: SimRepo): RepoRole | undefined {
    if (this.orgs.isActiveOwner(repo.owner, login)) return "admin";
    const role = this.user(login)?.repos.get(fullName(repo).toLowerCase());
    if (role) return role;
    return login.toLowerCase() === repo.owner.toLowerCase() ? "admin" : undefined;
  }

  // --- repositories and labels ---------------------------------------------------------------

  createRepo(owner: string, name: string): SimRepo {
    const existing = this.repo(owner, name);
    if (existing) return existing;
    const id = this.newId();
    const repo: SimRepo = {
      id,
      nodeId: nodeId("R", id),
      owner,
      ownerId: accountId(owner),
      name,
      createdAt: this.now(),
      pushedAt: this.now(),
      labels: new Map(),
      issues: new Map(),
      nextNumber: 1,
      files: new Map(),
      head: null,
      commits: new Map(),
      archived: false,
      // Private unless made public (`POST /_sim/repos/{o}/{r}/visibility`): only installations
      // covering it can read it, which is what most tests assume of an installed repository.
      private: true,
    };
    this.repos.set(`${owner}/${name}`.toLowerCase(), repo);
    return repo;
  }

  /** A `repository` webhook (renamed, transferred, deleted, archived, ...) for `repo`. */
  private repositoryEvent(
    action: string,
    repo: SimRepo,
    sender: string,
    body: (base: string) => Record<string, unknown> = () => ({}),
  ): void {
    this.onEvent({ event: "repository", action, repo, sender, body });
  }

  /** Moves `repo` to `owner/name` in the name index; the old name redirects to its id. */
  private moveRepo(repo: SimRepo, owner: string, name: string): void {
    const clash = this.repo(owner, name);
    if (clash && clash !== repo)
      throw new SimHttpError(422, "Repository creation failed.", [
        {
          resource: "Repository",
          code: "custom",
          field: "name",
          message: "name already exists on this account",
        },
      ]);
    const oldKey = fullName(repo).toLowerCase();
    const newKey = `${owner}/${name}`.toLowerCase();
    this.repos.delete(oldKey);
    repo.owner = owner;
    repo.ownerId = accountId(owner);
    repo.name = name;
    this.repos.set(newKey, repo);
    this.redirects.delete(newKey);
    if (oldKey !== newKey) {
      this.redirects.set(oldKey, repo.id);
      // Collaborators keep their roles (registered users hold them by name).
      for (const user of this.users.values()) {
        const role = user.repos.get(oldKey);
        if (role) {
          user.repos.delete(oldKey);
          user.repos.set(newKey, role);
        }
      }
    }
  }

  /**
   * Renames `repo` (a `repository.renamed` with `changes.repository.name.from`); the old name
   * answers REST requests with a redirect to `/repositories/{id}` until another repository
   * takes it.
   */
  renameRepo(repo: SimRepo, name: string, sender: string): void {
    if (name === repo.name) return;
    const from = repo.name;
    this.moveRepo(repo, repo.owner, name);
    this.repositoryEvent("renamed", repo, sender, () => ({
      changes: { repository: { name: { from } } },
    }));
  }

  /**
   * Transfers `repo` to the account `owner`, keeping its id, issues, labels and files. The
   * installation that covered it loses it (`installation_repositories.removed`, rendered before
   * the move); an installation of the new owner on all its repositories gains it
   * (`installation_repositories.added`) and gets the `repository.transferred`, which GitHub
   * sends only to the account the repository was transferred to. A selected installation of the
   * new owner does not cover it until the repository is added to it.
   */
  transferRepo(repo: SimRepo, owner: string, sender: string): void {
    if (owner.toLowerCase() === repo.owner.toLowerCase()) return;
    if (this.repo(owner, repo.name))
      throw new SimHttpError(422, `${owner} already has a repository named ${repo.name}`);
    const from = repo.owner;
    const before = this.installationFor(repo);
    if (before) {
      const selection = before.repositoryIds === null ? "all" : "selected";
      this.onEvent({
        event: "installation_repositories",
        action: "removed",
        repo: null,
        installation: before,
        sender,
        body: () => ({
          installation: before,
          repository_selection: selection,
          repositories_added: [],
          repositories_removed: [repo],
        }),
      });
      if (before.repositoryIds !== null)
        before.repositoryIds = before.repositoryIds.filter((id) => id !== repo.id);
    }
    this.moveRepo(repo, owner, repo.name);
    const after = this.installationFor(repo);
    if (after) {
      this.onEvent({
        event: "installation_repositories",
        action: "added",
        repo: null,
        installation: after,
        sender,
        body: () => ({
          installation: after,
          repository_selection: after.repositoryIds === null ? "all" : "selected",
          repositories_added: [repo],
          repositories_removed: [],
        }),
      });
    }
    this.repositoryEvent("transferred", repo, sender, (base) => ({
      changes: { owner: { from: { organization: renderOrganization(base, from) } } },
    }));
  }

  /**
   * Deletes `repo` (a `repository.deleted`, rendered before it goes): its name and id answer
   * 404 afterwards, its issues are gone (edges from other repositories' issues go with them),
   * and a selected installation forgets it without an `installation_repositories` event.
   */
  deleteRepo(repo: SimRepo, sender: string): void {
    this.repositoryEvent("deleted", repo, sender);
    for (const issue of repo.issues.values()) {
      this.detachIssue(issue);
      this.issuesById.delete(issue.id);
    }
    this.repos.delete(fullName(repo).toLowerCase());
    for (const [name, id] of this.redirects) if (id === repo.id) this.redirects.delete(name);
    for (const inst of this.installations.values()) {
      if (inst.repositoryIds !== null)
        inst.repositoryIds = inst.repositoryIds.filter((id) => id !== repo.id);
    }
  }

  /** Archives or unarchives `repo` (`repository.archived` / `unarchived`); no-op when unchanged. */
  setArchived(repo: SimRepo, archived: boolean, sender: string): void {
    if (repo.archived === archived) return;
    repo.archived = archived;
    this.repositoryEvent(archived ? "archived" : "unarchived", repo, sender);
  }

  /** Makes `repo` private or public (`repository.privatized` / `publicized`); no-op when unchanged. */
  setPrivate(repo: SimRepo, isPrivate: boolean, sender: string): void {
    if (repo.private === isPrivate) return;
    repo.private = isPrivate;
    this.repositoryEvent(isPrivate ? "privatized" : "publicized", repo, sender);
  }

  ensureLabel(repo: SimRepo, name: string, sender: string, emit = true): SimLabel {
    const key = name.toLowerCase();
    const existing = repo.labels.get(key);
    if (existing) return existing;
    const id = this.newId();
    const label: SimLabel = {
      id,
      nodeId: nodeId("LA", id),
      name,
      color: DEFAULT_LABEL_COLORS[repo.labels.size % DEFAULT_LABEL_COLORS.length]!,
      description: null,
      default: false,
    };
    repo.labels.set(key, label);
    if (emit) {
      this.onEvent({ event: "label", action: "created", repo, sender, body: () => ({ label }) });
    }
    return label;
  }

  editLabel(
    repo: SimRepo,
    name: string,
    change: { name?: string; color?: string; description?: string | null },
    sender: string,
  ): SimLabel {
    const label = repo.labels.get(name.toLowerCase());
    if (!label) throw new SimHttpError(404, "Not Found");
    const changes: Record<string, { from: unknown }> = {};
    if (change.name !== undefined && change.name !== label.name) {
      changes.name = { from: label.name };
      repo.labels.delete(label.name.toLowerCase());
      for (const issue of repo.issues.values()) {
        issue.labels = issue.labels.map((l) =>
          l.toLowerCase() === name.toLowerCase() ? change.name! : l,
        );
      }
      label.name = change.name;
      repo.labels.set(label.name.toLowerCase(), label);
    }
    if (change.color !== undefined && change.color !== label.color) {
      changes.color = { from: label.color };
      label.color = change.color;
    }
    if (change.description !== undefined && change.description !== label.description) {
      changes.description = { from: label.description ?? "" };
      label.description = change.description;
    }
    this.onEvent({
      event: "label",
      action: "edited",
      repo,
      sender,
      body: () => ({ label, changes }),
    });
    return label;
  }

  deleteLabel(repo: SimRepo, name: string, sender: string): void {
    const label = repo.labels.get(name.toLowerCase());
    if (!label) throw new SimHttpError(404, "Not Found");
    repo.labels.delete(name.toLowerCase());
    // GitHub removes a deleted label from every issue without issues.unlabeled events.
    for (const issue of repo.issues.values()) {
      issue.labels = issue.labels.filter((l) => l.toLowerCase() !== name.toLowerCase());
    }
    this.onEvent({ event: "label", action: "deleted", repo, sender, body: () => ({ label }) });
  }

  // --- issues --------------------------------------------------------------------------------

  createIssue(
    repo: SimRepo,
    input: {
      title: string;
      body?: string | null;
      labels?: string[];
      number?: number;
      state?: IssueState;
      stateReason?: StateReason;
      createdAt?: string;
      updatedAt?: string;
      closedAt?: string | null;
      user?: string;
    },
    sender: string,
    emit = true,
  ): SimIssue {
    const number = input.number ?? repo.nextNumber;
    if (repo.issues.has(number)) throw new SimHttpError(422, `issue #${number} already exists`);
    repo.nextNumber = Math.max(repo.nextNumber, number + 1);
    const id = this.newId();
    const now = this.now();
    const issue: SimIssue = {
      id,
      nodeId: nodeId("I", id),
      repoId: repo.id,
      number,
      title: input.title,
      body: input.body ?? null,
      user: input.user ?? sender,
      state: input.state ?? "open",
      stateReason: input.stateReason ?? null,
      createdAt: input.createdAt ?? now,
      updatedAt: input.updatedAt ?? input.createdAt ?? now,
      closedAt: input.closedAt ?? null,
      closedBy: input.state === "closed" ? sender : null,
      labels: [],
      labelEvents: [],
      comments: [],
      parentId: null,
      subIssueIds: [],
      blockedBy: [],
      blockingIds: [],
    };
    for (const name of input.labels ?? []) {
      const label = this.ensureLabel(repo, name, sender, emit);
      if (!issue.labels.some((l) => l.toLowerCase() === label.name.toLowerCase()))
        issue.labels.push(label.name);
    }
    repo.issues.set(number, issue);
    this.issuesById.set(id, issue);
    if (emit) this.onEvent(this.issueEvent("opened", issue, sender));
    return issue;
  }

  issueEvent(
    action: string,
    issue: SimIssue,
    sender: string,
    extra: Record<string, unknown> = {},
  ): SimEvent {
    return {
      event: "issues",
      action,
      repo: this.repoOf(issue),
      sender,
      body: () => ({ issue, ...extra }),
    };
  }

  touch(issue: SimIssue): void {
    issue.updatedAt = this.now();
  }

  editIssue(
    issue: SimIssue,
    change: { title?: string; body?: string | null },
    sender: string,
  ): void {
    const changes: Record<string, { from: unknown }> = {};
    if (change.title !== undefined && change.title !== issue.title) {
      changes.title = { from: issue.title };
      issue.title = change.title;
    }
    if (change.body !== undefined && change.body !== issue.body) {
      changes.body = { from: issue.body ?? "" };
      issue.body = change.body;
    }
    if (Object.keys(changes).length === 0) return;
    this.touch(issue);
    this.onEvent(this.issueEvent("edited", issue, sender, { changes }));
  }

  closeIssue(
    issue: SimIssue,
    reason: Exclude<StateReason, "reopened" | null>,
    sender: string,
  ): void {
    if (issue.state === "closed" && issue.stateReason === reason) return;
    issue.state = "closed";
    issue.stateReason = reason;
    issue.closedAt = this.now();
    issue.closedBy = sender;
    this.touch(issue);
    this.onEvent(this.issueEvent("closed", issue, sender));
  }

  reopenIssue(issue: SimIssue, sender: string): void {
    if (issue.state === "open") return;
    issue.state = "open";
    issue.stateReason = "reopened";
    issue.closedAt = null;
    issue.closedBy = null;
    this.touch(issue);
    this.onEvent(this.issueEvent("reopened", issue, sender));
  }

  deleteIssue(issue: SimIssue, sender: string): void {
    const repo = this.repoOf(issue);
    // Announce before the edges disappear so the payload still describes the issue.
    this.onEvent(this.issueEvent("deleted", issue, sender));
    this.detachIssue(issue);
    repo.issues.delete(issue.number);
    this.issuesById.delete(issue.id);
    this.deletedIssues.add(`${repo.id}#${issue.number}`);
  }

  /** Removes every edge touching `issue` from the issues on the other end (no events). */
  private detachIssue(issue: SimIssue): void {
    if (issue.parentId !== null) {
      const parent = this.issuesById.get(issue.parentId);
      if (parent) parent.subIssueIds = parent.subIssueIds.filter((id) => id !== issue.id);
    }
    for (const childId of issue.subIssueIds) {
      const child = this.issuesById.get(childId);
      if (child) child.parentId = null;
    }
    for (const b of issue.blockedBy) {
      const blocker = this.issuesById.get(b.issueId);
      if (blocker) blocker.blockingIds = blocker.blockingIds.filter((id) => id !== issue.id);
    }
    for (const blockedId of issue.blockingIds) {
      const blocked = this.issuesById.get(blockedId);
      if (blocked) blocked.blockedBy = blocked.blockedBy.filter((b) => b.issueId !== issue.id);
    }
  }

  transferIssue(issue: SimIssue, target: SimRepo, sender: string): SimIssue {
    const repo = this.repoOf(issue);
    const moved = this.createIssue(
      target,
      { title: issue.title, body: issue.body, labels: [], user: issue.user },
      sender,
      false,
    );
    this.onEvent({
      event: "issues",
      action: "transferred",
      repo,
      sender,
      body: (base) => ({
        issue,
        changes: { new_issue: moved, new_repository: target, base },
      }),
    });
    repo.issues.delete(issue.number);
    this.issuesById.delete(issue.id);
    this.transferredIssues.set(`${repo.id}#${issue.number}`, `${target.id}#${moved.number}`);
    return moved;
  }

  addLabels(issue: SimIssue, names: string[], sender: string): void {
    const repo = this.repoOf(issue);
    for (const name of names) {
      const label = this.ensureLabel(repo, name, sender);
      if (issue.labels.some((l) => l.toLowerCase() === label.name.toLowerCase())) continue;
      issue.labels.push(label.name);
      issue.labelEvents.push({
        id: this.newId(),
        label: label.name,
        color: label.color,
        action: "labeled",
        actor: sender,
        createdAt: this.now(),
      });
      this.touch(issue);
      this.onEvent(this.issueEvent("labeled", issue, sender, { label }));
    }
  }

  /** Returns false when the issue does not carry the label (GitHub answers 404). */
  removeLabel(issue: SimIssue, name: string, sender: string): boolean {
    const repo = this.repoOf(issue);
    const index = issue.labels.findIndex((l) => l.toLowerCase() === name.toLowerCase());
    if (index < 0) return false;
    const [removed] = issue.labels.splice(index, 1);
    const label = repo.labels.get(removed!.toLowerCase())!;
    issue.labelEvents.push({
      id: this.newId(),
      label: label.name,
      color: label.color,
      action: "unlabeled",
      actor: sender,
      createdAt: this.now(),
    });
    this.touch(issue);
    this.onEvent(this.issueEvent("unlabeled", issue, sender, { label }));
    return true;
  }

  addComment(issue: SimIssue, body: string, sender: string): SimComment {
    const id = this.newId();
    const now = this.now();
    const comment: SimComment = {
      id,
      nodeId: nodeId("IC", id),
      issueId: issue.id,
      body,
      user: sender,
      createdAt: now,
      updatedAt: now,
    };
    issue.comments.push(comment);
    this.touch(issue);
    this.onEvent({
      event: "issue_comment",
      action: "created",
      repo: this.repoOf(issue),
      sender,
      body: () => ({ issue, comment }),
    });
    return comment;
  }

  findComment(id: number): { issue: SimIssue; comment: SimComment } {
    for (const issue of this.issuesById.values()) {
      const comment = issue.comments.find((c) => c.id === id);
      if (comment) return { issue, comment };
    }
    throw new SimHttpError(404, "Not Found");
  }

  editComment(id: number, body: string, sender: string): SimComment {
    const { issue, comment } = this.findComment(id);
    const from = comment.body;
    comment.body = body;
    comment.updatedAt = this.now();
    this.onEvent({
      event: "issue_comment",
      action: "edited",
      repo: this.repoOf(issue),
      sender,
      body: () => ({ issue, comment, changes: { body: { from } } }),
    });
    return comment;
  }

  deleteComment(id: number, sender: string): void {
    const { issue, comment } = this.findComment(id);
    issue.comments = issue.comments.filter((c) => c.id !== id);
    this.onEvent({
      event: "issue_comment",
      action: "deleted",
      repo: this.repoOf(issue),
      sender,
      body: () => ({ issue, comment }),
    });
  }

  // --- sub-issues and dependencies -----------------------------------------------------------

  addSubIssue(parent: SimIssue, child: SimIssue, replaceParent: boolean, sender: string): void {
    if (parent.id === child.id) throw new SimHttpError(422, "An issue cannot be its own sub-issue");
    const parentRepo = this.repoOf(parent);
    const childRepo = this.repoOf(child);
    if (parentRepo.owner.toLowerCase() !== childRepo.owner.toLowerCase())
      throw new SimHttpError(
        422,
        "The sub-issue must belong to the same repository owner as the parent issue",
      );
    if (child.parentId === parent.id)
      throw new SimHttpError(422, "Validation Failed", [
        {
          resource: "Issue",
          code: "custom",
          field: "sub_issue_id",
          message: "Issue is already a sub-issue of this issue",
        },
      ]);
    if (child.parentId !== null) {
      if (!replaceParent)
        throw new SimHttpError(422, "Validation Failed", [
          {
            resource: "Issue",
            code: "custom",
            field: "sub_issue_id",
            message: "Issue may not contain duplicate sub-issues or already have a parent",
          },
        ]);
      const old = this.issuesById.get(child.parentId);
      if (old) this.removeSubIssue(old, child, sender);
    }
    for (
      let p: SimIssue | undefined = parent;
      p;
      p = p.parentId === null ? undefined : this.issuesById.get(p.parentId)
    ) {
      if (p.id === child.id)
        throw new SimHttpError(422, "Adding this sub-issue would create a cycle");
    }
    child.parentId = parent.id;
    parent.subIssueIds.push(child.id);
    this.touch(parent);
    this.touch(child);
    this.emitSubIssue("added", parent, child, sender);
  }

  removeSubIssue(parent: SimIssue, child: SimIssue, sender: string): void {
    if (child.parentId !== parent.id) throw new SimHttpError(404, "Not Found");
    child.parentId = null;
    parent.subIssueIds = parent.subIssueIds.filter((id) => id !== child.id);
    this.touch(parent);
    this.touch(child);
    this.emitSubIssue("removed", parent, child, sender);
  }

  /**
   * GitHub sends each side its own event: the parent's repository gets `sub_issue_*` naming the
   * sub-issue's repository, the sub-issue's repository gets `parent_issue_*` naming the parent's.
   */
  private emitSubIssue(
    kind: "added" | "removed",
    parent: SimIssue,
    child: SimIssue,
    sender: string,
  ) {
    const parentRepo = this.repoOf(parent);
    const childRepo = this.repoOf(child);
    const issues = () => ({
      sub_issue_id: child.id,
      sub_issue: child,
      parent_issue_id: parent.id,
      parent_issue: parent,
    });
    this.onEvent({
      event: "sub_issues",
      action: `sub_issue_${kind}`,
      repo: parentRepo,
      sender,
      body: () => ({ ...issues(), sub_issue_repo: childRepo }),
    });
    this.onEvent({
      event: "sub_issues",
      action: `parent_issue_${kind}`,
      repo: childRepo,
      sender,
      body: () => ({ ...issues(), parent_issue_repo: parentRepo }),
    });
  }

  addBlockedBy(blocked: SimIssue, blocking: SimIssue, sender: string): void {
    if (blocked.id === blocking.id) throw new SimHttpError(422, "An issue cannot block itself");
    if (blocked.blockedBy.some((b) => b.issueId === blocking.id))
      throw new SimHttpError(422, "Validation Failed", [
        {
          resource: "IssueDependency",
          code: "already_exists",
          field: "issue_id",
          message: "Dependency already exists",
        },
      ]);
    blocked.blockedBy.push({ issueId: blocking.id, addedAt: this.now() });
    blocking.blockingIds.push(blocked.id);
    this.touch(blocked);
    this.touch(blocking);
    this.emitDependency("added", blocked, blocking, sender);
  }

  removeBlockedBy(blocked: SimIssue, blocking: SimIssue, sender: string): void {
    if (!blocked.blockedBy.some((b) => b.issueId === blocking.id))
      throw new SimHttpError(404, "Not Found");
    blocked.blockedBy = blocked.blockedBy.filter((b) => b.issueId !== blocking.id);
    blocking.blockingIds = blocking.blockingIds.filter((id) => id !== blocked.id);
    this.touch(blocked);
    this.touch(blocking);
    this.emitDependency("removed", blocked, blocking, sender);
  }

  private emitDependency(
    kind: "added" | "removed",
    blocked: SimIssue,
    blocking: SimIssue,
    sender: string,
  ) {
    const blockedRepo = this.repoOf(blocked);
    const blockingRepo = this.repoOf(blocking);
    const issues = () => ({
      blocked_issue_id: blocked.id,
      blocked_issue: blocked,
      blocking_issue_id: blocking.id,
      blocking_issue: blocking,
    });
    // As on GitHub: each side's event names the other side's repository.
    this.onEvent({
      event: "issue_dependencies",
      action: `blocked_by_${kind}`,
      repo: blockedRepo,
      sender,
      body: () => ({ ...issues(), blocking_issue_repo: blockingRepo }),
    });
    this.onEvent({
      event: "issue_dependencies",
      action: `blocking_${kind}`,
      repo: blockingRepo,
      sender,
      body: () => ({ ...issues(), blocked_issue_repo: blockedRepo }),
    });
  }

  // --- files on the default branch ---------------------------------------------------------

  /**
   * Moves the default branch to `commit`, which sets `files` and deletes `commit.removed`, and
   * announces the push. Ids are computed by the caller (WebCrypto is asynchronous; see
   * contents.ts), which checks that `before` is still the head.
   */
  pushCommit(
    repo: SimRepo,
    before: string,
    commit: SimCommit,
    files: SimFile[],
    sender: string,
    forced = false,
  ): void {
    if (repo.head !== null && repo.head !== before)
      throw new Error(`push to ${fullName(repo)} raced: head moved from ${before}`);
    for (const file of files) repo.files.set(file.path, file);
    for (const path of commit.removed) repo.files.delete(path);
    repo.head = commit.id;
    repo.commits.set(commit.id, commit);
    repo.pushedAt = commit.timestamp;
    this.onEvent({
      event: "push",
      action: "",
      repo,
      sender,
      body: () => ({
        ref: `refs/heads/${DEFAULT_BRANCH}`,
        before,
        after: commit.id,
        created: false,
        deleted: false,
        forced,
        base_ref: null,
        compare: { before, after: commit.id },
        commits: [commit],
        head_commit: commit,
        pusher: sender,
      }),
    });
  }

  // --- installations -------------------------------------------------------------------------

  install(
    account: string,
    repositories: string[] | "all",
    sender: string,
    id?: number,
  ): SimInstallation {
    const inst: SimInstallation = {
      id: id ?? this.newId(),
      account,
      accountId: accountId(account),
      repositoryIds: null,
      createdAt: this.now(),
      suspendedAt: null,
      permissions: { ...DEFAULT_INSTALLATION_PERMISSIONS },
    };
    if (repositories !== "all") {
      inst.repositoryIds = repositories.map((name) => this.createRepo(account, name).id);
    }
    this.installations.set(inst.id, inst);
    this.onEvent({
      event: "installation",
      action: "created",
      repo: null,
      installation: inst,
      sender,
      body: () => ({ installation: inst, repositories: this.installationRepos(inst) }),
    });
    return inst;
  }

  /** The installation on `account` (GitHub has at most one per account and App). */
  installationOnAccount(account: string): SimInstallation | undefined {
    for (const inst of this.installations.values())
      if (inst.account.toLowerCase() === account.toLowerCase()) return inst;
    return undefined;
  }

  requireInstallation(id: number): SimInstallation {
    const inst = this.installations.get(id);
    if (!inst) throw new SimHttpError(404, "Not Found");
    return inst;
  }

  changeInstallationRepos(
    inst: SimInstallation,
    add: string[],
    remove: string[],
    sender: string,
  ): void {
    if (inst.repositoryIds === null) {
      throw new SimHttpError(422, "installation covers all repositories of its account");
    }
    const added = add
      .map((name) => this.createRepo(inst.account, name))
      .filter((r) => !inst.repositoryIds!.includes(r.id));
    const removed = remove
      .map((name) => this.requireRepo(inst.account, name))
      .filter((r) => inst.repositoryIds!.includes(r.id));
    inst.repositoryIds.push(...added.map((r) => r.id));
    inst.repositoryIds = inst.repositoryIds.filter((id) => !removed.some((r) => r.id === id));
    if (added.length === 0 && removed.length === 0) return;
    this.onEvent({
      event: "installation_repositories",
      action: added.length > 0 ? "added" : "removed",
      repo: null,
      installation: inst,
      sender,
      body: () => ({
        installation: inst,
        repository_selection: "selected",
        repositories_added: added,
        repositories_removed: removed,
      }),
    });
  }

  uninstall(inst: SimInstallation, sender: string): void {
    const repos = this.installationRepos(inst);
    this.onEvent({
      event: "installation",
      action: "deleted",
      repo: null,
      installation: inst,
      sender,
      body: () => ({ installation: inst, repositories: repos }),
    });
    this.installations.delete(inst.id);
  }

  setSuspended(inst: SimInstallation, suspended: boolean, sender: string): void {
    inst.suspendedAt = suspended ? this.now() : null;
    this.onEvent({
      event: "installation",
      action: suspended ? "suspend" : "unsuspend",
      repo: null,
      installation: inst,
      sender,
      body: () => ({ installation: inst, repositories: this.installationRepos(inst) }),
    });
  }
}

export { fullName };
