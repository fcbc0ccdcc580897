// GraphQL for organizations' Projects (v2): `organization(login) { projectV2(number) }` with its
// single-select fields and items, each item's issue (`content`) and field values. A subset of
// GitHub's schema like the rest of graphql.ts (the contract test checks every type and field).
import { GraphQLError } from "graphql";
import type { Identity } from "./auth.ts";
import { type ConnectionArgs, connection } from "./graphql-connection.ts";
import {
  accountId,
  nodeId,
  type SimIssue,
  type SimProject,
  type SimProjectField,
  type SimProjectItem,
  type SimRepo,
} from "./model.ts";
import { hasPermission, NOT_ACCESSIBLE } from "./permissions.ts";
import type { SimState } from "./state.ts";

export const PROJECTS_SDL = /* GraphQL */ `
type Organization implements Actor & Node {
  id: ID!
  login: String!
  projectV2(number: Int!): ProjectV2
}

type ProjectV2 implements Node {
  id: ID!
  number: Int!
  title: String!
  closed: Boolean!
  field(name: String!): ProjectV2FieldConfiguration
  fields(after: String, before: String, first: Int, last: Int): ProjectV2FieldConfigurationConnection!
  items(after: String, before: String, first: Int, last: Int): ProjectV2ItemConnection!
}

enum ProjectV2FieldType { SINGLE_SELECT }
interface ProjectV2FieldCommon { id: ID! name: String! dataType: ProjectV2FieldType! project: ProjectV2! }
enum ProjectV2SingleSelectFieldOptionColor { BLUE GRAY GREEN ORANGE PINK PURPLE RED YELLOW }
type ProjectV2SingleSelectFieldOption { id: String! name: String! color: ProjectV2SingleSelectFieldOptionColor! description: String! }
type ProjectV2SingleSelectField implements Node & ProjectV2FieldCommon {
  id: ID!
  name: String!
  dataType: ProjectV2FieldType!
  project: ProjectV2!
  options(names: [String!]): [ProjectV2SingleSelectFieldOption!]!
}
union ProjectV2FieldConfiguration = ProjectV2SingleSelectField
type ProjectV2FieldConfigurationConnection { nodes: [ProjectV2FieldConfiguration] pageInfo: PageInfo! totalCount: Int! }

enum ProjectV2ItemType { DRAFT_ISSUE ISSUE PULL_REQUEST REDACTED }
union ProjectV2ItemContent = Issue
interface ProjectV2ItemFieldValueCommon {
  id: ID!
  field: ProjectV2FieldConfiguration!
  item: ProjectV2Item!
  createdAt: DateTime!
  updatedAt: DateTime!
}
type ProjectV2ItemFieldSingleSelectValue implements Node & ProjectV2ItemFieldValueCommon {
  id: ID!
  name: String
  optionId: String
  field: ProjectV2FieldConfiguration!
  item: ProjectV2Item!
  createdAt: DateTime!
  updatedAt: DateTime!
}
union ProjectV2ItemFieldValue = ProjectV2ItemFieldSingleSelectValue
type ProjectV2ItemFieldValueConnection { nodes: [ProjectV2ItemFieldValue] pageInfo: PageInfo! totalCount: Int! }
type ProjectV2Item implements Node {
  id: ID!
  type: ProjectV2ItemType!
  isArchived: Boolean!
  createdAt: DateTime!
  updatedAt: DateTime!
  project: ProjectV2!
  content: ProjectV2ItemContent
  fieldValueByName(name: String!): ProjectV2ItemFieldValue
  fieldValues(after: String, before: String, first: Int, last: Int): ProjectV2ItemFieldValueConnection!
}
type ProjectV2ItemConnection { nodes: [ProjectV2Item] pageInfo: PageInfo! totalCount: Int! }
`;

/** Whether a caller may read an organization's projects, or how GitHub refuses it. */
export type ProjectAccess = "ok" | "forbidden" | "not-found";

/**
 * An installation token reads its own organization's projects with `organization_projects`
 * (else FORBIDDEN, as GitHub answers); a registered user those of organizations it is an
 * active member of; the unrestricted user every one.
 */
export function projectAccess(state: SimState, identity: Identity, org: string): ProjectAccess {
  if (identity.kind === "installation") {
    const inst = state.installations.get(identity.installationId);
    if (!inst || inst.account.toLowerCase() !== org.toLowerCase()) return "forbidden";
    return hasPermission(inst, "organization_projects") ? "ok" : "forbidden";
  }
  if (identity.kind !== "user") return "forbidden";
  if (!identity.registered) return "ok";
  return state.orgs.membership(org, identity.login)?.state === "active" ? "ok" : "not-found";
}

export interface ProjectsGraphqlContext {
  state: SimState;
  canRead(repo: SimRepo): boolean;
  projectAccess(org: string): ProjectAccess;
  /** The Issue view of graphql.ts (an item's content). */
  issueView(issue: SimIssue): Record<string, unknown>;
}

type View = Record<string, unknown>;

function fieldView(ctx: ProjectsGraphqlContext, project: SimProject, field: SimProjectField): View {
  return {
    __typename: "ProjectV2SingleSelectField",
    id: field.nodeId,
    name: field.name,
    dataType: "SINGLE_SELECT",
    project: () => projectView(ctx, project),
    options: ({ names }: { names?: string[] | null }) =>
      field.options
        .filter((o) => !names || names.some((n) => n.toLowerCase() === o.name.toLowerCase()))
        .map((o) => ({ id: o.id, name: o.name, color: o.color, description: o.description })),
  };
}

