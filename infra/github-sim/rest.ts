// The REST endpoints switchyard uses, shaped as GitHub's OpenAPI description says.
import type { ApiRequest, ApiResult, GitHubSimulator } from "./app.ts";
import type { SimIssue, SimRepo } from "./model.ts";
import {
  renderApp,
  renderAuthenticatedUser,
  renderCollaboratorPermission,
  renderComment,
  renderInstallation,
  renderIssue,
  renderLabel,
  renderLabelEvent,
  renderRepo,
  renderRepoPermissions,
} from "./render.ts";
import { SimHttpError, SimMoved } from "./state.ts";

/** What GitHub answers a write to an archived repository. */
export const ARCHIVED_MESSAGE = "Repository was archived so is read-only.";

/**
 * The addressed repository: a former name redirects (301/307), an unreadable one is 404, and
 * a write (any method but GET) to an archived one is 403.
 */
export function addressedRepo(sim: GitHubSimulator, req: ApiRequest): SimRepo {
  const repo = sim.state.requireRepoOrMoved(req.params.owner!, req.params.repo!);
  if (!sim.canRead(req.identity, repo)) throw new SimHttpError(404, "Not Found");
  // A public repository outside the token's installation: readable, not writable.
  if (req.method !== "GET" && !sim.canWrite(req.identity, repo))
    throw new SimHttpError(403, "Resource not accessible by integration");
  if (repo.archived && req.method !== "GET") throw new SimHttpError(403, ARCHIVED_MESSAGE);
  return repo;
}

