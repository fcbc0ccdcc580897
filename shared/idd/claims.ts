import { z } from "zod";
import { DEFAULT_CONFIG } from "../config/schema.ts";
import { ValidationError } from "../validation.ts";
import type { CommentMarkerToken } from "./comment-envelope.ts";
import {
  type ClaimedByMarker,
  type CommentMarker,
  type LegacyClaimedByMarker,
  type LegacyUnclaimedByMarker,
  parseCommentMarker,
  type UnclaimedByMarker,
} from "./comment-markers.ts";
import { type IssueComment, parseCommentList } from "./comments.ts";
import { positiveInt } from "./fields.ts";
import { linkedPrNumber } from "./forced-handoff.ts";
import { epochSecond, formatSecond } from "./timestamp.ts";
import { compareCodeUnits, sameLogin } from "./tokens.ts";

/**
 * Claim resolution: which IDD claim (if any) holds an issue, read from its comment history.
 *
 * Marker events are ordered by `createdAt` truncated to the second; within one second claims
 * come first (by claim-id ascending, so the earliest claim-id wins a race), then forced
 * handoffs, activation nonces and releases, each in comment order. The rules (spec section 5):
 * a fresh claim needs no active claim and `supersedes: none`; the same agent, claim-id and
 * branch is a heartbeat; a takeover needs `supersedes` = the active claim-id and that claim stale
 * at the new comment's time; a release needs both ids; legacy markers count only when no
 * new-format claim exists; only trusted authors count. A caller naming its own claim learns
 * whether it owns it; an owner whose claim a later, unreleased trusted claim competes with, or
 * who cannot tell which of two or more activation nonces is its own, is `contested` and stops,
 * as IDD's claim verification (steps 4 and 5) and resume routing say.
 */

const instant = z.iso.datetime({ offset: true, message: "expected an ISO-8601 timestamp" });

export const ClaimOptionsSchema = z.object({
  /** The instant staleness is judged at. */
  now: instant,
  /** Age at which a claim is stale (`>=`), in hours. */
  staleHours: z.number().positive().default(DEFAULT_CONFIG.idd.staleHours),
  /** Authors whose markers count (case-insensitive). null: every author; []: nobody. */
  trusted: z.array(z.string().min(1)).nullable().default(null),
  /** The caller's own claim-id, to answer `ownership`. */
  claimId: z.string().min(1).nullable().default(null),
  /**
   * The caller's own activation nonce for `claimId`: another winning nonce is `nonce-lost`;
   * giving none while two or more trusted nonces exist is `contested`.
   */
  nonce: z.string().min(1).nullable().default(null),
  forcedHandoff: z
    .object({
      /** Forced handoffs transfer a claim only in `human-gated` mode. */
      mode: z.enum(["disabled", "human-gated"]).default("disabled"),
      /** Logins allowed to force a handoff (case-insensitive); the author must also be `forcedBy`. */
      authorized: z.array(z.string().min(1)).default([]),
      /** The open PR backing the claim, if any: a handoff must then be issue-plus-pr naming it. */
      openPullRequest: positiveInt.nullable().default(null),
    })
    .prefault({}),
});

export type ClaimOptionsInput = z.input<typeof ClaimOptionsSchema>;
export type ClaimOptions = z.output<typeof ClaimOptionsSchema>;

export type ClaimState = "unclaimed" | "active" | "stale";
export type FreshClaimVerdict = "claimable" | "stale-reclaimable" | "already-claimed";
/**
 * `owned`: the claim is the caller's. `contested`: the claim-id is the caller's, but a later
 * trusted competing claim stands, or no nonce was given while two or more trusted nonces exist:
 * stop. `nonce-lost`: the claim-id is the caller's, but another session's nonce won it.
 * `not-owned`: the active claim (if any) has another claim-id.
 */
export type Ownership = "owned" | "contested" | "nonce-lost" | "not-owned";

