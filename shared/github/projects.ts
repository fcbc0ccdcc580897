// Reading an organization project's single-select field (Projects v2) for priority ranks
// (config `priority.project`, spec 6.4): a query of its own, never part of the issue pages, so a
// missing `organization_projects` permission (GitHub answers FORBIDDEN) cannot fail a reconcile.
import { z } from "zod";
import type { GitHubClient } from "./client.ts";

/** One page of the project's items with the field's value (the query of docs/github-simulator.md). */
export const PROJECT_ITEMS_QUERY = /* GraphQL */ `
query SwitchyardProjectItems($org: String!, $number: Int!, $field: String!, $after: String) {
  organization(login: $org) {
    projectV2(number: $number) {
      id
      field(name: $field) {
        ... on ProjectV2SingleSelectField { id name }
      }
      items(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          content {
            ... on Issue { number repository { databaseId } }
          }
          fieldValueByName(name: $field) {
            ... on ProjectV2ItemFieldSingleSelectValue { name }
          }
        }
      }
    }
  }
}
`;

/** Items by node id with their field's value (a webhook that did not carry the value). */
export const PROJECT_ITEM_VALUES_QUERY = /* GraphQL */ `
query SwitchyardProjectItemValues($ids: [ID!]!, $field: String!) {
  nodes(ids: $ids) {
    ... on ProjectV2Item {
      id
      project { id }
      content {
        ... on Issue { number repository { databaseId } }
      }
      fieldValueByName(name: $field) {
        ... on ProjectV2ItemFieldSingleSelectValue { name }
      }
    }
  }
}
`;

/** Issues by node id: which repository and number a project item's content is. */
export const ISSUE_NODES_QUERY = /* GraphQL */ `
query SwitchyardIssueNodes($ids: [ID!]!) {
  nodes(ids: $ids) {
    ... on Issue { id number repository { databaseId } }
  }
}
`;

/** Node ids a request may name at once (GitHub's limit). */
export const NODES_BATCH = 100;

const IssueContent = z
  .object({
    number: z.number().int().optional(),
    repository: z.object({ databaseId: z.number().int().nullable() }).optional(),
  })
  .nullable();
const Value = z.object({ name: z.string().nullable().optional() }).nullable();

const ItemsPage = z.object({
  organization: z
    .object({
      projectV2: z
        .object({
          id: z.string(),
          field: z.object({ id: z.string().optional() }).nullable(),
          items: z.object({
            pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullable() }),
            nodes: z.array(
              z
                .object({ id: z.string(), content: IssueContent, fieldValueByName: Value })
                .nullable(),
            ),
          }),
        })
        .nullable(),
    })
    .nullable(),
});

export interface ProjectItemValue {
  itemId: string;
  repoId: number;
  number: number;
  /** The field's option for the item, null when it has none. */
  option: string | null;
}

export interface ProjectPage {
  projectId: string;
  /** False when the project has no single-select field of that name. */
  fieldFound: boolean;
  items: ProjectItemValue[];
  /** The cursor of the next page, null on the last. */
  next: string | null;
}

function issueOf(content: z.infer<typeof IssueContent>): { repoId: number; number: number } | null {
  const repoId = content?.repository?.databaseId;
  const number = content?.number;
  return typeof repoId === "number" && typeof number === "number" ? { repoId, number } : null;
}

/**
 * One page (100 items) of project `number` of organization `org`. Throws GitHubApiError
 * (`forbidden` without `organization_projects`, `not-found` for no such organization or project).
 */
export async function readProjectPage(
  client: GitHubClient,
  project: { org: string; number: number; field: string },
  after: string | null,
): Promise<ProjectPage> {
  const data = ItemsPage.parse(
    await client.graphql(`read project ${project.number} of ${project.org}`, PROJECT_ITEMS_QUERY, {
      org: project.org,
      number: project.number,
      field: project.field,
      after,
    }),
  );
  const p = data.organization?.projectV2;
  if (!p) throw new Error(`project ${project.number} of ${project.org} was not found`);
  const items: ProjectItemValue[] = [];
  for (const node of p.items.nodes) {
    const issue = node ? issueOf(node.content) : null;
    if (!node || !issue) continue;
    items.push({ itemId: node.id, ...issue, option: node.fieldValueByName?.name ?? null });
  }
  return {
    projectId: p.id,
    fieldFound: p.field !== null,
    items,
    next: p.items.pageInfo.hasNextPage ? p.items.pageInfo.endCursor : null,
  };
}

const ItemNodes = z.object({
  nodes: z.array(
    z
      .object({
        id: z.string().optional(),
        project: z.object({ id: z.string() }).optional(),
        content: IssueContent.optional(),
        fieldValueByName: Value.optional(),
      })
      .nullable(),
  ),
});

/** Items' current values by node id (at most NODES_BATCH); gone or unreadable items are left out. */
export async function readItemValues(
  client: GitHubClient,
  itemIds: readonly string[],
  field: string,
): Promise<Array<ProjectItemValue & { projectId: string }>> {
  const data = ItemNodes.parse(
    await client.graphql("read project items", PROJECT_ITEM_VALUES_QUERY, {
      ids: itemIds,
      field,
    }),
  );
  const out: Array<ProjectItemValue & { projectId: string }> = [];
  for (const node of data.nodes) {
    const issue = node?.content === undefined ? null : issueOf(node.content);
    if (!node?.id || !node.project || !issue) continue;
    out.push({
      itemId: node.id,
      projectId: node.project.id,
      ...issue,
      option: node.fieldValueByName?.name ?? null,
    });
  }
  return out;
}

const IssueNodes = z.object({
  nodes: z.array(
    z
      .object({
        id: z.string().optional(),
        number: z.number().int().optional(),
        repository: z.object({ databaseId: z.number().int().nullable() }).optional(),
      })
      .nullable(),
  ),
});

/** Which repository and number each issue node id is (at most NODES_BATCH); unknown ones left out. */
export async function resolveIssueNodes(
  client: GitHubClient,
  ids: readonly string[],
): Promise<Map<string, { repoId: number; number: number }>> {
  const data = IssueNodes.parse(
    await client.graphql("resolve project items' issues", ISSUE_NODES_QUERY, { ids }),
  );
  const out = new Map<string, { repoId: number; number: number }>();
  for (const node of data.nodes) {
    const issue = node ? issueOf(node) : null;
    if (node?.id && issue) out.set(node.id, issue);
  }
  return out;
}
