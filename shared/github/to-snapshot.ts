// GraphQL issue nodes → the snapshot format of spec 3.1. Pure.
import { compareRefs, type IssueRef, repoKey } from "../graph/refs.ts";
import type { ExternalIssue, LabelEvent, SnapshotIssue } from "../graph/snapshot.ts";
import type { GqlActor, GqlCommentWindow } from "./reply-windows.ts";

export interface GqlPageInfo {
  hasNextPage: boolean;
  endCursor: string | null;
}

export interface GqlRelated {
  number: number;
  state: "OPEN" | "CLOSED";
  closedAt: string | null;
  repository: { nameWithOwner: string };
}

export interface GqlConnection<T> {
  totalCount?: number;
  pageInfo: GqlPageInfo;
  nodes: (T | null)[];
}

export interface GqlIssue {
  id: string;
  databaseId: number | null;
  number: number;
  title: string;
  state: "OPEN" | "CLOSED";
  stateReason: "COMPLETED" | "NOT_PLANNED" | "REOPENED" | "DUPLICATE" | null;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  body?: string;
  /** With `withComments` (reply-windows.ts): the opening's page and author, the newest comments. */
  url?: string;
  author?: GqlActor | null;
  authorAssociation?: string;
  comments?: GqlCommentWindow;
  labels: GqlConnection<{ name: string }> | null;
  parent: { number: number; repository: { nameWithOwner: string } } | null;
  subIssues: GqlConnection<GqlRelated>;
  blockedBy: GqlConnection<GqlRelated>;
}

export interface GqlLabelEvent {
  __typename: "LabeledEvent" | "UnlabeledEvent";
  createdAt: string;
  actor: { login: string } | null;
  label: { name: string };
}

/** `n` for the snapshot's own repository, `owner/name#n` for any other. */
export function refTo(repo: string, other: string, number: number): IssueRef {
  return repoKey(other) === repoKey(repo) ? number : `${other}#${number}`;
}

const REASONS = {
  COMPLETED: "completed",
  NOT_PLANNED: "not_planned",
  REOPENED: "reopened",
  DUPLICATE: "duplicate",
} as const;

export interface IssueEdges {
  labels: string[];
  subIssues: GqlRelated[];
  blockedBy: GqlRelated[];
}

/**
 * Builds one snapshot issue; cross-repository blockers are recorded in `external` with their
 * state so the scan can tell whether they still block.
 */
export function toSnapshotIssue(
  repo: string,
  node: GqlIssue,
  edges: IssueEdges,
  external: Map<string, ExternalIssue>,
  opts: { withBody: boolean; labelEvents?: LabelEvent[] },
): SnapshotIssue {
  const blockedBy = edges.blockedBy
    .map((b) => {
      const ref = refTo(repo, b.repository.nameWithOwner, b.number);
      if (typeof ref === "string") {
        external.set(ref.toLowerCase(), {
          ref,
          state: b.state === "OPEN" ? "open" : "closed",
          closedAt: b.closedAt,
        });
      }
      return ref;
    })
    .sort(compareRefs);
  const issue: SnapshotIssue = {
    number: node.number,
    title: node.title,
    state: node.state === "OPEN" ? "open" : "closed",
    stateReason: node.stateReason === null ? null : REASONS[node.stateReason],
    createdAt: node.createdAt,
    updatedAt: node.updatedAt,
    closedAt: node.closedAt,
    labels: [...edges.labels].sort(),
    blockedBy: [...new Set(blockedBy)],
  };
  if (node.parent) {
    issue.parent = refTo(repo, node.parent.repository.nameWithOwner, node.parent.number);
  }
  if (opts.withBody) issue.body = node.body ?? "";
  if (opts.labelEvents) issue.labelEvents = opts.labelEvents;
  return issue;
}

export function toLabelEvents(nodes: (GqlLabelEvent | null)[]): LabelEvent[] {
  return nodes
    .filter((n): n is GqlLabelEvent => n !== null && n.label !== undefined)
    .map((n) => ({
      label: n.label.name,
      action: n.__typename === "LabeledEvent" ? ("labeled" as const) : ("unlabeled" as const),
      actor: n.actor?.login ?? null,
      createdAt: n.createdAt,
    }));
}
