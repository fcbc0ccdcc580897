// What a RepoObject pushes to its owner's object (spec 6.2): the head of its queue, versioned,
// with what a caller-dependent filter reads (capabilities, kind, rank, impact, attempts). The
// owner's object keeps nothing else per issue. Validated where it is received (owner-store).
import { z } from "zod";
import { LiveClaimSchema, ReplySchema } from "../fleet/schemas.ts";
import { MAX_CROSS_BLOCKERS, MAX_CROSS_DEPENDENTS, MAX_CROSS_EDGES } from "./cross-impact.ts";

/** How many items of its queue a repository pushes (its order's first K available ones). */
export const HEAD_SIZE = 20;
/** Live claims a repository pushes (the org claims list); a repository with more says so. */
export const HEAD_CLAIMS = 200;

export const ITEM_KINDS = ["reply", "kick", "rollup", "ready"] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];
/** claim-next's kinds when the caller names none (spec 6.4): replies only when asked. */
export const DEFAULT_CLAIM_KINDS: readonly ItemKind[] = ["kick", "rollup", "ready"];

export const HeadItemSchema = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  /** The item's kind in its repository's queue (shared/queue/queue.ts). */
  kind: z.enum(ITEM_KINDS),
  /**
   * Its work (a kick, rollup or ready item) may be claimed now: false for a reply item, and for
   * a work item whose work is parked or held back (a dead letter, `done`, a red breaker) that is
   * pushed for its reply alone. Absent in heads pushed before it existed: true for work items.
   */
  work: z.boolean().optional(),
  /**
   * The unanswered trusted input it may be claimed for now (a reply item's, or the one a work
   * item carries), else null: `kinds` with `reply` match it, as in the repository's queue.
   */
  reply: ReplySchema.nullable().optional(),
  section: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  reason: z.string(),
  requires: z.array(z.string()),
  impact: z.number().int().nonnegative(),
  priority: z.number().nullable(),
  attempts: z.number().int().nonnegative(),
  url: z.string(),
  /**
   * The issues other repositories of the owner wait on (as the owner told: `crossBlockers`)
   * that are this item or wait on it here: the owner counts their cross-repository dependents
   * (shared/org/cross-impact.ts). Absent: none.
   */
  via: z.array(z.number().int().positive()).max(MAX_CROSS_BLOCKERS).optional(),
});
export type HeadItem = z.infer<typeof HeadItemSchema>;

const IssueNumbers = z.array(z.number().int().positive());

/** What the owner tells a repository: its issues other repositories of the owner wait on. */
export const CrossBlockersSchema = IssueNumbers.max(MAX_CROSS_BLOCKERS);

/** An open issue here waiting on an issue of another repository of the same owner. */
export const PushedCrossEdgeSchema = z.object({
  number: z.number().int().positive(),
  blocker: z.object({
    repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/, "must be owner/name"),
    number: z.number().int().positive(),
  }),
  dependents: IssueNumbers.max(MAX_CROSS_DEPENDENTS),
});

export const RepoHeadSchema = z.object({
  repoId: z.number().int().positive(),
  fullName: z.string().regex(/^[^/\s]+\/[^/\s]+$/, "must be owner/name"),
  installationId: z.number().int().positive(),
  /** Only grows per repository (`nextHeadVersion`): a push not newer than the stored one is late. */
  version: z.number().int().positive(),
  /** `active`; anything else takes the repository out of the owner's queue. */
  status: z.enum(["active", "suspended", "removed"]),
  /** The first `HEAD_SIZE` available items, in the repository's own order. */
  items: z.array(HeadItemSchema).max(HEAD_SIZE),
  /** How many items are available in all (more than `items.length`: ask it directly). */
  total: z.number().int().nonnegative(),
  /** Its live claims (at most `HEAD_CLAIMS`), for `GET /v1/orgs/{owner}/claims`. */
  claims: z.array(LiveClaimSchema).max(HEAD_CLAIMS),
  /** Its cross-repository edges within the owner (bounded, see cross-impact.ts). Absent: none. */
  crossEdges: z
    .array(PushedCrossEdgeSchema)
    .max(MAX_CROSS_EDGES)
    .refine(
      (edges) => edges.reduce((n, e) => n + e.dependents.length, 0) <= MAX_CROSS_DEPENDENTS,
      `at most ${MAX_CROSS_DEPENDENTS} dependents over all edges`,
    )
    .optional(),
  /** The `crossBlockers` the owner last told it, which its items' `via` were computed from. */
  crossBlockers: CrossBlockersSchema.optional(),
});
export type RepoHead = z.infer<typeof RepoHeadSchema>;

/**
 * A push's version: the wall clock in milliseconds, but always above the last one, so versions
 * only grow across restarts and wipes of the repository's storage (a wiped counter would start
 * again at 1 and a late push of the old life would win).
 */
export function nextHeadVersion(last: number, nowMs: number): number {
  return Math.max(last + 1, Math.floor(nowMs));
}

/** Whether a push replaces what the owner holds: only a newer version does (a late push is harmless). */
export function supersedes(stored: { version: number } | null, incoming: { version: number }) {
  return stored === null || incoming.version > stored.version;
}

/**
 * How a caller taking `kinds` would take a pushed item, as the repository's claim-next would
 * (functions/objects/repo/queue.ts `selection`): its work when its kind was asked for and its
 * work is claimable, else its reply when `reply` was asked for and it carries one, else null.
 */
export function takenAs(
  item: Pick<HeadItem, "kind" | "work" | "reply">,
  kinds: ReadonlySet<ItemKind>,
): "work" | "reply" | null {
  if (item.kind !== "reply" && (item.work ?? true) && kinds.has(item.kind)) return "work";
  // A reply item pushed before `reply` was pushed still is one.
  if (kinds.has("reply") && (item.reply != null || item.kind === "reply")) return "reply";
  return null;
}

/** The kind of a queue item (spec 6.4): replies, the ready label's kicks and rollups, mode `all`. */
export function itemKind(item: { section: 1 | 2 | 3; reason: string }): ItemKind {
  if (item.section === 1) return "reply";
  if (item.section === 3) return "ready";
  return item.reason.startsWith("rollup") ? "rollup" : "kick";
}
