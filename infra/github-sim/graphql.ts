// The GraphQL subset the client uses, executed with graphql-js. Every type and field here
// exists in GitHub's public schema with the same signature (checked by the contract tests),
// so a query this executor accepts is one GitHub accepts too.
import { buildSchema, GraphQLError, graphql } from "graphql";
import { type ConnectionArgs, connection } from "./graphql-connection.ts";
import type { SimIssue, SimRepo } from "./model.ts";
import {
  organizationRoot,
  PROJECTS_SDL,
  type ProjectAccess,
  projectNode,
} from "./projects-graphql.ts";
import { authorAssociation } from "./render.ts";
import type { SimState } from "./state.ts";

export const SIM_GRAPHQL_SDL = /* GraphQL */ `
scalar DateTime
scalar URI
scalar BigInt

interface Node { id: ID! }
interface Actor { login: String! }

type Query {
  node(id: ID!): Node
  nodes(ids: [ID!]!): [Node]!
  repository(owner: String!, name: String!, followRenames: Boolean = true): Repository
  organization(login: String!): Organization
}

type PageInfo {
  endCursor: String
  hasNextPage: Boolean!
  hasPreviousPage: Boolean!
  startCursor: String
}

enum IssueState { CLOSED OPEN }
enum IssueStateReason { COMPLETED DUPLICATE NOT_PLANNED REOPENED }
enum OrderDirection { ASC DESC }
enum IssueOrderField { COMMENTS CREATED_AT UPDATED_AT }
input IssueOrder { direction: OrderDirection! field: IssueOrderField! }
input IssueFilters {
  assignee: String
  createdBy: String
  labels: [String!]
  mentioned: String
  milestone: String
  milestoneNumber: String
  since: DateTime
  states: [IssueState!]
  viewerSubscribed: Boolean = false
}
enum LabelOrderField { CREATED_AT NAME }
input LabelOrder { direction: OrderDirection! field: LabelOrderField! }
enum IssueDependencyOrderField { CREATED_AT DEPENDENCY_ADDED_AT }
input IssueDependencyOrder { direction: OrderDirection! field: IssueDependencyOrderField! }
enum IssueTimelineItemsItemType { LABELED_EVENT UNLABELED_EVENT }

type Repository implements Node {
  id: ID!
  databaseId: Int
  isArchived: Boolean!
  isPrivate: Boolean!
  name: String!
  nameWithOwner: String!
  issue(number: Int!): Issue
  issues(
    after: String
    before: String
    filterBy: IssueFilters
    first: Int
    labels: [String!]
    last: Int
    orderBy: IssueOrder
    states: [IssueState!]
  ): IssueConnection!
}

type Issue implements Node {
  id: ID!
  databaseId: Int
  fullDatabaseId: BigInt
  number: Int!
  title: String!
  body: String!
  url: URI!
  state: IssueState!
  stateReason(enableDuplicate: Boolean = false): IssueStateReason
  createdAt: DateTime!
  updatedAt: DateTime!
  closedAt: DateTime
  repository: Repository!
  labels(after: String, before: String, first: Int, last: Int, orderBy: LabelOrder = {field: CREATED_AT, direction: ASC}): LabelConnection
  parent: Issue
  subIssues(after: String, before: String, first: Int, last: Int): IssueConnection!
  subIssuesSummary: SubIssuesSummary!
  blockedBy(after: String, before: String, first: Int, last: Int, orderBy: IssueDependencyOrder = {field: DEPENDENCY_ADDED_AT, direction: DESC}): IssueConnection!
  blocking(after: String, before: String, first: Int, last: Int, orderBy: IssueDependencyOrder = {field: DEPENDENCY_ADDED_AT, direction: DESC}): IssueConnection!
  issueDependenciesSummary: IssueDependenciesSummary!
  timelineItems(after: String, before: String, first: Int, itemTypes: [IssueTimelineItemsItemType!], last: Int, since: DateTime, skip: Int): IssueTimelineItemsConnection!
  author: Actor
  authorAssociation: CommentAuthorAssociation!
  comments(after: String, before: String, first: Int, last: Int): IssueCommentConnection!
}

enum CommentAuthorAssociation { COLLABORATOR CONTRIBUTOR FIRST_TIMER FIRST_TIME_CONTRIBUTOR MANNEQUIN MEMBER NONE OWNER }
type IssueComment implements Node {
  id: ID!
  databaseId: Int
  author: Actor
  authorAssociation: CommentAuthorAssociation!
  body: String!
  createdAt: DateTime!
  updatedAt: DateTime!
  url: URI!
}
type IssueCommentConnection { nodes: [IssueComment] pageInfo: PageInfo! totalCount: Int! }

type IssueConnection { nodes: [Issue] pageInfo: PageInfo! totalCount: Int! }
type Label implements Node { id: ID! name: String! color: String! }
type LabelConnection { nodes: [Label] pageInfo: PageInfo! totalCount: Int! }
type SubIssuesSummary { completed: Int! percentCompleted: Int! total: Int! }
type IssueDependenciesSummary { blockedBy: Int! blocking: Int! totalBlockedBy: Int! totalBlocking: Int! }

type User implements Actor & Node { id: ID! login: String! }
type Bot implements Actor & Node { id: ID! login: String! }
type LabeledEvent implements Node { id: ID! actor: Actor createdAt: DateTime! label: Label! }
type UnlabeledEvent implements Node { id: ID! actor: Actor createdAt: DateTime! label: Label! }
union IssueTimelineItems = LabeledEvent | UnlabeledEvent
type IssueTimelineItemsConnection { nodes: [IssueTimelineItems] pageInfo: PageInfo! totalCount: Int! filteredCount: Int! }
${PROJECTS_SDL}`;

