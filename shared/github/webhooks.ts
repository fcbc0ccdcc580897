// Webhook payload schemas for the events switchyard handles (spec 6.1): the single source of
// truth for the Worker's ingress validation. Each schema names only the fields switchyard
// reads; everything else GitHub sends passes through untouched. `parseWebhook` decides
// handled / ignored / invalid for an `X-GitHub-Event` and its parsed JSON body.
import { z } from "zod";
import { firstIssue } from "../validation.ts";

const id = z.number().int().nonnegative();
const instant = z.iso.datetime({ offset: true, message: "expected an ISO-8601 timestamp" });

export const WebhookUserSchema = z.object({
  login: z.string().min(1),
  id,
  type: z.string().optional(),
});

export const WebhookRepositorySchema = z.object({
  id,
  node_id: z.string().optional(),
  name: z.string().min(1),
  full_name: z.string().regex(/^[^/]+\/[^/]+$/, "expected owner/name"),
  owner: z.object({ login: z.string().min(1), id }).optional(),
  default_branch: z.string().optional(),
});

/** The short repository objects of installation events. */
export const WebhookRepositoryRefSchema = z.object({
  id,
  node_id: z.string().optional(),
  name: z.string().min(1),
  full_name: z.string().regex(/^[^/]+\/[^/]+$/, "expected owner/name"),
});

export const WebhookInstallationRefSchema = z.object({ id });

export const WebhookLabelSchema = z.object({
  id,
  name: z.string().min(1),
  color: z.string().optional(),
  description: z.string().nullable().optional(),
});

export const WebhookIssueSchema = z.object({
  id,
  node_id: z.string().min(1),
  number: z.number().int().positive(),
  title: z.string(),
  state: z.enum(["open", "closed"]),
  state_reason: z.enum(["completed", "not_planned", "reopened", "duplicate"]).nullable().optional(),
  body: z.string().nullable().optional(),
  labels: z.array(WebhookLabelSchema).optional(),
  user: WebhookUserSchema.nullable(),
  created_at: instant,
  updated_at: instant,
  closed_at: instant.nullable(),
  /** The body author's relation to the repository (who may wake agents, `queue.replyAuthors`). */
  author_association: z.string().optional(),
  /** How many comments the issue has. */
  comments: z.number().int().nonnegative().optional(),
  html_url: z.string().optional(),
  /** Present when the "issue" is a pull request (issue_comment fires for both). */
  pull_request: z.object({}).loose().optional(),
});

export const WebhookCommentSchema = z.object({
  id,
  node_id: z.string().min(1),
  body: z.string(),
  user: WebhookUserSchema.nullable(),
  /** OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ...: who may write IDD markers (spec 5). */
  author_association: z.string().optional(),
  created_at: instant,
  updated_at: instant,
  html_url: z.string().optional(),
});

const base = {
  sender: WebhookUserSchema,
  installation: WebhookInstallationRefSchema.optional(),
};
const repoEvent = { ...base, repository: WebhookRepositorySchema };

const issuesBase = { ...repoEvent, issue: WebhookIssueSchema };
const issues = {
  opened: z.object({ action: z.literal("opened"), ...issuesBase }),
  edited: z.object({
    action: z.literal("edited"),
    ...issuesBase,
    changes: z.object({}).loose().optional(),
  }),
  closed: z.object({ action: z.literal("closed"), ...issuesBase }),
  reopened: z.object({ action: z.literal("reopened"), ...issuesBase }),
  deleted: z.object({ action: z.literal("deleted"), ...issuesBase }),
  transferred: z.object({
    action: z.literal("transferred"),
    ...issuesBase,
    changes: z.object({ new_issue: WebhookIssueSchema, new_repository: WebhookRepositorySchema }),
  }),
  labeled: z.object({
    action: z.literal("labeled"),
    ...issuesBase,
    label: WebhookLabelSchema.optional(),
  }),
  unlabeled: z.object({
    action: z.literal("unlabeled"),
    ...issuesBase,
    label: WebhookLabelSchema.optional(),
  }),
};

