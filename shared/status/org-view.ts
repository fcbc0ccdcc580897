// The org page's view-model (`/orgs/{owner}`): the repositories of one owner a viewer may see,
// each with the figures its pushed queue head carries (queue length, live claims) and its dead
// letters (counted by the repository itself: the head lacks them), and the owner's next items.
// Pure: the route decides which repositories are visible and reads them; only those reach this.
import { ITEM_KINDS, type RepoHead } from "../org/head.ts";
import { orgCandidates } from "../org/pick.ts";

/** Items of the owner's queue the page lists. */
export const ORG_NEXT_SHOWN = 5;

/** One repository the viewer may see, with what was read of it. */
export interface OrgRepoRead {
  fullName: string;
  /** As GitHub listed it to the viewer (null: not known, e.g. an anonymous viewer's public one). */
  private: boolean | null;
  /** Its pushed head, when the owner holds an active one (null: none pushed yet, or withdrawn). */
  head: RepoHead | null;
  /** Its dead letters (null: the repository did not answer). */
  stuck: number | null;
}

export interface OrgRepoRow {
  fullName: string;
  /** The repository's own status page. */
  href: string;
  private: boolean | null;
  queueLength: number | null;
  liveClaims: number | null;
  stuck: number | null;
}

export interface OrgNextItem {
  repo: string;
  number: number;
  title: string;
  url: string;
  reason: string;
  kind: string;
}

export interface OrgPageModel {
  owner: string;
  viewer: string | null;
  now: string;
  repos: OrgRepoRow[];
  /** The owner's next items over the visible repositories, in the org queue's `fair` order. */
  next: OrgNextItem[];
  /** Available items in all over the visible repositories (from their heads). */
  queueTotal: number;
}

export function orgPageModel(input: {
  owner: string;
  viewer: string | null;
  repos: readonly OrgRepoRead[];
  nowMs: number;
}): OrgPageModel {
  const repos = [...input.repos].sort((a, b) => a.fullName.localeCompare(b.fullName));
  const heads = repos.flatMap((r) => (r.head && r.head.status === "active" ? [r.head] : []));
  // Every capability any item requires: the page shows the queue, not one agent's share of it.
  const capabilities = new Set(
    heads.flatMap((h) => h.items.flatMap((i) => i.requires.map((c) => c.toLowerCase()))),
  );
  const next = orgCandidates(
    heads,
    { capabilities, kinds: new Set(ITEM_KINDS), repos: null },
    "fair",
    null,
    input.nowMs,
  )
    .slice(0, ORG_NEXT_SHOWN)
    .map((c) => ({
      repo: c.fullName,
      number: c.item.number,
      title: c.item.title,
      url: c.item.url,
      reason: c.item.reason,
      kind: c.item.kind,
    }));
  return {
    owner: input.owner,
    viewer: input.viewer,
    now: new Date(input.nowMs).toISOString(),
    repos: repos.map((r) => {
      const live = r.head?.status === "active" ? r.head : null;
      return {
        fullName: r.fullName,
        href: `/repos/${r.fullName}`,
        private: r.private,
        queueLength: live ? live.total : null,
        liveClaims: live
          ? live.claims.filter((c) => Date.parse(c.expiresAt) > input.nowMs).length
          : null,
        stuck: r.stuck,
      };
    }),
    next,
    queueTotal: heads.reduce((sum, h) => sum + h.total, 0),
  };
}