const schema = buildSchema(SIM_GRAPHQL_SDL);

export interface GraphqlContext {
  state: SimState;
  base: string;
  canRead(repo: SimRepo): boolean;
  /** Whether the caller may read an organization's projects (projects-graphql.ts). */
  projectAccess(org: string): ProjectAccess;
}

const REASONS = {
  completed: "COMPLETED",
  not_planned: "NOT_PLANNED",
  reopened: "REOPENED",
  duplicate: "DUPLICATE",
} as const;

function actorView(login: string) {
  return { __typename: login.endsWith("[bot]") ? "Bot" : "User", id: `U_${login}`, login };
}

function issueView(ctx: GraphqlContext, issue: SimIssue): Record<string, unknown> {
  const state = ctx.state;
  const repo = state.repoOf(issue);
  const byIds = (ids: number[]) =>
    ids.map((id) => state.issuesById.get(id)).filter((i) => i !== undefined);
  const view = (i: SimIssue) => issueView(ctx, i);
  const depOrder = (
    edges: { issue: SimIssue; addedAt: string }[],
    args: { orderBy?: { field: string; direction: string } },
  ) => {
    const field = args.orderBy?.field ?? "DEPENDENCY_ADDED_AT";
    const dir = args.orderBy?.direction === "ASC" ? 1 : -1;
    return [...edges]
      .sort((a, b) => {
        const ka = field === "CREATED_AT" ? a.issue.createdAt : a.addedAt;
        const kb = field === "CREATED_AT" ? b.issue.createdAt : b.addedAt;
        return (ka < kb ? -1 : ka > kb ? 1 : a.issue.id - b.issue.id) * dir;
      })
      .map((e) => e.issue);
  };
  const blockers = () =>
    issue.blockedBy
      .map((b) => ({ issue: state.issuesById.get(b.issueId), addedAt: b.addedAt }))
      .filter((e): e is { issue: SimIssue; addedAt: string } => e.issue !== undefined);
  const blocked = () =>
    byIds(issue.blockingIds).map((other) => ({
      issue: other,
      addedAt: other.blockedBy.find((b) => b.issueId === issue.id)?.addedAt ?? other.createdAt,
    }));
  const subIssues = () => byIds(issue.subIssueIds);
  const association = (login: string) =>
    authorAssociation({ roleOf: (l, r) => state.roleOf(l, r) }, repo, login);
  const issueUrl = `${ctx.base}/${repo.owner}/${repo.name}/issues/${issue.number}`;
  return {
    __typename: "Issue",
    id: issue.nodeId,
    databaseId: issue.id,
    fullDatabaseId: String(issue.id),
    number: issue.number,
    title: issue.title,
    body: issue.body ?? "",
    url: issueUrl,
    author: () => actorView(issue.user),
    authorAssociation: () => association(issue.user),
    // Oldest first, as GitHub lists them; `last`/`before` read backwards from the newest.
    comments: (args: ConnectionArgs) =>
      connection(issue.comments, args, "comments", (c) => ({
        __typename: "IssueComment",
        id: c.nodeId,
        databaseId: c.id,
        author: actorView(c.user),
        authorAssociation: association(c.user),
        body: c.body,
        createdAt: c.createdAt,
        updatedAt: c.updatedAt,
        url: `${issueUrl}#issuecomment-${c.id}`,
      })),
    state: issue.state === "open" ? "OPEN" : "CLOSED",
    stateReason: (args: { enableDuplicate?: boolean }) => {
      if (issue.stateReason === null) return null;
      if (issue.stateReason === "duplicate" && !args.enableDuplicate) return "NOT_PLANNED";
      return REASONS[issue.stateReason];
    },
    createdAt: issue.createdAt,
    updatedAt: issue.updatedAt,
    closedAt: issue.closedAt,
    repository: () => repoView(ctx, repo),
    labels: (args: ConnectionArgs & { orderBy?: { field: string; direction: string } }) => {
      let labels = issue.labels
        .map((name) => repo.labels.get(name.toLowerCase()))
        .filter((l) => l !== undefined);
      if (args.orderBy?.field === "NAME")
        labels = [...labels].sort((a, b) => (a.name < b.name ? -1 : 1));
      if (args.orderBy?.direction === "DESC") labels = [...labels].reverse();
      return connection(labels, args, "labels", (l) => ({
        id: l.nodeId,
        name: l.name,
        color: l.color,
      }));
    },
    parent: () => {
      const parent = issue.parentId === null ? undefined : state.issuesById.get(issue.parentId);
      return parent && ctx.canRead(state.repoOf(parent)) ? view(parent) : null;
    },
    subIssues: (args: ConnectionArgs) => connection(subIssues(), args, "subIssues", view),
    subIssuesSummary: () => {
      const all = subIssues();
      const completed = all.filter((i) => i.state === "closed").length;
      return {
        total: all.length,
        completed,
        percentCompleted: all.length === 0 ? 0 : Math.floor((completed * 100) / all.length),
      };
    },
    blockedBy: (args: ConnectionArgs & { orderBy?: { field: string; direction: string } }) =>
      connection(depOrder(blockers(), args), args, "blockedBy", view),
    blocking: (args: ConnectionArgs & { orderBy?: { field: string; direction: string } }) =>
      connection(depOrder(blocked(), args), args, "blocking", view),
    issueDependenciesSummary: () => {
      const b = blockers().map((e) => e.issue);
      const k = blocked().map((e) => e.issue);
      return {
        blockedBy: b.filter((i) => i.state === "open").length,
        totalBlockedBy: b.length,
        blocking: k.filter((i) => i.state === "open").length,
        totalBlocking: k.length,
      };
    },
    timelineItems: (
      args: ConnectionArgs & { itemTypes?: string[]; since?: string; skip?: number },
    ) => {
      const wanted = new Set(args.itemTypes ?? ["LABELED_EVENT", "UNLABELED_EVENT"]);
      let events = issue.labelEvents.filter((e) =>
        wanted.has(e.action === "labeled" ? "LABELED_EVENT" : "UNLABELED_EVENT"),
      );
      if (args.since) events = events.filter((e) => e.createdAt >= args.since!);
      if (args.skip) events = events.slice(args.skip);
      const conn = connection(events, args, "timelineItems", (e) => ({
        __typename: e.action === "labeled" ? "LabeledEvent" : "UnlabeledEvent",
        id: `LE_${e.id}`,
        createdAt: e.createdAt,
        actor: actorView(e.actor),
        label: { id: `LA_${e.label}`, name: e.label, color: e.color },
      }));
      return { ...conn, filteredCount: events.length };
    },
  };
}