/** GitHub's page-based pagination with a `Link` header. */
export function paginate<T>(
  req: ApiRequest,
  items: T[],
): { page: T[]; headers: Record<string, string> } {
  const perPage = Math.min(100, Math.max(1, Number(req.query.get("per_page") ?? 30) || 30));
  const page = Math.max(1, Number(req.query.get("page") ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const url = new URL(req.c.req.url);
  const link = (p: number, rel: string) => {
    const u = new URL(url);
    u.searchParams.set("page", String(p));
    return `<${u.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(page - 1, "prev"), link(1, "first"));
  if (page < last) links.push(link(page + 1, "next"), link(last, "last"));
  return {
    page: items.slice((page - 1) * perPage, page * perPage),
    headers: links.length > 0 ? { link: links.join(", ") } : {},
  };
}

function requireBody(req: ApiRequest): Record<string, unknown> {
  const body = req.json();
  if (!body || typeof body !== "object" || Array.isArray(body))
    throw new SimHttpError(400, "Problems parsing JSON");
  return body as Record<string, unknown>;
}

function invalid(field: string, message: string): SimHttpError {
  return new SimHttpError(422, "Invalid request.", [
    { resource: "Issue", field, code: "invalid", message },
  ]);
}

export function registerRestRoutes(sim: GitHubSimulator): void {
  const { state } = sim;

  const repoFor = (req: ApiRequest): SimRepo => addressedRepo(sim, req);
  /**
   * The addressed issue: a transferred issue redirects on its own route
   * (`/issues/{issue_number}`) and is 404 on the routes under it; a deleted one is 410.
   */
  const issueFor = (req: ApiRequest): { repo: SimRepo; issue: SimIssue } => {
    const repo = repoFor(req);
    const number = Number(req.params.issue_number);
    if (!Number.isInteger(number) || number <= 0) throw new SimHttpError(404, "Not Found");
    try {
      return { repo, issue: state.requireIssue(repo, number) };
    } catch (error) {
      if (error instanceof SimMoved && !req.template.endsWith("/issues/{issue_number}"))
        throw new SimHttpError(404, "Not Found");
      throw error;
    }
  };
  const issueById = (req: ApiRequest, id: unknown, field: string): SimIssue => {
    if (typeof id !== "number" || !Number.isInteger(id))
      throw invalid(field, `${field} must be an integer issue id`);
    const issue = state.issuesById.get(id);
    if (!issue || !sim.canRead(req.identity, state.repoOf(issue)))
      throw new SimHttpError(404, "Not Found");
    return issue;
  };
  const ok = (body: unknown, status = 200, headers?: Record<string, string>): ApiResult => ({
    status,
    body,
    headers,
  });

  // --- Apps ----------------------------------------------------------------------------------
  sim.api("GET", "/app", "app", null, (req) => ok(renderApp(req.ctx, "2026-01-01T00:00:00Z")));
  sim.api("GET", "/app/installations", "app", null, (req) =>
    ok([...state.installations.values()].map((i) => renderInstallation(req.ctx, i))),
  );
  sim.api("GET", "/app/installations/{installation_id}", "app", null, (req) => {
    const id = Number(req.params.installation_id);
    const inst = Number.isSafeInteger(id) ? state.installations.get(id) : undefined;
    if (!inst) throw new SimHttpError(404, "Not Found");
    return ok(renderInstallation(req.ctx, inst));
  });
  sim.api("POST", "/app/installations/{installation_id}/access_tokens", "app", null, (req) => {
    const inst = state.requireInstallation(Number(req.params.installation_id));
    if (inst.suspendedAt) throw new SimHttpError(403, "This installation has been suspended");
    const { token, expiresAt } = sim.tokens.mint(inst.id, sim.now());
    return ok(
      {
        token,
        expires_at: expiresAt.toISOString().replace(/\.\d{3}Z$/, "Z"),
        permissions: renderInstallation(req.ctx, inst).permissions,
        repository_selection: inst.repositoryIds === null ? "all" : "selected",
      },
      201,
    );
  });
  sim.api("GET", "/repos/{owner}/{repo}/installation", "app", null, (req) => {
    const repo = state.requireRepoOrMoved(req.params.owner!, req.params.repo!);
    const inst = state.installationFor(repo);
    if (!inst) throw new SimHttpError(404, "Not Found");
    return ok(renderInstallation(req.ctx, inst));
  });
  sim.api("GET", "/installation/repositories", "token", "core", (req) => {
    if (req.identity.kind !== "installation")
      throw new SimHttpError(403, "This endpoint requires an installation token");
    const inst = state.requireInstallation(req.identity.installationId);
    const repos = state.installationRepos(inst);
    const { page, headers } = paginate(req, repos);
    return ok(
      {
        total_count: repos.length,
        repository_selection: inst.repositoryIds === null ? "all" : "selected",
        repositories: page.map((r) => renderRepo(req.base, r)),
      },
      200,
      headers,
    );
  });
  sim.api("GET", "/rate_limit", "token", null, (req) => {
    const key = sim.identityKey(req.identity);
    const bucket = (resource: "core" | "graphql") => {
      const h = sim.limits.headers(key, resource);
      return {
        limit: Number(h["x-ratelimit-limit"]),
        remaining: Number(h["x-ratelimit-remaining"]),
        reset: Number(h["x-ratelimit-reset"]),
        used: Number(h["x-ratelimit-used"]),
      };
    };
    return ok({
      resources: { core: bucket("core"), graphql: bucket("graphql"), search: bucket("core") },
      rate: bucket("core"),
    });
  });

  // --- users -------------------------------------------------------------------------------
  sim.api("GET", "/user", "token", "core", (req) => {
    if (req.identity.kind !== "user")
      throw new SimHttpError(403, "Resource not accessible by integration");
    const user = req.identity.registered ? state.user(req.identity.login) : undefined;
    return ok(
      renderAuthenticatedUser(
        req.base,
        req.identity.login,
        user?.createdAt ?? "2011-01-25T18:44:36Z",
      ),
    );
  });

  // --- repositories and issues --------------------------------------------------------------
  sim.api("GET", "/repos/{owner}/{repo}", "token", "core", (req) => {
    const repo = repoFor(req);
    // GitHub adds the caller's `permissions` for a user token; the simulator for registered users.
    const role =
      req.identity.kind === "user" && req.identity.registered
        ? state.roleOf(req.identity.login, repo)
        : undefined;
    const body = renderRepo(req.base, repo);
    return ok(role ? { ...body, permissions: renderRepoPermissions(role) } : body);
  });

  sim.api(
    "GET",
    "/repos/{owner}/{repo}/collaborators/{username}/permission",
    "token",
    "core",
    (req) => {
      const repo = repoFor(req);
      const login = req.params.username!;
      const known =
        state.user(login) !== undefined ||
        state.orgs.membership(repo.owner, login) !== undefined ||
        login.toLowerCase() === repo.owner.toLowerCase() ||
        login.endsWith("[bot]");
      if (!known) throw new SimHttpError(404, `${login} is not a user`);
      const role = state.roleOf(login, repo) ?? null;
      const canonical =
        state.user(login)?.login ??
        (login.toLowerCase() === repo.owner.toLowerCase() ? repo.owner : login);
      return ok(renderCollaboratorPermission(req.base, canonical, role));
    },
  );

  sim.api("GET", "/repos/{owner}/{repo}/issues", "token", "core", (req) => {
    const repo = repoFor(req);
    const stateFilter = req.query.get("state") ?? "open";
    if (!["open", "closed", "all"].includes(stateFilter))
      throw invalid("state", "state must be open, closed or all");
    const since = req.query.get("since");
    if (since !== null && Number.isNaN(Date.parse(since)))
      throw invalid("since", "since must be an ISO 8601 timestamp");
    const labels = req.query
      .get("labels")
      ?.split(",")
      .filter((l) => l !== "");
    const sort = req.query.get("sort") ?? "created";
    const direction = req.query.get("direction") ?? "desc";
    let issues = [...repo.issues.values()];
    if (stateFilter !== "all") issues = issues.filter((i) => i.state === stateFilter);
    if (since !== null) issues = issues.filter((i) => Date.parse(i.updatedAt) >= Date.parse(since));
    if (labels)
      issues = issues.filter((i) =>
        labels.every((l) => i.labels.some((x) => x.toLowerCase() === l.toLowerCase())),
      );
    const key = (i: SimIssue) =>
      sort === "updated"
        ? i.updatedAt
        : sort === "comments"
          ? String(i.comments.length).padStart(9, "0")
          : i.createdAt;
    issues.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.number - b.number));
    if (direction === "desc") issues.reverse();
    const { page, headers } = paginate(req, issues);
    return ok(
      page.map((i) => renderIssue(req.ctx, i)),
      200,
      headers,
    );
  });

  sim.api("POST", "/repos/{owner}/{repo}/issues", "token", "core", (req) => {
    const repo = repoFor(req);
    const body = requireBody(req);
    if (typeof body.title !== "string" || body.title === "")
      throw invalid("title", "title is required");
    const labels = Array.isArray(body.labels) ? body.labels.map(String) : [];
    const issue = state.createIssue(
      repo,
      { title: body.title, body: typeof body.body === "string" ? body.body : null, labels },
      req.sender,
    );
    return ok(renderIssue(req.ctx, issue), 201);
  });

  sim.api("GET", "/repos/{owner}/{repo}/issues/{issue_number}", "token", "core", (req) =>
    ok(renderIssue(req.ctx, issueFor(req).issue)),
  );

  sim.api("PATCH", "/repos/{owner}/{repo}/issues/{issue_number}", "token", "core", (req) => {
    const { issue } = issueFor(req);
    const body = requireBody(req);
    const reason = body.state_reason ?? null;
    if (
      reason !== null &&
      !["completed", "not_planned", "duplicate", "reopened"].includes(String(reason))
    )
      throw invalid(
        "state_reason",
        `state_reason ${String(reason)} is not one of completed, not_planned, duplicate, reopened`,
      );
    if (body.state !== undefined && body.state !== "open" && body.state !== "closed")
      throw invalid("state", "state must be open or closed");
    state.editIssue(
      issue,
      {
        title: typeof body.title === "string" ? body.title : undefined,
        body:
          typeof body.body === "string" || body.body === null
            ? (body.body as string | null)
            : undefined,
      },
      req.sender,
    );
    if (body.state === "closed") {
      const r =
        reason === null || reason === "reopened"
          ? "completed"
          : (reason as "completed" | "not_planned" | "duplicate");
      state.closeIssue(issue, r, req.sender);
    } else if (body.state === "open") {
      state.reopenIssue(issue, req.sender);
    }
    return ok(renderIssue(req.ctx, issue));
  });

  // --- comments and events -------------------------------------------------------------------
  sim.api("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", "token", "core", (req) => {
    const { issue } = issueFor(req);
    const { page, headers } = paginate(req, issue.comments);
    return ok(
      page.map((c) => renderComment(req.ctx, issue, c)),
      200,
      headers,
    );
  });
  sim.api(
    "POST",
    "/repos/{owner}/{repo}/issues/{issue_number}/comments",
    "token",
    "core",
    (req) => {
      const { issue } = issueFor(req);
      const body = requireBody(req);
      if (typeof body.body !== "string" || body.body === "")
        throw invalid("body", "body is required");
      return ok(renderComment(req.ctx, issue, state.addComment(issue, body.body, req.sender)), 201);
    },
  );
  sim.api("GET", "/repos/{owner}/{repo}/issues/{issue_number}/events", "token", "core", (req) => {
    const { issue } = issueFor(req);
    const { page, headers } = paginate(req, issue.labelEvents);
    return ok(
      page.map((e) => renderLabelEvent(req.ctx, issue, e)),
      200,
      headers,
    );
  });

  // --- labels --------------------------------------------------------------------------------
  sim.api("GET", "/repos/{owner}/{repo}/issues/{issue_number}/labels", "token", "core", (req) => {
    const { repo, issue } = issueFor(req);
    const labels = issue.labels
      .map((n) => repo.labels.get(n.toLowerCase())!)
      .map((l) => renderLabel(req.base, repo, l));
    const { page, headers } = paginate(req, labels);
    return ok(page, 200, headers);
  });
  sim.api("POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels", "token", "core", (req) => {
    const { repo, issue } = issueFor(req);
    const body = req.json();
    const names = Array.isArray(body)
      ? body
      : body && typeof body === "object" && Array.isArray((body as { labels?: unknown }).labels)
        ? (body as { labels: unknown[] }).labels
        : null;
    if (!names || names.length === 0 || !names.every((n) => typeof n === "string" && n !== ""))
      throw invalid("labels", "labels must be a non-empty array of label names");
    state.addLabels(issue, names as string[], req.sender);
    return ok(
      issue.labels.map((n) => renderLabel(req.base, repo, repo.labels.get(n.toLowerCase())!)),
    );
  });
  sim.api(
    "DELETE",
    "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
    "token",
    "core",
    (req) => {
      const { repo, issue } = issueFor(req);
      if (!state.removeLabel(issue, req.params.name!, req.sender)) {
        return ok(
          {
            message: "Label does not exist",
            documentation_url:
              "https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue",
          },
          404,
        );
      }
      return ok(
        issue.labels.map((n) => renderLabel(req.base, repo, repo.labels.get(n.toLowerCase())!)),
      );
    },
  );

  // --- sub-issues ----------------------------------------------------------------------------
  /** A paginated list of the issues related to the addressed one (sub-issues, blockers, …). */
  const listRelated = (template: string, idsOf: (issue: SimIssue) => number[]) =>
    sim.api("GET", template, "token", "core", (req) => {
      const { issue } = issueFor(req);
      const related = idsOf(issue)
        .map((id) => state.issuesById.get(id))
        .filter((i) => i !== undefined);
      const { page, headers } = paginate(req, related);
      return ok(
        page.map((i) => renderIssue(req.ctx, i)),
        200,
        headers,
      );
    });

  listRelated("/repos/{owner}/{repo}/issues/{issue_number}/sub_issues", (i) => i.subIssueIds);
  sim.api(
    "POST",
    "/repos/{owner}/{repo}/issues/{issue_number}/sub_issues",
    "token",
    "core",
    (req) => {
      const { issue } = issueFor(req);
      const body = requireBody(req);
      const child = issueById(req, body.sub_issue_id, "sub_issue_id");
      state.addSubIssue(issue, child, body.replace_parent === true, req.sender);
      return ok(renderIssue(req.ctx, issue), 201);
    },
  );
  sim.api(
    "DELETE",
    "/repos/{owner}/{repo}/issues/{issue_number}/sub_issue",
    "token",
    "core",
    (req) => {
      const { issue } = issueFor(req);
      const body = requireBody(req);
      const child = issueById(req, body.sub_issue_id, "sub_issue_id");
      state.removeSubIssue(issue, child, req.sender);
      return ok(renderIssue(req.ctx, issue));
    },
  );

  // --- dependencies --------------------------------------------------------------------------
  listRelated("/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by", (i) =>
    i.blockedBy.map((b) => b.issueId),
  );
  listRelated(
    "/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocking",
    (i) => i.blockingIds,
  );
  sim.api(
    "POST",
    "/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by",
    "token",
    "core",
    (req) => {
      const { issue } = issueFor(req);
      const body = requireBody(req);
      const blocker = issueById(req, body.issue_id, "issue_id");
      state.addBlockedBy(issue, blocker, req.sender);
      return ok(renderIssue(req.ctx, blocker), 201);
    },
  );
  sim.api(
    "DELETE",
    "/repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}",
    "token",
    "core",
    (req) => {
      const { issue } = issueFor(req);
      const blocker = issueById(req, Number(req.params.issue_id), "issue_id");
      state.removeBlockedBy(issue, blocker, req.sender);
      return ok(renderIssue(req.ctx, blocker));
    },
  );
}
