import type { z } from "zod";
import {
  type CiFact,
  type CiRouting,
  checkRunFact,
  checkSuiteFact,
  pushFact,
  statusFact,
  workflowRunFact,
} from "../breaker/facts.ts";
import {
  type ParsedWebhook,
  pushTouchesConfig,
  type WebhookIssueSchema,
  type WebhookPayload,
} from "../github/webhooks.ts";
import { canonicalRef, type IssueRef } from "../graph/refs.ts";
import { type ProjectItemNotice, projectItemNotice } from "../queue/project-item.ts";
import type { GraphEvent, IssueRecord } from "./events.ts";
import type { LifecycleChange, RepoRef } from "./lifecycle.ts";

type HandledWebhook = Extract<ParsedWebhook, { kind: "handled" }>;
type WebhookIssue = z.infer<typeof WebhookIssueSchema>;
type Repo = { id: number; full_name: string };

/** Where a verified, validated webhook goes and what it says there. */
export type RoutedWebhook =
  | {
      kind: "repository";
      repo: { id: number; fullName: string; installationId: number };
      events: GraphEvent[];
      /** A `repository` event's action: the repository is read again by id before anything changes. */
      repositoryAction?: RepositoryAction;
      /**
       * An issue said to be deleted or transferred away: recorded, and removed only once GitHub
       * confirms it (a replayed or relabelled delivery must not remove an issue that exists).
       */
      confirmIssueRemoved?: number;
    }
  | { kind: "installation"; installationId: number; change: LifecycleChange }
  /** CI of the default branch and its head (the circuit breaker), for the repository's object. */
  | {
      kind: "ci";
      repo: { id: number; fullName: string; installationId: number };
      fact: CiFact;
      defaultBranch: string | null;
    }
  /** A project item changed: for the installation's object, which resolves its issue later. */
  | { kind: "project-item"; installationId: number; notice: ProjectItemNotice }
  | { kind: "skip"; reason: string };

/** The `repository` actions switchyard handles (spec 6.1). */
export type RepositoryAction =
  | "renamed"
  | "transferred"
  | "deleted"
  | "archived"
  | "unarchived"
  | "privatized"
  | "publicized";

export function issueRecord(issue: WebhookIssue): IssueRecord {
  return {
    number: issue.number,
    id: issue.id,
    title: issue.title,
    state: issue.state,
    stateReason: issue.state_reason ?? null,
    createdAt: issue.created_at,
    updatedAt: issue.updated_at,
    closedAt: issue.closed_at,
    // No `labels` in the payload says nothing about them: the stored ones stay (not "none").
    labels: issue.labels?.map((l) => l.name),
    body: issue.body ?? null,
    ...(issue.user
      ? {
          author: {
            login: issue.user.login,
            type: issue.user.type ?? "User",
            association: issue.author_association ?? null,
          },
        }
      : {}),
    ...(issue.comments !== undefined ? { commentCount: issue.comments } : {}),
    ...(issue.html_url !== undefined ? { url: issue.html_url } : {}),
  };
}

/** The later of ISO instants: the time stamped on an event about several issues. */
function latest(...instants: string[]): string {
  return instants.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a));
}

const repoRef = (r: { id: number; full_name: string }): RepoRef => ({
  id: r.id,
  fullName: r.full_name,
});

/**
 * Translates a handled webhook (see `parseWebhook`) into the events its repository's Durable
 * Object stores, or the installation change it announces. Pure: `receivedAt` is the ingress time,
 * used where GitHub stamps nothing (deletions, config pushes).
 */