const commentBase = { ...repoEvent, issue: WebhookIssueSchema, comment: WebhookCommentSchema };
const issueComment = {
  created: z.object({ action: z.literal("created"), ...commentBase }),
  edited: z.object({
    action: z.literal("edited"),
    ...commentBase,
    changes: z.object({}).loose().optional(),
  }),
  deleted: z.object({ action: z.literal("deleted"), ...commentBase }),
};

// Each side names only the other side's repository (`sub_issue_*` carries `sub_issue_repo`,
// `parent_issue_*` carries `parent_issue_repo`); the receiving side is `repository`.
const subIssuesBase = {
  ...repoEvent,
  sub_issue_id: id,
  sub_issue: WebhookIssueSchema,
  sub_issue_repo: WebhookRepositorySchema.optional(),
  parent_issue_id: id,
  parent_issue: WebhookIssueSchema,
  parent_issue_repo: WebhookRepositorySchema.optional(),
};
const subIssuesPayload = <A extends string>(a: A) =>
  z.object({ action: z.literal(a), ...subIssuesBase });
const subIssues = {
  sub_issue_added: subIssuesPayload("sub_issue_added"),
  sub_issue_removed: subIssuesPayload("sub_issue_removed"),
  parent_issue_added: subIssuesPayload("parent_issue_added"),
  parent_issue_removed: subIssuesPayload("parent_issue_removed"),
};

// `blocked_by_*` carries `blocking_issue_repo`, `blocking_*` carries `blocked_issue_repo`.
const dependencyBase = {
  ...repoEvent,
  blocked_issue_id: id,
  blocked_issue: WebhookIssueSchema,
  blocked_issue_repo: WebhookRepositorySchema.optional(),
  blocking_issue_id: id,
  blocking_issue: WebhookIssueSchema,
  blocking_issue_repo: WebhookRepositorySchema.optional(),
};
const dependencyPayload = <A extends string>(a: A) =>
  z.object({ action: z.literal(a), ...dependencyBase });
const issueDependencies = {
  blocked_by_added: dependencyPayload("blocked_by_added"),
  blocked_by_removed: dependencyPayload("blocked_by_removed"),
  blocking_added: dependencyPayload("blocking_added"),
  blocking_removed: dependencyPayload("blocking_removed"),
};

const label = {
  edited: z.object({
    action: z.literal("edited"),
    ...repoEvent,
    label: WebhookLabelSchema,
    changes: z
      .object({ name: z.object({ from: z.string() }).optional() })
      .loose()
      .optional(),
  }),
  deleted: z.object({ action: z.literal("deleted"), ...repoEvent, label: WebhookLabelSchema }),
};

// `repository` events: switchyard reads the repository again by id when one arrives (the payload
// is a hint, not the truth: GitHub does not sign the event name), so only the shape is checked.
const repositoryPayload = <A extends string>(a: A, changes?: z.ZodType) =>
  z.object({
    action: z.literal(a),
    ...repoEvent,
    repository: WebhookRepositorySchema.extend({
      archived: z.boolean().optional(),
      private: z.boolean().optional(),
    }),
    ...(changes ? { changes } : {}),
  });
const repository = {
  renamed: repositoryPayload(
    "renamed",
    z.object({ repository: z.object({ name: z.object({ from: z.string() }) }) }),
  ),
  transferred: repositoryPayload("transferred", z.object({ owner: z.object({}).loose() })),
  deleted: repositoryPayload("deleted"),
  archived: repositoryPayload("archived"),
  unarchived: repositoryPayload("unarchived"),
  privatized: repositoryPayload("privatized"),
  publicized: repositoryPayload("publicized"),
};

const installationObject = z.object({
  id,
  account: z.object({ login: z.string().min(1), id }).nullable(),
  repository_selection: z.enum(["all", "selected"]),
  suspended_at: z.string().nullable().optional(),
});
const installationBase = {
  sender: WebhookUserSchema,
  installation: installationObject,
  repositories: z.array(WebhookRepositoryRefSchema).optional(),
};
const installationPayload = <A extends string>(a: A) =>
  z.object({ action: z.literal(a), ...installationBase });
const installation = {
  created: installationPayload("created"),
  deleted: installationPayload("deleted"),
  suspend: installationPayload("suspend"),
  unsuspend: installationPayload("unsuspend"),
  new_permissions_accepted: installationPayload("new_permissions_accepted"),
};