function repoView(ctx: GraphqlContext, repo: SimRepo): Record<string, unknown> {
  return {
    __typename: "Repository",
    id: repo.nodeId,
    databaseId: repo.id,
    isArchived: repo.archived,
    isPrivate: repo.private,
    name: repo.name,
    nameWithOwner: `${repo.owner}/${repo.name}`,
    issue: ({ number }: { number: number }) => {
      const issue = repo.issues.get(number);
      if (!issue)
        throw new GraphQLError(`Could not resolve to an Issue with the number of ${number}.`);
      return issueView(ctx, issue);
    },
    issues: (
      args: ConnectionArgs & {
        states?: string[];
        labels?: string[];
        orderBy?: { field: string; direction: string };
        filterBy?: { since?: string; states?: string[]; labels?: string[] };
      },
    ) => {
      const states = args.states ?? args.filterBy?.states;
      const labels = args.labels ?? args.filterBy?.labels;
      let issues = [...repo.issues.values()];
      if (states) issues = issues.filter((i) => states.includes(i.state.toUpperCase()));
      if (labels)
        issues = issues.filter((i) =>
          labels.every((l) => i.labels.some((x) => x.toLowerCase() === l.toLowerCase())),
        );
      if (args.filterBy?.since) issues = issues.filter((i) => i.updatedAt >= args.filterBy!.since!);
      const field = args.orderBy?.field ?? "CREATED_AT";
      const key = (i: SimIssue) =>
        field === "UPDATED_AT"
          ? i.updatedAt
          : field === "COMMENTS"
            ? String(i.comments.length).padStart(9, "0")
            : i.createdAt;
      issues.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.number - b.number));
      if (args.orderBy?.direction === "DESC") issues.reverse();
      return connection(issues, args, "issues", (i) => issueView(ctx, i));
    },
  };
}