function valueView(
  ctx: ProjectsGraphqlContext,
  project: SimProject,
  item: SimProjectItem,
  field: SimProjectField,
): View | null {
  const value = item.values.get(field.id);
  const option = field.options.find((o) => o.id === value?.optionId);
  if (!value || !option) return null;
  return {
    __typename: "ProjectV2ItemFieldSingleSelectValue",
    id: value.nodeId,
    name: option.name,
    optionId: option.id,
    field: () => fieldView(ctx, project, field),
    item: () => itemView(ctx, project, item),
    createdAt: value.createdAt,
    updatedAt: value.updatedAt,
  };
}

function itemView(ctx: ProjectsGraphqlContext, project: SimProject, item: SimProjectItem): View {
  const issue = ctx.state.issuesById.get(item.issueId);
  // An issue the caller cannot read (or that is gone) is redacted, as GitHub does.
  const visible = issue && ctx.canRead(ctx.state.repoOf(issue)) ? issue : undefined;
  const values = () =>
    project.fields.map((f) => valueView(ctx, project, item, f)).filter((v) => v !== null);
  return {
    __typename: "ProjectV2Item",
    id: item.nodeId,
    type: visible ? "ISSUE" : "REDACTED",
    isArchived: false,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
    project: () => projectView(ctx, project),
    content: () => (visible ? ctx.issueView(visible) : null),
    fieldValueByName: ({ name }: { name: string }) => {
      const field = project.fields.find((f) => f.name.toLowerCase() === name.toLowerCase());
      return field ? valueView(ctx, project, item, field) : null;
    },
    fieldValues: (args: ConnectionArgs) => connection(values(), args, "fieldValues", (v) => v),
  };
}

function projectView(ctx: ProjectsGraphqlContext, project: SimProject): View {
  return {
    __typename: "ProjectV2",
    id: project.nodeId,
    number: project.number,
    title: project.title,
    closed: false,
    field: ({ name }: { name: string }) => {
      const field = project.fields.find((f) => f.name.toLowerCase() === name.toLowerCase());
      return field ? fieldView(ctx, project, field) : null;
    },
    fields: (args: ConnectionArgs) =>
      connection(project.fields, args, "fields", (f) => fieldView(ctx, project, f)),
    items: (args: ConnectionArgs) =>
      connection(project.items, args, "items", (i) => itemView(ctx, project, i)),
  };
}

/** Throws GitHub's error for a refused read of `org`'s projects. */
function checkAccess(ctx: ProjectsGraphqlContext, org: string): void {
  const access = ctx.projectAccess(org);
  if (access === "forbidden")
    throw new GraphQLError(NOT_ACCESSIBLE, { extensions: { type: "FORBIDDEN" } });
  if (access === "not-found")
    throw new GraphQLError(`Could not resolve to an Organization with the login of '${org}'.`, {
      extensions: { type: "NOT_FOUND" },
    });
}

/** An organization is known when it owns a repository, an installation, members or projects. */
function orgExists(state: SimState, login: string): boolean {
  const l = login.toLowerCase();
  return (
    [...state.repos.values()].some((r) => r.owner.toLowerCase() === l) ||
    state.installationOnAccount(login) !== undefined ||
    state.orgs.members(login).length > 0 ||
    state.projects.ofOrg(login).length > 0
  );
}

/** The root field `organization(login)`. */
export function organizationRoot(ctx: ProjectsGraphqlContext) {
  return ({ login }: { login: string }) => {
    if (!orgExists(ctx.state, login))
      throw new GraphQLError(`Could not resolve to an Organization with the login of '${login}'.`, {
        extensions: { type: "NOT_FOUND" },
      });
    const canonical =
      ctx.state.installationOnAccount(login)?.account ??
      [...ctx.state.repos.values()].find((r) => r.owner.toLowerCase() === login.toLowerCase())
        ?.owner ??
      login;
    return {
      __typename: "Organization",
      id: nodeId("O", accountId(canonical)),
      login: canonical,
      projectV2: ({ number }: { number: number }) => {
        checkAccess(ctx, canonical);
        const project = ctx.state.projects.project(canonical, number);
        if (!project)
          throw new GraphQLError(`Could not resolve to a ProjectV2 with the number ${number}.`, {
            extensions: { type: "NOT_FOUND" },
          });
        return projectView(ctx, project);
      },
    };
  };
}

/** `node(id)` for projects (`PVT_`) and their items (`PVTI_`), if the caller may read them. */
export function projectNode(
  ctx: ProjectsGraphqlContext,
  id: string,
): Record<string, unknown> | null {
  for (const project of ctx.state.projects.projects) {
    const item = project.nodeId === id ? null : project.items.find((i) => i.nodeId === id);
    if (project.nodeId !== id && !item) continue;
    if (ctx.projectAccess(project.org) !== "ok") return null;
    return item ? itemView(ctx, project, item) : projectView(ctx, project);
  }
  return null;
}

/**
 * A query a Worker can send for a project's single-select values (documented in
 * docs/github-simulator.md; the contract test checks it against GitHub's schema and the unit
 * tests run it here).
 */
export const EXAMPLE_PROJECT_QUERY = /* GraphQL */ `
query SwitchyardProjectField($org: String!, $number: Int!, $field: String!, $after: String) {
  organization(login: $org) {
    projectV2(number: $number) {
      id
      field(name: $field) {
        ... on ProjectV2SingleSelectField { id name options { id name } }
      }
      items(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          content {
            ... on Issue { id number repository { databaseId nameWithOwner } }
          }
          fieldValueByName(name: $field) {
            ... on ProjectV2ItemFieldSingleSelectValue { name optionId }
          }
        }
      }
    }
  }
}
`;