const installationRepositoriesBase = {
  sender: WebhookUserSchema,
  installation: installationObject,
  repository_selection: z.enum(["all", "selected"]),
  repositories_added: z.array(WebhookRepositoryRefSchema),
  repositories_removed: z.array(WebhookRepositoryRefSchema),
};
const installationRepositories = {
  added: z.object({ action: z.literal("added"), ...installationRepositoriesBase }),
  removed: z.object({ action: z.literal("removed"), ...installationRepositoriesBase }),
};

const commit = z.object({
  id: z.string(),
  added: z.array(z.string()).optional(),
  modified: z.array(z.string()).optional(),
  removed: z.array(z.string()).optional(),
});
export const PushPayloadSchema = z.object({
  ref: z.string().min(1),
  /** The branch's head before and after the push (the breaker follows the default branch's). */
  before: z.string().optional(),
  after: z.string().min(1),
  repository: WebhookRepositorySchema.extend({
    default_branch: z.string().min(1),
    /** When the push happened: Unix seconds in push payloads. */
    pushed_at: z.union([z.number(), z.string()]).nullable().optional(),
  }),
  commits: z.array(commit),
  head_commit: commit.nullable().optional(),
  sender: WebhookUserSchema.optional(),
  installation: WebhookInstallationRefSchema.optional(),
});

// CI on the default branch (the circuit breaker, spec 6.4): what a check's report carries.
const checkStatus = z.string().min(1);
const checkRunBase = {
  ...repoEvent,
  check_run: z.object({
    id,
    name: z.string(),
    head_sha: z.string().min(1),
    status: checkStatus,
    conclusion: z.string().nullable().optional(),
    html_url: z.string().nullable().optional(),
    details_url: z.string().nullable().optional(),
    app: z.object({ id }).nullable().optional(),
    check_suite: z.object({ id, head_branch: z.string().nullable().optional() }).loose(),
  }),
};
const checkRun = {
  created: z.object({ action: z.literal("created"), ...checkRunBase }),
  completed: z.object({ action: z.literal("completed"), ...checkRunBase }),
};

const checkSuite = {
  completed: z.object({
    action: z.literal("completed"),
    ...repoEvent,
    check_suite: z.object({
      id,
      head_branch: z.string().nullable().optional(),
      head_sha: z.string().min(1),
      status: z.string().nullable().optional(),
      conclusion: z.string().nullable().optional(),
      latest_check_runs_count: z.number().int().nonnegative().optional(),
      app: z.object({ id }).nullable().optional(),
    }),
  }),
};

/** A commit status: the payload is the status itself (no `action`). */
export const StatusPayloadSchema = z.object({
  ...repoEvent,
  id,
  sha: z.string().min(1),
  context: z.string(),
  state: z.enum(["error", "failure", "pending", "success"]),
  target_url: z.string().nullable().optional(),
  branches: z.array(z.object({ name: z.string() }).loose()),
});

const workflowRunBase = {
  ...repoEvent,
  workflow_run: z.object({
    id,
    name: z.string().nullable().optional(),
    workflow_id: id,
    head_branch: z.string().nullable().optional(),
    head_sha: z.string().min(1),
    status: z.string().nullable().optional(),
    conclusion: z.string().nullable().optional(),
    html_url: z.string().optional(),
    run_attempt: z.number().int().positive().optional(),
  }),
};
const workflowRun = {
  requested: z.object({ action: z.literal("requested"), ...workflowRunBase }),
  in_progress: z.object({ action: z.literal("in_progress"), ...workflowRunBase }),
  completed: z.object({ action: z.literal("completed"), ...workflowRunBase }),
};

/** A single-select option as `changes.field_value.from`/`to` carry it. */
const projectOption = z.object({ id: z.string().optional(), name: z.string() }).loose();
const projectItemBase = {
  sender: WebhookUserSchema,
  installation: WebhookInstallationRefSchema.optional(),
  projects_v2_item: z.object({
    id,
    node_id: z.string().min(1),
    project_node_id: z.string().min(1),
    content_node_id: z.string().min(1).nullable(),
    content_type: z.string(),
    updated_at: instant,
  }),
};
const projectsV2Item = {
  created: z.object({ action: z.literal("created"), ...projectItemBase }),
  edited: z.object({
    action: z.literal("edited"),
    ...projectItemBase,
    changes: z
      .object({
        field_value: z
          .object({
            field_name: z.string().optional(),
            field_node_id: z.string().optional(),
            from: projectOption.nullable().optional(),
            to: projectOption.nullable().optional(),
          })
          .loose()
          .optional(),
      })
      .loose()
      .optional(),
  }),
  deleted: z.object({ action: z.literal("deleted"), ...projectItemBase }),
};

