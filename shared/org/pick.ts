// The owner's pick (spec 6.4, org routes): which pushed items a caller gets, in which order,
// over the heads the repositories pushed (head.ts). Pure: the owner's object reads its rows,
// calls this, and asks each candidate's repository to grant in turn (that repository's own
// rules decide; a refused candidate is stale and the next one is tried).
import { type HeadItem, type ItemKind, type RepoHead, takenAs } from "./head.ts";
import { liveTurn, type Turn } from "./turns.ts";

export const ORG_ORDERS = ["fair", "impact", "number", "priority"] as const;
export type OrgOrder = (typeof ORG_ORDERS)[number];

/** Candidates one claim-next asks repositories to grant before it answers 204. */
export const ORG_GRANT_ATTEMPTS = 8;
/**
 * When no pushed item fits, at most this many repositories whose head says they hold more than
 * they pushed are asked for a claim-next of their own (in fairness order): the bound on the
 * fan-out of one org claim-next, whatever the number of repositories.
 */
export const ORG_FALLBACK_REPOS = 3;

/** What a caller may take, as far as the pushed fields tell (the repository checks the rest). */
export interface OrgCaller {
  capabilities: ReadonlySet<string>;
  kinds: ReadonlySet<ItemKind>;
  /** Repository ids the caller may use (its credential and `repos=`); null: every one. */
  repos: ReadonlySet<number> | null;
}

export interface Candidate {
  repoId: number;
  fullName: string;
  item: HeadItem;
}

/**
 * Every capability the item requires is the caller's, and the caller takes it: by its kind, or
 * for its reply when the caller takes `reply` (`takenAs`, as the repository's queue matches).
 */
export function fits(item: HeadItem, caller: OrgCaller): boolean {
  if (takenAs(item, caller.kinds) === null) return false;
  for (const need of item.requires) if (!caller.capabilities.has(need.toLowerCase())) return false;
  return true;
}

/** The active heads this caller may use, in a stable order (by repository id). */
function usable(heads: readonly RepoHead[], caller: OrgCaller): RepoHead[] {
  return heads
    .filter((h) => h.status === "active" && (caller.repos === null || caller.repos.has(h.repoId)))
    .sort((a, b) => a.repoId - b.repoId);
}

/** `list` rotated to start at the first repository after the turn's (wrapping around). */
function rotate<T extends { repoId: number }>(list: readonly T[], turn: Turn | null): T[] {
  if (turn === null || list.length === 0) return [...list];
  let start = list.findIndex((h) => h.repoId > turn.repoId);
  if (start < 0) start = 0;
  return [...list.slice(start), ...list.slice(0, start)];
}

/**
 * The caller's candidates, best first:
 * - `fair`: repositories take turns, starting after the one the agent was last granted from
 *   (its live turn), among those with an item that fits; each repository's own order inside its
 *   turn (the first fitting item of each, then the second of each, ...).
 * - `number`: each repository by number, interleaved (every repository's lowest, then the next).
 * - `impact`: one ranking: most open issues waiting on it, then section, then number.
 * - `priority`: rank (unranked last), then section, impact, number.
 * Ties across repositories go to the lower repository id.
 */
export function orgCandidates(
  heads: readonly RepoHead[],
  caller: OrgCaller,
  order: OrgOrder,
  turn: Turn | null,
  nowMs: number,
): Candidate[] {
  const lists = usable(heads, caller)
    .map((h) => ({
      repoId: h.repoId,
      fullName: h.fullName,
      items: h.items.filter((item) => fits(item, caller)),
    }))
    .filter((l) => l.items.length > 0);
  const flat = (): Candidate[] =>
    lists.flatMap((l) => l.items.map((item) => ({ repoId: l.repoId, fullName: l.fullName, item })));
  switch (order) {
    case "fair":
      return interleave(rotate(lists, liveTurn(turn, nowMs)));
    case "number":
      return interleave(
        lists.map((l) => ({ ...l, items: [...l.items].sort((a, b) => a.number - b.number) })),
      );
    case "impact":
      return flat().sort(
        (a, b) =>
          b.item.impact - a.item.impact ||
          a.item.section - b.item.section ||
          a.item.number - b.item.number ||
          a.repoId - b.repoId,
      );
    case "priority":
      return flat().sort(
        (a, b) =>
          rank(a.item) - rank(b.item) ||
          a.item.section - b.item.section ||
          b.item.impact - a.item.impact ||
          a.item.number - b.item.number ||
          a.repoId - b.repoId,
      );
  }
}

const rank = (item: HeadItem) => item.priority ?? Number.POSITIVE_INFINITY;

/** Round robin over the lists: the first item of each, then the second of each, ... */
function interleave(
  lists: ReadonlyArray<{ repoId: number; fullName: string; items: readonly HeadItem[] }>,
): Candidate[] {
  const out: Candidate[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.items.length));
  for (let k = 0; k < longest; k++) {
    for (const l of lists) {
      const item = l.items[k];
      if (item !== undefined) out.push({ repoId: l.repoId, fullName: l.fullName, item });
    }
  }
  return out;
}

/**
 * Repositories to ask directly when no pushed item fits: those whose head says they hold more
 * available items than they pushed, in fairness order (after the agent's turn), at most
 * `ORG_FALLBACK_REPOS`, skipping `tried` (already asked in this call).
 */
export function fallbackRepos(
  heads: readonly RepoHead[],
  caller: OrgCaller,
  turn: Turn | null,
  nowMs: number,
  tried: ReadonlySet<number> = new Set(),
): RepoHead[] {
  const more = usable(heads, caller).filter(
    (h) => h.total > h.items.length && !tried.has(h.repoId),
  );
  return rotate(more, liveTurn(turn, nowMs)).slice(0, ORG_FALLBACK_REPOS);
}

/** The turn after a grant from `repoId`. */
export function turnAfter(agentId: string, repoId: number, nowMs: number): Turn {
  return { agentId, repoId, atMs: nowMs };
}
