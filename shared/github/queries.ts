// Every GraphQL document the client sends. Static strings (no string building at run time),
// so the contract tests validate exactly what goes over the wire against GitHub's schema.
import { ISSUE_NODES_QUERY, PROJECT_ITEM_VALUES_QUERY, PROJECT_ITEMS_QUERY } from "./projects.ts";

/** Nested connection sizes of the page query; larger connections are paged separately. */
export const NESTED_PAGE = { labels: 20, subIssues: 50, blockedBy: 50 } as const;

/**
 * A window of an issue's comments, newest last, with what the reply rules read (the body is
 * classified as it arrives, then dropped). `hasPreviousPage`/`startCursor` page further back.
 */
const COMMENT_FIELDS = /* GraphQL */ `
fragment SwitchyardCommentWindow on IssueCommentConnection {
  totalCount
  pageInfo { hasPreviousPage startCursor }
  nodes {
    databaseId
    author { __typename login }
    authorAssociation
    body
    createdAt
    updatedAt
    url
  }
}
`;

/** Comments a page of issues reads of each issue (the newest); more only where needed. */
export const COMMENT_WINDOW = 20;

const ISSUE_FIELDS = /* GraphQL */ `
fragment SwitchyardIssue on Issue {
  id
  databaseId
  number
  title
  state
  stateReason(enableDuplicate: true)
  createdAt
  updatedAt
  closedAt
  body @include(if: $withBody)
  url @include(if: $withComments)
  author @include(if: $withComments) { __typename login }
  authorAssociation @include(if: $withComments)
  comments(last: 20) @include(if: $withComments) { ...SwitchyardCommentWindow }
  labels(first: 20, orderBy: {field: NAME, direction: ASC}) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { name }
  }
  parent { number repository { nameWithOwner } }
  subIssues(first: 50) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { ...SwitchyardRelated }
  }
  blockedBy(first: 50) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { ...SwitchyardRelated }
  }
}

fragment SwitchyardRelated on Issue {
  number
  state
  closedAt
  repository { nameWithOwner }
}
${COMMENT_FIELDS}`;

/** One page of up to 100 issues (open and closed) with their edges: the full fetch. */
export const ISSUES_PAGE_QUERY = /* GraphQL */ `
query SwitchyardIssuesPage($owner: String!, $name: String!, $after: String, $first: Int!, $withBody: Boolean!, $withComments: Boolean = false) {
  repository(owner: $owner, name: $name) {
    databaseId
    issues(first: $first, after: $after, orderBy: {field: CREATED_AT, direction: ASC}) {
      pageInfo { hasNextPage endCursor }
      nodes { ...SwitchyardIssue }
    }
  }
}
${ISSUE_FIELDS}`;

/** Up to 100 issues by node id: the targeted refetch after an incremental listing. */
export const ISSUES_BY_ID_QUERY = /* GraphQL */ `
query SwitchyardIssuesById($ids: [ID!]!, $withBody: Boolean!, $withComments: Boolean = false) {
  nodes(ids: $ids) {
    ... on Issue { ...SwitchyardIssue }
  }
}
${ISSUE_FIELDS}`;

/** The rest of one issue's overflowing connections, each only when asked for. */
export const ISSUE_OVERFLOW_QUERY = /* GraphQL */ `
query SwitchyardIssueOverflow(
  $id: ID!
  $labels: Boolean!
  $labelsAfter: String
  $subIssues: Boolean!
  $subIssuesAfter: String
  $blockedBy: Boolean!
  $blockedByAfter: String
) {
  node(id: $id) {
    ... on Issue {
      labels(first: 100, after: $labelsAfter, orderBy: {field: NAME, direction: ASC}) @include(if: $labels) {
        pageInfo { hasNextPage endCursor }
        nodes { name }
      }
      subIssues(first: 100, after: $subIssuesAfter) @include(if: $subIssues) {
        pageInfo { hasNextPage endCursor }
        nodes { ...SwitchyardRelated }
      }
      blockedBy(first: 100, after: $blockedByAfter) @include(if: $blockedBy) {
        pageInfo { hasNextPage endCursor }
        nodes { ...SwitchyardRelated }
      }
    }
  }
}

fragment SwitchyardRelated on Issue {
  number
  state
  closedAt
  repository { nameWithOwner }
}
`;

/** The latest label events of up to 25 issues (stance and processing-lock evidence). */
export const LABEL_EVENTS_QUERY = /* GraphQL */ `
query SwitchyardLabelEvents($ids: [ID!]!) {
  nodes(ids: $ids) {
    ... on Issue {
      number
      timelineItems(itemTypes: [LABELED_EVENT, UNLABELED_EVENT], last: 100) {
        nodes {
          __typename
          ... on LabeledEvent { createdAt actor { login } label { name } }
          ... on UnlabeledEvent { createdAt actor { login } label { name } }
        }
      }
    }
  }
}
`;

/**
 * The newest 100 comments of up to ISSUE_COMMENTS_BATCH issues whose first window held no
 * trusted input to decide on (reply-windows.ts). Batched small: every comment's body comes back.
 */
export const ISSUE_COMMENTS_QUERY = /* GraphQL */ `
query SwitchyardIssueComments($ids: [ID!]!) {
  nodes(ids: $ids) {
    ... on Issue {
      number
      comments(last: 100) { ...SwitchyardCommentWindow }
    }
  }
}
${COMMENT_FIELDS}`;

/** One issue's 100 comments before `before`: a thread longer than that, read further back. */
export const ISSUE_COMMENTS_BEFORE_QUERY = /* GraphQL */ `
query SwitchyardIssueCommentsBefore($id: ID!, $before: String) {
  node(id: $id) {
    ... on Issue {
      number
      comments(last: 100, before: $before) { ...SwitchyardCommentWindow }
    }
  }
}
${COMMENT_FIELDS}`;

export const ISSUE_COMMENTS_BATCH = 10;
export const LABEL_EVENTS_BATCH = 25;
export const ISSUES_BY_ID_BATCH = 100;

/** Every document switchyard sends, by operation name: the contract tests iterate this. */
export const ALL_QUERIES: Record<string, string> = {
  SwitchyardProjectItems: PROJECT_ITEMS_QUERY,
  SwitchyardProjectItemValues: PROJECT_ITEM_VALUES_QUERY,
  SwitchyardIssueNodes: ISSUE_NODES_QUERY,
  SwitchyardIssuesPage: ISSUES_PAGE_QUERY,
  SwitchyardIssuesById: ISSUES_BY_ID_QUERY,
  SwitchyardIssueOverflow: ISSUE_OVERFLOW_QUERY,
  SwitchyardLabelEvents: LABEL_EVENTS_QUERY,
  SwitchyardIssueComments: ISSUE_COMMENTS_QUERY,
  SwitchyardIssueCommentsBefore: ISSUE_COMMENTS_BEFORE_QUERY,
};