export function routeWebhook(webhook: HandledWebhook, receivedAt: string): RoutedWebhook {
  const { event, action } = webhook;
  const p = webhook.payload;

  if (event === "installation") {
    const payload = p as WebhookPayload<"installation", "created">;
    const installationId = payload.installation.id;
    switch (action) {
      case "created":
        return {
          kind: "installation",
          installationId,
          change: {
            kind: "created",
            account: payload.installation.account?.login ?? "unknown",
            repos: (payload.repositories ?? []).map(repoRef),
          },
        };
      case "deleted":
        return { kind: "installation", installationId, change: { kind: "deleted" } };
      case "suspend":
        return { kind: "installation", installationId, change: { kind: "suspended" } };
      case "unsuspend":
        return { kind: "installation", installationId, change: { kind: "unsuspended" } };
      default:
        return { kind: "skip", reason: `installation.${action} changes nothing switchyard keeps` };
    }
  }
  if (event === "installation_repositories") {
    const payload = p as WebhookPayload<"installation_repositories", "added">;
    const installationId = payload.installation.id;
    return action === "added"
      ? {
          kind: "installation",
          installationId,
          change: { kind: "repos-added", repos: payload.repositories_added.map(repoRef) },
        }
      : {
          kind: "installation",
          installationId,
          change: { kind: "repos-removed", repos: payload.repositories_removed.map(repoRef) },
        };
  }

  if (event === "projects_v2_item") {
    const installationId = (p as { installation?: { id: number } }).installation?.id;
    if (installationId === undefined) {
      return { kind: "skip", reason: "the delivery names no installation" };
    }
    const payload = p as WebhookPayload<"projects_v2_item", "edited">;
    const made = projectItemNotice(action, payload, Date.parse(receivedAt));
    return made.kind === "skip"
      ? made
      : { kind: "project-item", installationId, notice: made.notice };
  }

  const withRepo = p as { repository: Repo; installation?: { id: number } };
  const installationId = withRepo.installation?.id;
  if (installationId === undefined) {
    return {
      kind: "skip",
      reason: "the delivery names no installation (switchyard acts only as an App)",
    };
  }
  const repo = {
    id: withRepo.repository.id,
    fullName: withRepo.repository.full_name,
    installationId,
  };
  const own = repo.fullName;
  const routed = (events: GraphEvent[]): RoutedWebhook => ({ kind: "repository", repo, events });
  /** An issue of `inRepo` as seen from this repository: a number here, `owner/repo#n` elsewhere. */
  const ref = (issue: WebhookIssue, inRepo: Repo): IssueRef =>
    canonicalRef(`${inRepo.full_name}#${issue.number}`, own);
  const isOwn = (inRepo: Repo) => inRepo.full_name.toLowerCase() === own.toLowerCase();

  const ci = (made: CiRouting): RoutedWebhook =>
    made.kind === "skip"
      ? made
      : { kind: "ci", repo, fact: made.fact, defaultBranch: made.defaultBranch };

  switch (event) {
    case "check_run":
      return ci(checkRunFact(p as WebhookPayload<"check_run", "completed">));
    case "check_suite":
      return ci(checkSuiteFact(p as WebhookPayload<"check_suite", "completed">));
    case "status":
      return ci(statusFact(p as WebhookPayload<"status", "">));
    case "workflow_run":
      return ci(workflowRunFact(p as WebhookPayload<"workflow_run", "completed">));
    case "issues": {
      const payload = p as WebhookPayload<"issues", "labeled">;
      if (action === "deleted" || action === "transferred") {
        return { kind: "repository", repo, events: [], confirmIssueRemoved: payload.issue.number };
      }
      const events: GraphEvent[] = [
        {
          type: "issue",
          issue: issueRecord(payload.issue),
          ...(action === "closed" ? { closedBy: payload.sender.login } : {}),
        },
      ];
      if ((action === "labeled" || action === "unlabeled") && payload.label) {
        events.push({
          type: "label-event",
          number: payload.issue.number,
          label: payload.label.name,
          action,
          actor: payload.sender.login,
          at: payload.issue.updated_at,
        });
      }
      return routed(events);
    }
    case "issue_comment": {
      const payload = p as WebhookPayload<"issue_comment", "created">;
      if (payload.issue.pull_request) return { kind: "skip", reason: "comment on a pull request" };
      const { comment } = payload;
      if (action === "deleted") {
        return routed([
          // The issue as it is now: its comment count went down (the reply rules count them).
          { type: "issue", issue: issueRecord(payload.issue) },
          { type: "comment-removed", id: comment.id, at: latest(comment.updated_at, receivedAt) },
        ]);
      }
      return routed([
        { type: "issue", issue: issueRecord(payload.issue) },
        {
          type: "comment",
          id: comment.id,
          number: payload.issue.number,
          author: { login: comment.user?.login ?? "ghost", type: comment.user?.type ?? "User" },
          association: comment.author_association ?? null,
          body: comment.body,
          createdAt: comment.created_at,
          updatedAt: comment.updated_at,
          ...(comment.html_url !== undefined ? { url: comment.html_url } : {}),
        },
      ]);
    }
    case "sub_issues": {
      const payload = p as WebhookPayload<"sub_issues", "sub_issue_added">;
      // The receiving side is `repository`; the payload names only the other side's repository.
      const toParent = action === "sub_issue_added" || action === "sub_issue_removed";
      const parentRepo = toParent
        ? withRepo.repository
        : (payload.parent_issue_repo ?? withRepo.repository);
      const childRepo = toParent
        ? (payload.sub_issue_repo ?? withRepo.repository)
        : withRepo.repository;
      const at = latest(payload.sub_issue.updated_at, payload.parent_issue.updated_at);
      const events: GraphEvent[] = [];
      if (isOwn(parentRepo))
        events.push({ type: "issue", issue: issueRecord(payload.parent_issue) });
      if (isOwn(childRepo)) {
        events.push({ type: "issue", issue: issueRecord(payload.sub_issue) });
        const parent = ref(payload.parent_issue, parentRepo);
        events.push(
          action.endsWith("_added")
            ? { type: "parent", child: payload.sub_issue.number, parent, at }
            : {
                type: "parent",
                child: payload.sub_issue.number,
                parent: null,
                previous: parent,
                at,
              },
        );
      }
      return routed(events);
    }
    case "issue_dependencies": {
      const payload = p as WebhookPayload<"issue_dependencies", "blocked_by_added">;
      const toBlocked = action === "blocked_by_added" || action === "blocked_by_removed";
      const blockedRepo = toBlocked
        ? withRepo.repository
        : (payload.blocked_issue_repo ?? withRepo.repository);
      const blockingRepo = toBlocked
        ? (payload.blocking_issue_repo ?? withRepo.repository)
        : withRepo.repository;
      const at = latest(payload.blocked_issue.updated_at, payload.blocking_issue.updated_at);
      const events: GraphEvent[] = [];
      if (isOwn(blockingRepo))
        events.push({ type: "issue", issue: issueRecord(payload.blocking_issue) });
      if (isOwn(blockedRepo)) {
        events.push({ type: "issue", issue: issueRecord(payload.blocked_issue) });
        const blocker = ref(payload.blocking_issue, blockingRepo);
        events.push({
          type: "blocked-by",
          issue: payload.blocked_issue.number,
          blocker,
          present: action.endsWith("_added"),
          at,
        });
        if (typeof blocker === "string") {
          events.push({
            type: "external",
            ref: blocker,
            state: payload.blocking_issue.state,
            closedAt: payload.blocking_issue.closed_at,
            at: payload.blocking_issue.updated_at,
          });
        }
      }
      return routed(events);
    }
    case "label": {
      const payload = p as WebhookPayload<"label", "edited">;
      if (action === "deleted")
        return routed([{ type: "label-deleted", name: payload.label.name }]);
      const from = payload.changes?.name?.from;
      if (from === undefined || from === payload.label.name) {
        return { kind: "skip", reason: "label edit without a rename" };
      }
      return routed([{ type: "label-renamed", from, to: payload.label.name }]);
    }
    case "push": {
      const push = p as WebhookPayload<"push", "">;
      // A push touching the config changes it (and the `config` read re-reads CI too); any
      // other push to the default branch only moves its head, which the breaker follows.
      if (pushTouchesConfig(push)) return routed([{ type: "config-changed", at: receivedAt }]);
      return ci(pushFact(push, Date.parse(receivedAt)));
    }
    case "repository":
      // Name, owner, archived state, visibility and existence are read again from GitHub by id
      // (the `sync` schedule): a replayed or relabelled delivery cannot rename or wipe anything.
      return { kind: "repository", repo, events: [], repositoryAction: action as RepositoryAction };
    default:
      return { kind: "skip", reason: `${event}.${action} is not routed` };
  }
}