/**
 * Top-level keys that say which event a payload is (GitHub's webhook payloads, from
 * `@octokit/webhooks-examples` and the schemas above). GitHub signs the body but not
 * `X-GitHub-Event`, so a signed body of one event can be replayed under another's name: a
 * payload carrying a key of this list that its own event and action do not have is refused.
 * The envelope every event may carry (`action`, `sender`, `repository`, `organization`,
 * `installation`, `enterprise`, `changes`, `requester`) is not on it.
 */
export const EVENT_IDENTIFYING_KEYS: ReadonlySet<string> = new Set([
  // issues, issue_comment, label, sub_issues, issue_dependencies
  "issue",
  "comment",
  "label",
  "assignee",
  "assignees",
  "milestone",
  "type",
  "sub_issue",
  "sub_issue_id",
  "sub_issue_repo",
  "parent_issue",
  "parent_issue_id",
  "parent_issue_repo",
  "blocked_issue",
  "blocked_issue_id",
  "blocked_issue_repo",
  "blocking_issue",
  "blocking_issue_id",
  "blocking_issue_repo",
  // installation, installation_repositories
  "repositories",
  "repositories_added",
  "repositories_removed",
  "repository_selection",
  // push, create, delete
  "ref",
  "ref_type",
  "before",
  "after",
  "created",
  "deleted",
  "forced",
  "base_ref",
  "compare",
  "commits",
  "head_commit",
  "pusher",
  "pusher_type",
  "master_branch",
  // pull requests, reviews, checks, workflows, deployments, statuses
  "pull_request",
  "review",
  "thread",
  "number",
  "requested_reviewer",
  "requested_team",
  "reviewers",
  "check_run",
  "check_suite",
  "requested_action",
  "workflow",
  "workflow_run",
  "workflow_job",
  "inputs",
  "deployment",
  "deployment_status",
  "merge_group",
  "sha",
  "state",
  "status",
  "commit",
  "branches",
  "branch",
  "context",
  "target_url",
  "build",
  "client_payload",
  // everything else GitHub sends
  "alert",
  "answer",
  "old_answer",
  "discussion",
  "forkee",
  "hook",
  "hook_id",
  "zen",
  "key",
  "member",
  "membership",
  "invitation",
  "team",
  "blocked_user",
  "pages",
  "release",
  "package",
  "registry_package",
  "project",
  "project_card",
  "project_column",
  "projects_v2",
  "projects_v2_item",
  "projects_v2_status_update",
  "rule",
  "repository_ruleset",
  "repository_advisory",
  "security_advisory",
  "personal_access_token_request",
  "definition",
  "new_property_values",
  "old_property_values",
  "sponsorship",
  "marketplace_purchase",
  "previous_marketplace_purchase",
  "effective_date",
  "starred_at",
  "scope",
  "since",
  "requestor",
  "id",
  "name",
  "description",
  "avatar_url",
  "user",
  "created_at",
  "updated_at",
]);

/** Identifying keys an event carries beyond the fields its schema reads. */
const OWN_UNREAD_KEYS: Partial<Record<string, readonly string[]>> = {
  push: ["before", "created", "deleted", "forced", "base_ref", "compare", "pusher"],
  status: ["name", "description", "avatar_url", "commit", "created_at", "updated_at"],
  workflow_run: ["workflow"],
};

/** The first key of `body` that identifies an event other than `event` (with its schema). */
function foreignKey(event: string, schema: z.ZodType, body: unknown): string | null {
  if (!body || typeof body !== "object" || Array.isArray(body)) return null;
  const own = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  const allowed = new Set([...own, ...(OWN_UNREAD_KEYS[event] ?? [])]);
  return (
    Object.keys(body).find((key) => EVENT_IDENTIFYING_KEYS.has(key) && !allowed.has(key)) ?? null
  );
}