export type IgnoreReason =
  | "untrusted-author"
  | "already-claimed"
  | "supersedes-mismatch"
  | "supersedes-without-active-claim"
  | "takeover-not-stale"
  | "claim-id-retired"
  | "heartbeat-agent-mismatch"
  | "heartbeat-branch-mismatch"
  | "release-mismatch"
  | "legacy-superseded"
  | "legacy-claim-replaced"
  | "legacy-release-mismatch"
  | "handoff-disabled"
  | "handoff-unauthorized"
  | "handoff-forced-by-mismatch"
  | "handoff-no-active-claim"
  | "handoff-claim-mismatch"
  | "handoff-pr-mismatch";

export type EvidenceOutcome =
  | "fresh-claim"
  | "heartbeat"
  | "takeover"
  | "release"
  | "forced-handoff"
  | "activation-nonce"
  | "legacy-claim"
  | "legacy-release"
  | "ignored";

export interface ClaimEvidence {
  /** Position of the comment in the input list. */
  index: number;
  createdAt: string;
  /** `createdAt` truncated to the second: the time the rules use. */
  at: string;
  author: string;
  marker: CommentMarker["kind"];
  agentId: string;
  claimId: string | null;
  outcome: EvidenceOutcome;
  reason: IgnoreReason | null;
}

export type WarningKind =
  | Exclude<IgnoreReason, "legacy-superseded" | "legacy-claim-replaced">
  | "heartbeat-supersedes-changed"
  | "nonce-contested"
  | "comment-after-now";

export interface ClaimWarning {
  kind: WarningKind;
  /** The comment the warning is about. */
  index: number;
  message: string;
}

export interface ClaimDiagnostic {
  kind: "malformed-marker";
  index: number;
  createdAt: string;
  author: string;
  trusted: boolean;
  marker: CommentMarkerToken;
  reason: string;
}

export interface NonceEntry {
  nonce: string;
  agentId: string;
  index: number;
}

/** A trusted claimed-by that competes with the active claim (IDD's "later competing claim"). */
export interface CompetingClaim {
  agentId: string;
  claimId: string;
  /** The competing comment's position in the input list, and its second. */
  index: number;
  at: string;
}

export interface ActiveClaim {
  agentId: string;
  /** null for a legacy claim (no claim-id). */
  claimId: string | null;
  branch: string;
  /** The claim-id this one took over (or the handoff's displaced claim), else null. */
  supersedes: string | null;
  format: "current" | "legacy";
  via: "fresh-claim" | "takeover" | "forced-handoff" | "legacy-claim";
  /** The comment that made this claim active, and its author. */
  index: number;
  author: string;
  claimedAt: string;
  /** The latest valid claimed-by (or the activation) for this claim: the stale clock. */
  lastHeartbeatAt: string;
  staleAt: string;
  ageSeconds: number;
  /** Trusted activation nonces for this claim-id, earliest nonce first; the first one wins. */
  nonces: NonceEntry[];
  nonceWinner: string | null;
  /**
   * The earliest trusted `claimed-by` with another claim-id in a later second than this claim's
   * first `claimed-by` (or its activation), not released by its own agent and claim-id in a
   * later trusted `unclaimed-by`; null for none and for a legacy claim. Its owner is contested.
   */
  competingClaim: CompetingClaim | null;
}

export interface ReleasedClaim {
  agentId: string;
  claimId: string | null;
  branch: string;
  index: number;
  releasedAt: string;
}

export interface ClaimResolution {
  state: ClaimState;
  freshClaim: FreshClaimVerdict;
  /** Answer for `options.claimId`; null when no claim-id was given. */
  ownership: Ownership | null;
  active: ActiveClaim | null;
  /** The most recent voluntarily released claim (its branch is inheritable). */
  lastReleased: ReleasedClaim | null;
  now: string;
  staleHours: number;
  warnings: ClaimWarning[];
  diagnostics: ClaimDiagnostic[];
  /** Every well-formed marker comment in processing order, with what it did. */
  evidence: ClaimEvidence[];
}

interface MarkerEvent {
  index: number;
  comment: IssueComment;
  second: number;
  marker: CommentMarker;
  trusted: boolean;
  evidence: ClaimEvidence;
}

interface Holder {
  agentId: string;
  claimId: string | null;
  branch: string;
  supersedes: string | null;
  format: "current" | "legacy";
  via: ActiveClaim["via"];
  index: number;
  author: string;
  claimedAt: number;
  lastValidAt: number;
}