/** Node ids are `I_` + base64(`0:<databaseId>`) (see model.ts). */
function databaseIdOf(id: string): number | null {
  const m = /^[A-Z]+_([A-Za-z0-9+/]+)$/.exec(id);
  if (!m) return null;
  try {
    const decoded = /^0:(\d+)$/.exec(atob(m[1]!));
    return decoded ? Number(decoded[1]) : null;
  } catch {
    return null;
  }
}

export function operationNameOf(query: string, operationName?: string | null): string | null {
  if (operationName) return operationName;
  const m = /^\s*(?:query|mutation)\s+([A-Za-z_][A-Za-z0-9_]*)/m.exec(query);
  return m ? m[1]! : null;
}

export async function executeGraphql(
  ctx: GraphqlContext,
  body: { query?: unknown; variables?: unknown; operationName?: unknown },
): Promise<Record<string, unknown>> {
  if (typeof body.query !== "string") {
    return { errors: [{ message: "A query attribute must be specified and must be a string." }] };
  }
  const projectsCtx = { ...ctx, issueView: (issue: SimIssue) => issueView(ctx, issue) };
  const byNodeId = (id: string) => {
    if (id.startsWith("PVT")) return projectNode(projectsCtx, id);
    if (id.startsWith("R_")) {
      const repo = ctx.state.repoById(databaseIdOf(id) ?? -1);
      return repo && repo.nodeId === id && ctx.canRead(repo) ? repoView(ctx, repo) : null;
    }
    const issue = ctx.state.issuesById.get(databaseIdOf(id) ?? -1);
    if (!issue || issue.nodeId !== id) return null;
    return ctx.canRead(ctx.state.repoOf(issue)) ? issueView(ctx, issue) : null;
  };
  const rootValue = {
    organization: organizationRoot(projectsCtx),
    node: ({ id }: { id: string }) => byNodeId(id),
    nodes: ({ ids }: { ids: string[] }) => {
      if (ids.length > 100)
        throw new GraphQLError("You may not request more than 100 nodes at once.");
      return ids.map(byNodeId);
    },
    repository: ({
      owner,
      name,
      followRenames,
    }: {
      owner: string;
      name: string;
      followRenames?: boolean;
    }) => {
      // As on GitHub, a former name (rename or transfer) resolves to the repository that had it,
      // unless `followRenames: false`; the answer's `databaseId` tells which repository it is.
      const repo =
        ctx.state.repo(owner, name) ??
        (followRenames === false ? undefined : ctx.state.renamedRepo(owner, name));
      if (!repo || !ctx.canRead(repo)) {
        throw new GraphQLError(
          `Could not resolve to a Repository with the name '${owner}/${name}'.`,
          {
            extensions: { type: "NOT_FOUND" },
          },
        );
      }
      return repoView(ctx, repo);
    },
  };
  const result = await graphql({
    schema,
    source: body.query,
    rootValue,
    contextValue: ctx,
    variableValues: (body.variables ?? undefined) as Record<string, unknown> | undefined,
    operationName: typeof body.operationName === "string" ? body.operationName : undefined,
  });
  const out: Record<string, unknown> = {};
  if (result.data !== undefined) out.data = result.data;
  if (result.errors) {
    out.errors = result.errors.map((e) => ({
      message: e.message,
      ...(e.path ? { path: e.path } : {}),
      ...(e.locations ? { locations: e.locations } : {}),
      ...(e.extensions?.type ? { type: e.extensions.type } : {}),
    }));
  }
  return out;
}