/** Handled events and actions → payload schema. `push` has no action (key `""`). */
export const WEBHOOK_SCHEMAS = {
  installation,
  installation_repositories: installationRepositories,
  issues,
  issue_comment: issueComment,
  sub_issues: subIssues,
  issue_dependencies: issueDependencies,
  label,
  repository,
  push: { "": PushPayloadSchema },
  check_run: checkRun,
  check_suite: checkSuite,
  status: { "": StatusPayloadSchema },
  workflow_run: workflowRun,
  projects_v2_item: projectsV2Item,
} as const satisfies Record<string, Record<string, z.ZodType>>;

export type HandledEvent = keyof typeof WEBHOOK_SCHEMAS;

/** The parsed payload type of one handled event and action, e.g. `WebhookPayload<"issues", "closed">`. */
export type WebhookPayload<
  E extends HandledEvent,
  A extends keyof (typeof WEBHOOK_SCHEMAS)[E],
> = (typeof WEBHOOK_SCHEMAS)[E][A] extends z.ZodType
  ? z.infer<(typeof WEBHOOK_SCHEMAS)[E][A]>
  : never;

export type ParsedWebhook =
  | { kind: "handled"; event: HandledEvent; action: string; payload: Record<string, unknown> }
  | { kind: "ignored"; event: string; action: string | null; reason: string }
  | { kind: "invalid"; event: string; action: string | null; path: string; message: string };

export const CONFIG_PATH = ".github/switchyard.yml";

/** Whether a push to the default branch touched switchyard's configuration file. */
export function pushTouchesConfig(payload: z.infer<typeof PushPayloadSchema>): boolean {
  const commits = [...payload.commits, ...(payload.head_commit ? [payload.head_commit] : [])];
  return commits.some((c) =>
    [...(c.added ?? []), ...(c.modified ?? []), ...(c.removed ?? [])].includes(CONFIG_PATH),
  );
}

/**
 * Classifies a verified webhook. `body` is the parsed JSON. Handled events whose payload
 * fails its schema are `invalid`, naming the event, action and first bad path.
 */
export function parseWebhook(event: string, body: unknown): ParsedWebhook {
  const action =
    body && typeof body === "object" && typeof (body as { action?: unknown }).action === "string"
      ? (body as { action: string }).action
      : null;
  if (!Object.hasOwn(WEBHOOK_SCHEMAS, event)) {
    return { kind: "ignored", event, action, reason: `event ${event} is not handled` };
  }
  const byAction = WEBHOOK_SCHEMAS[event as HandledEvent] as Record<string, z.ZodType>;
  // `push` and `status` payloads carry no action.
  const key = event === "push" || event === "status" ? "" : action;
  if (key === null) {
    return { kind: "invalid", event, action, path: "action", message: "expected a string action" };
  }
  if (!Object.hasOwn(byAction, key)) {
    return { kind: "ignored", event, action, reason: `${event}.${key} is not handled` };
  }
  const schema = byAction[key]!;
  const foreign = foreignKey(event, schema, body);
  if (foreign !== null) {
    const message = "the key belongs to another event";
    return { kind: "invalid", event, action, path: foreign, message };
  }
  const result = schema.safeParse(body);
  if (!result.success) {
    const first = firstIssue(result.error);
    return { kind: "invalid", event, action, path: first.path, message: first.message };
  }
  const payload = result.data as Record<string, unknown>;
  if (event === "push") {
    const push = payload as z.infer<typeof PushPayloadSchema>;
    if (push.ref !== `refs/heads/${push.repository.default_branch}`) {
      return {
        kind: "ignored",
        event,
        action,
        reason: "push to a branch other than the default branch",
      };
    }
    // Every push to the default branch moves its head (the breaker's commit); one touching
    // CONFIG_PATH also changes the config (`pushTouchesConfig`).
  }
  return { kind: "handled", event: event as HandledEvent, action: key, payload };
}

/** A one-line description of an invalid result, for a 400 answer. */
export function describeInvalidWebhook(
  result: Extract<ParsedWebhook, { kind: "invalid" }>,
): string {
  const action = result.action === null ? "" : `.${result.action}`;
  return `invalid ${result.event}${action} payload at ${result.path}: ${result.message}`;
}