const RANK: Record<CommentMarker["kind"], number> = {
  "claimed-by": 0,
  "claimed-by-legacy": 0,
  "forced-handoff": 1,
  "activation-nonce": 2,
  "unclaimed-by": 3,
  "unclaimed-by-legacy": 3,
};

function compareEvents(a: MarkerEvent, b: MarkerEvent): number {
  if (a.second !== b.second) return a.second - b.second;
  const rank = RANK[a.marker.kind] - RANK[b.marker.kind];
  if (rank !== 0) return rank;
  if (a.marker.kind === "claimed-by" && b.marker.kind === "claimed-by") {
    const byId = compareCodeUnits(a.marker.claimId, b.marker.claimId);
    if (byId !== 0) return byId;
  }
  return a.index - b.index;
}

const MESSAGES: Record<WarningKind, string> = {
  "untrusted-author": "marker from an author outside the trusted set; ignored",
  "already-claimed": "claim with `supersedes: none` while another claim is active; ignored",
  "supersedes-mismatch": "takeover names a claim-id other than the active claim; ignored",
  "supersedes-without-active-claim": "takeover of a claim that is not active; ignored",
  "takeover-not-stale": "takeover of an active claim that is not stale yet; ignored",
  "claim-id-retired": "claim-id already superseded or released; ignored",
  "heartbeat-agent-mismatch": "the active claim-id posted by a different agent-id; ignored",
  "heartbeat-branch-mismatch": "heartbeat with a different branch than the active claim; ignored",
  "release-mismatch":
    "release whose agent-id and claim-id do not both match the active claim; ignored",
  "legacy-release-mismatch":
    "legacy release that does not follow the latest legacy claim of the same agent; ignored",
  "handoff-disabled":
    "forced handoff while forced handoffs are disabled (mode is not human-gated); ignored",
  "handoff-unauthorized": "forced handoff by an author not authorized to force handoffs; ignored",
  "handoff-forced-by-mismatch": "forced handoff whose author is not its forcedBy; ignored",
  "handoff-no-active-claim": "forced handoff while no claim is active; ignored",
  "handoff-claim-mismatch":
    "forced handoff whose old agent, claim-id or branch is not the active claim; ignored",
  "handoff-pr-mismatch":
    "forced handoff that does not name the open pull request (issue-plus-pr); ignored",
  "heartbeat-supersedes-changed":
    "heartbeat with a different `supersedes:` than the claim; counted (agent, claim-id and branch match)",
  "nonce-contested": "several activation nonces for the active claim-id; the earliest nonce wins",
  "comment-after-now": "marker comment created after `now`; counted, with its age taken as zero",
};

/**
 * IDD's later competing claim for `holder` (resume routing's `findLaterCompetingClaim`): among
 * trusted, well-formed claims with another claim-id, the earliest in a strictly later second
 * than the holder's first claimed-by, skipping a claim its own agent released later.
 */
function competingClaim(events: MarkerEvent[], holder: Holder): CompetingClaim | null {
  if (holder.claimId === null) return null;
  const claims: Array<{ event: MarkerEvent; marker: ClaimedByMarker }> = [];
  const releases: Array<{ event: MarkerEvent; marker: UnclaimedByMarker }> = [];
  for (const event of events) {
    if (!event.trusted) continue;
    if (event.marker.kind === "claimed-by") claims.push({ event, marker: event.marker });
    if (event.marker.kind === "unclaimed-by") releases.push({ event, marker: event.marker });
  }
  const own = claims.filter((c) => c.marker.claimId === holder.claimId).map((c) => c.event.second);
  const baseline = own.length > 0 ? Math.min(...own) : holder.claimedAt;
  const released = (c: { event: MarkerEvent; marker: ClaimedByMarker }) =>
    releases.some(
      (r) =>
        r.marker.agentId === c.marker.agentId &&
        r.marker.claimId === c.marker.claimId &&
        Date.parse(r.event.comment.createdAt) > Date.parse(c.event.comment.createdAt),
    );
  const first = claims
    .filter((c) => c.marker.claimId !== holder.claimId && c.event.second > baseline)
    .filter((c) => !released(c))
    .sort(
      (a, b) =>
        Date.parse(a.event.comment.createdAt) - Date.parse(b.event.comment.createdAt) ||
        a.event.index - b.event.index,
    )[0];
  if (!first) return null;
  return {
    agentId: first.marker.agentId,
    claimId: first.marker.claimId,
    index: first.event.index,
    at: formatSecond(first.event.second),
  };
}

/**
 * Resolves the claim state of one issue from its comments. Throws a ValidationError naming the
 * first bad field when the comments or options are malformed; never partially applies.
 */
export function resolveClaims(comments: unknown, options: ClaimOptionsInput): ClaimResolution {
  const list = parseCommentList(comments);
  const parsedOptions = ClaimOptionsSchema.safeParse(options);
  if (!parsedOptions.success) throw new ValidationError("claim options", parsedOptions.error);
  const opts = parsedOptions.data;
  const nowSecond = epochSecond(opts.now);
  const staleSeconds = opts.staleHours * 3600;
  const trusted = opts.trusted === null ? null : opts.trusted.map((l) => l.toLowerCase());
  const isTrusted = (login: string) => trusted === null || trusted.includes(login.toLowerCase());
  const authorized = opts.forcedHandoff.authorized.map((l) => l.toLowerCase());

  const warnings: ClaimWarning[] = [];
  const diagnostics: ClaimDiagnostic[] = [];
  const events: MarkerEvent[] = [];
  list.forEach((comment, index) => {
    const read = parseCommentMarker(comment.body);
    if (read.status === "none") return;
    const second = epochSecond(comment.createdAt);
    const trustedAuthor = isTrusted(comment.author.login);
    if (read.status === "malformed") {
      diagnostics.push({
        kind: "malformed-marker",
        index,
        createdAt: comment.createdAt,
        author: comment.author.login,
        trusted: trustedAuthor,
        marker: read.token,
        reason: read.reason,
      });
      return;
    }
    const marker = read.marker;
    const ids =
      marker.kind === "forced-handoff"
        ? { agentId: marker.payload.newAgentId, claimId: marker.payload.newClaimId }
        : { agentId: marker.agentId, claimId: "claimId" in marker ? marker.claimId : null };
    events.push({
      index,
      comment,
      second,
      marker,
      trusted: trustedAuthor,
      evidence: {
        index,
        createdAt: comment.createdAt,
        at: formatSecond(second),
        author: comment.author.login,
        marker: marker.kind,
        ...ids,
        outcome: "ignored",
        reason: null,
      },
    });
  });
  events.sort(compareEvents);

  const warn = (kind: WarningKind, index: number) =>
    warnings.push({ kind, index, message: MESSAGES[kind] });
  const ignore = (event: MarkerEvent, reason: IgnoreReason) => {
    event.evidence.outcome = "ignored";
    event.evidence.reason = reason;
    if (reason !== "legacy-superseded" && reason !== "legacy-claim-replaced") {
      warn(reason, event.index);
    }
  };
  for (const event of events) if (event.second > nowSecond) warn("comment-after-now", event.index);

  const hasCurrentClaim = events.some((e) => e.trusted && e.marker.kind === "claimed-by");
  const retired = new Set<string>();
  const nonces = new Map<string, NonceEntry[]>();
  // `as` keeps the declared type: the loop below assigns both, which narrowing would miss.
  let holder = null as Holder | null;
  let released = null as ReleasedClaim | null;
  const isStaleAt = (h: Holder, second: number) => second - h.lastValidAt >= staleSeconds;
  const legacyClaims: Array<{ event: MarkerEvent; marker: LegacyClaimedByMarker }> = [];
  const legacyReleases: Array<{ event: MarkerEvent; marker: LegacyUnclaimedByMarker }> = [];

  for (const event of events) {
    const { marker, second, index } = event;
    const author = event.comment.author.login;
    if (!event.trusted) {
      ignore(event, "untrusted-author");
      continue;
    }
    switch (marker.kind) {
      case "claimed-by-legacy":
        if (hasCurrentClaim) ignore(event, "legacy-superseded");
        else legacyClaims.push({ event, marker });
        break;
      case "unclaimed-by-legacy":
        if (hasCurrentClaim) ignore(event, "legacy-superseded");
        else legacyReleases.push({ event, marker });
        break;
      case "claimed-by": {
        const active: Holder | null = holder;
        if (active && marker.claimId === active.claimId) {
          if (marker.agentId !== active.agentId) ignore(event, "heartbeat-agent-mismatch");
          else if (marker.branch !== active.branch) ignore(event, "heartbeat-branch-mismatch");
          else {
            active.lastValidAt = Math.max(active.lastValidAt, second);
            event.evidence.outcome = "heartbeat";
            if (active.via !== "forced-handoff" && marker.supersedes !== active.supersedes) {
              warn("heartbeat-supersedes-changed", index);
            }
          }
        } else if (retired.has(marker.claimId)) ignore(event, "claim-id-retired");
        else if (!active) {
          if (marker.supersedes !== null) ignore(event, "supersedes-without-active-claim");
          else {
            holder = {
              agentId: marker.agentId,
              claimId: marker.claimId,
              branch: marker.branch,
              supersedes: null,
              format: "current",
              via: "fresh-claim",
              index,
              author,
              claimedAt: second,
              lastValidAt: second,
            };
            event.evidence.outcome = "fresh-claim";
          }
        } else if (marker.supersedes === null) ignore(event, "already-claimed");
        else if (marker.supersedes !== active.claimId) ignore(event, "supersedes-mismatch");
        else if (!isStaleAt(active, second)) ignore(event, "takeover-not-stale");
        else {
          retired.add(active.claimId!);
          holder = {
            agentId: marker.agentId,
            claimId: marker.claimId,
            branch: marker.branch,
            supersedes: marker.supersedes,
            format: "current",
            via: "takeover",
            index,
            author,
            claimedAt: second,
            lastValidAt: second,
          };
          event.evidence.outcome = "takeover";
        }
        break;
      }
      case "unclaimed-by": {
        const active: Holder | null = holder;
        if (active && active.claimId === marker.claimId && active.agentId === marker.agentId) {
          retired.add(marker.claimId);
          released = {
            agentId: active.agentId,
            claimId: active.claimId,
            branch: active.branch,
            index,
            releasedAt: formatSecond(second),
          };
          holder = null;
          event.evidence.outcome = "release";
        } else ignore(event, "release-mismatch");
        break;
      }
      case "activation-nonce": {
        const entries = nonces.get(marker.claimId) ?? [];
        entries.push({ nonce: marker.nonce, agentId: marker.agentId, index });
        nonces.set(marker.claimId, entries);
        event.evidence.outcome = "activation-nonce";
        break;
      }
      case "forced-handoff": {
        const p = marker.payload;
        const active: Holder | null = holder;
        const openPr = opts.forcedHandoff.openPullRequest;
        // IDD's order (applyClaimEvent rule 7): the displaced claim, the mode and PR gate, the
        // author/forcedBy bind, the authorization; then switchyard's retired-id rule.
        if (!active) ignore(event, "handoff-no-active-claim");
        else if (
          p.oldAgentId !== active.agentId ||
          p.oldClaimId !== active.claimId ||
          p.branch !== active.branch
        ) {
          ignore(event, "handoff-claim-mismatch");
        } else if (opts.forcedHandoff.mode !== "human-gated") ignore(event, "handoff-disabled");
        else if (
          openPr !== null &&
          (p.contextScope !== "issue-plus-pr" ||
            p.linkedPr === null ||
            linkedPrNumber(p.linkedPr) !== openPr)
        ) {
          ignore(event, "handoff-pr-mismatch");
        } else if (!sameLogin(author, p.forcedBy)) ignore(event, "handoff-forced-by-mismatch");
        else if (!authorized.includes(author.toLowerCase())) ignore(event, "handoff-unauthorized");
        else if (retired.has(p.newClaimId)) ignore(event, "claim-id-retired");
        else {
          retired.add(p.oldClaimId);
          holder = {
            agentId: p.newAgentId,
            claimId: p.newClaimId,
            branch: p.branch,
            supersedes: p.oldClaimId,
            format: "current",
            via: "forced-handoff",
            index,
            author,
            claimedAt: second,
            lastValidAt: second,
          };
          event.evidence.outcome = "forced-handoff";
        }
        break;
      }
    }
  }

  // Legacy markers decide only when no trusted new-format claim exists at all.
  const latest = legacyClaims.at(-1);
  for (const { event } of legacyClaims) {
    if (event === latest?.event) event.evidence.outcome = "legacy-claim";
    else ignore(event, "legacy-claim-replaced");
  }
  let legacyReleased = false;
  for (const { event, marker } of legacyReleases) {
    const follows = latest !== undefined && compareEvents(event, latest.event) > 0;
    if (latest && follows && marker.agentId === latest.marker.agentId) {
      event.evidence.outcome = "legacy-release";
      if (!legacyReleased) {
        legacyReleased = true;
        released = {
          agentId: marker.agentId,
          claimId: null,
          branch: latest.marker.branch,
          index: event.index,
          releasedAt: formatSecond(event.second),
        };
      }
    } else ignore(event, "legacy-release-mismatch");
  }
  if (latest && !legacyReleased) {
    holder = {
      agentId: latest.marker.agentId,
      claimId: null,
      branch: latest.marker.branch,
      supersedes: null,
      format: "legacy",
      via: "legacy-claim",
      index: latest.event.index,
      author: latest.event.comment.author.login,
      claimedAt: latest.event.second,
      lastValidAt: latest.event.second,
    };
  }

  const final: Holder | null = holder;
  let active: ActiveClaim | null = null;
  let state: ClaimState = "unclaimed";
  if (final) {
    const claimNonces = (final.claimId === null ? [] : (nonces.get(final.claimId) ?? [])).sort(
      (a, b) => compareCodeUnits(a.nonce, b.nonce) || a.index - b.index,
    );
    if (new Set(claimNonces.map((n) => n.nonce)).size > 1) {
      warn("nonce-contested", claimNonces.at(-1)!.index);
    }
    state = isStaleAt(final, nowSecond) ? "stale" : "active";
    active = {
      agentId: final.agentId,
      claimId: final.claimId,
      branch: final.branch,
      supersedes: final.supersedes,
      format: final.format,
      via: final.via,
      index: final.index,
      author: final.author,
      claimedAt: formatSecond(final.claimedAt),
      lastHeartbeatAt: formatSecond(final.lastValidAt),
      staleAt: formatSecond(final.lastValidAt + Math.ceil(staleSeconds)),
      ageSeconds: Math.max(0, nowSecond - final.lastValidAt),
      nonces: claimNonces,
      nonceWinner: claimNonces[0]?.nonce ?? null,
      competingClaim: competingClaim(events, final),
    };
  }

  let ownership: Ownership | null = null;
  if (opts.claimId !== null) {
    if (!active || active.claimId !== opts.claimId) ownership = "not-owned";
    else if (
      opts.nonce !== null &&
      active.nonceWinner !== null &&
      active.nonceWinner !== opts.nonce
    ) {
      // Checked first: a session whose nonce lost is not the owner, and must not release.
      ownership = "nonce-lost";
    } else if (
      active.competingClaim !== null ||
      (opts.nonce === null && active.nonces.length >= 2)
    ) {
      ownership = "contested";
    } else ownership = "owned";
  }

  warnings.sort((a, b) => a.index - b.index || compareCodeUnits(a.kind, b.kind));
  return {
    state,
    freshClaim:
      state === "unclaimed"
        ? "claimable"
        : state === "stale"
          ? "stale-reclaimable"
          : "already-claimed",
    ownership,
    active,
    lastReleased: released,
    now: opts.now,
    staleHours: opts.staleHours,
    warnings,
    diagnostics,
    evidence: events.map((e) => e.evidence),
  };
}

/** The live holder a Worker must respect (state `active`), with the instant it goes stale. */
export function liveHolder(
  resolution: ClaimResolution,
): { agentId: string; claimId: string | null; branch: string; staleAt: string } | null {
  const a = resolution.active;
  if (resolution.state !== "active" || !a) return null;
  return { agentId: a.agentId, claimId: a.claimId, branch: a.branch, staleAt: a.staleAt };
}
