import { DurableObject } from "cloudflare:workers";
import type { KeyVerdict } from "../../../shared/auth/keys.ts";
import type { KeySummary } from "../../../shared/auth/schemas.ts";
import type { LiveClaim } from "../../../shared/fleet/schemas.ts";
import { orgImpactIndex } from "../../../shared/org/cross-impact.ts";
import { DEFAULT_CLAIM_KINDS, type ItemKind, takenAs } from "../../../shared/org/head.ts";
import {
  type Candidate,
  fallbackRepos,
  ORG_GRANT_ATTEMPTS,
  type OrgCaller,
  type OrgOrder,
  orgCandidates,
  turnAfter,
} from "../../../shared/org/pick.ts";
import { capabilitySet } from "../../../shared/queue/queue.ts";
import type { Env } from "../../env.ts";
import type { AuditEntry } from "../journal-store.ts";
import type { FleetResult } from "../repo/fleet-api.ts";
import { type HeldHead, type NewOwnerKey, type OwnerKeyMove, OwnerStore } from "./owner-store.ts";

/** Which repositories of the owner a caller's credential reaches (the route proves it). */
export interface OrgScope {
  installationId: number;
  /** Repository ids (switchyard's user token: those GitHub lists with push); null: all of them. */
  repoIds: number[] | null;
}

/** What org queue reads and claim-nexts filter by (validated by the route). */
export interface OrgFilter {
  capabilities?: readonly string[];
  kinds?: readonly ItemKind[];
  order?: OrgOrder;
  /** Repository names (`name` or `owner/name`) to keep to. */
  repos?: readonly string[];
}

export interface OrgClaimRequest extends OrgFilter {
  agentId: string;
  machine?: string;
  ttlSeconds?: number;
}

/**
 * One per installation owner (an organization or a user account, named by its lower-cased
 * login): the org queue (spec 6.2). It holds each repository's pushed queue head (versioned),
 * per-agent turns for `order=fair`, and nothing else per issue. The owner keys (hashes) are held
 * by the instance named for the installation (`ownerKeysObject`: a rename keeps them).
 * claim-next picks from the heads and lets the repository's own object grant (which refuses a
 * stale pick: the next candidate is tried, at most `ORG_GRANT_ATTEMPTS`); it never asks every
 * repository.
 */
export class OwnerObject extends DurableObject<Env> {
  private readonly store: OwnerStore;
  /** The cross-repository index of the held heads (`order=impact`), until a head changes. */
  private crossIndex: { installationId: number; index: ReturnType<typeof orgImpactIndex> } | null =
    null;
  /** What each repository was last told of `crossBlockers` (memory only: told again after a restart). */
  private readonly told = new Map<number, string>();
  /** Items (`repoId#number`) a claim-next is asking their repository for now (memory only). */
  private readonly asking = new Set<string>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new OwnerStore(ctx.storage);
  }

  /**
   * A repository's head (owner-push.ts); a late push changes nothing. An applied one may change
   * what other repositories' issues wait on: the repositories concerned are told (`crossBlockers`).
   */
  async push(head: unknown, nowMs = Date.now()): Promise<"applied" | "late"> {
    const result = this.store.transaction(() => {
      const applied = this.store.push(head, nowMs);
      if (applied?.status === "active") {
        this.store.setMeta("installationId", String(applied.installationId));
        this.store.setMeta("owner", applied.fullName.split("/")[0]!);
      }
      return applied ? "applied" : "late";
    });
    if (result === "applied") {
      this.crossIndex = null;
      await this.tellCrossBlockers();
    }
    return result;
  }

  /**
   * Tells each repository of the current installation whose pushed `crossBlockers` differ from
   * what the held edges say (its items' `via` are computed from them), once per difference. A
   * failed call is retried on the next push; a repository's own push shows whether it was heard.
   */
  private async tellCrossBlockers(): Promise<void> {
    const installationId = Number(this.store.meta("installationId") ?? 0);
    const index = this.crossIndexFor(installationId);
    for (const h of this.store.heads()) {
      if (h.status !== "active" || h.withdrawnMs !== null || h.installationId !== installationId) {
        continue;
      }
      const want = index.crossBlockers(h.fullName);
      const text = want.join(",");
      if ((h.crossBlockers ?? []).join(",") === text) {
        this.told.delete(h.repoId);
        continue;
      }
      if (this.told.get(h.repoId) === text) continue;
      try {
        await this.repo(h.repoId).crossBlockers(want);
        this.told.set(h.repoId, text);
      } catch {
        // Told again on the next push of any repository of the owner.
      }
    }
  }

  /** The cross-repository edges of the installation's active heads, indexed (cached). */
  private crossIndexFor(installationId: number): ReturnType<typeof orgImpactIndex> {
    if (this.crossIndex?.installationId !== installationId) {
      const heads = this.store
        .heads()
        .filter(
          (h) =>
            h.status === "active" && h.withdrawnMs === null && h.installationId === installationId,
        );
      this.crossIndex = { installationId, index: orgImpactIndex(heads) };
    }
    return this.crossIndex.index;
  }

  /**
   * The heads with each item's impact counted across the owner's repositories (every active
   * repository of the installation, whether or not the caller may see it: only the count shows).
   */
  private withOrgImpact(heads: HeldHead[], installationId: number): HeldHead[] {
    if (!this.store.heads().some((h) => (h.crossEdges?.length ?? 0) > 0)) return heads;
    const index = this.crossIndexFor(installationId);
    return heads.map((h) =>
      h.items.some((i) => (i.via?.length ?? 0) > 0)
        ? { ...h, items: h.items.map((i) => ({ ...i, impact: index.impact(h.fullName, i) })) }
        : h,
    );
  }

  /** A removal of these repositories was received: out of the queue at once (fail closed). */
  withdraw(
    repos: ReadonlyArray<{ repoId: number; fullName: string; installationId: number }>,
    nowMs = Date.now(),
  ): void {
    this.store.transaction(() => {
      for (const r of repos) this.store.withdrawUnknown(r, nowMs);
      this.store.withdraw(
        repos.map((r) => r.repoId),
        nowMs,
      );
      this.store.journal.audit("withdrawn", { repos: repos.map((r) => r.fullName) }, nowMs);
    });
    this.crossIndex = null;
  }

  /** GitHub denied the removal, or the repository was added again: back in the queue. */
  restore(repoIds: readonly number[], nowMs = Date.now()): void {
    this.store.transaction(() => {
      this.store.restore(repoIds);
      this.store.journal.audit("restored", { repoIds: [...repoIds] }, nowMs);
    });
    this.crossIndex = null;
  }

  /** The owner's current installation (the latest active push's), or null before any push. */
  /**
   * The owner's current installation. Keys minted before they lived in `ownerKeysObject` are
   * still in this (login-named) object: they are moved first, and `movedKeys` says how many, so
   * a caller whose key was not found where it now lives asks again.
   */
  async installation(): Promise<{
    installationId: number | null;
    owner: string | null;
    movedKeys: number;
  }> {
    const movedKeys = await this.moveLegacyKeys();
    const id = this.store.meta("installationId");
    return {
      installationId: id === undefined ? null : Number(id),
      owner: this.store.meta("owner") ?? null,
      movedKeys,
    };
  }

  /** Whether this instance still holds keys to move (memory only; checked once per start). */
  private legacyKeys: boolean | null = null;

  /**
   * Moves every key this instance holds to its installation's keys object, and deletes it here
   * only once that object holds it (a failed move is tried again on the next call). Only a
   * login-named instance that served key routes before the keys moved holds any.
   */
  private async moveLegacyKeys(): Promise<number> {
    if (this.legacyKeys === false) return 0;
    const rows = this.store.keyRows();
    if (rows.length === 0) {
      this.legacyKeys = false;
      return 0;
    }
    const byInstallation = new Map<number, typeof rows>();
    for (const r of rows) {
      byInstallation.set(r.installation_id, [...(byInstallation.get(r.installation_id) ?? []), r]);
    }
    let moved = 0;
    for (const [installationId, group] of byInstallation) {
      // A keys object holds its own rows for good: nothing to move.
      if (this.env.OWNER.idFromName(keysObjectName(installationId)).equals(this.ctx.id)) continue;
      await ownerKeysObject(this.env, installationId).adoptKeys(group);
      this.store.transaction(() => {
        this.store.deleteKeys(group.map((r) => r.id));
        this.store.journal.audit(
          "keys-moved",
          { installation: installationId, ids: group.map((r) => r.id) },
          Date.now(),
        );
      });
      moved += group.length;
    }
    this.legacyKeys = false;
    return moved;
  }

  /** What the owner holds, for tests and the status page. */
  heads(): HeldHead[] {
    return this.store.heads();
  }

  auditLog(limit = 100): AuditEntry[] {
    return this.store.journal.auditLog(limit);
  }

  turnCount(): number {
    return this.store.turnCount();
  }

  /** The heads a caller may use: active, not withdrawn, of its installation, in its scope. */
  private usable(scope: OrgScope, filter: OrgFilter): HeldHead[] {
    const names = filter.repos?.map((n) => n.toLowerCase());
    const heads = this.store
      .heads()
      .filter(
        (h) =>
          h.status === "active" &&
          h.withdrawnMs === null &&
          h.installationId === scope.installationId &&
          (scope.repoIds === null || scope.repoIds.includes(h.repoId)) &&
          (names === undefined ||
            names.includes(h.fullName.toLowerCase()) ||
            names.includes(h.fullName.split("/")[1]!.toLowerCase())),
      );
    return this.withOrgImpact(heads, scope.installationId);
  }

  private caller(filter: OrgFilter, kindsDefault: readonly ItemKind[]): OrgCaller {
    return {
      capabilities: capabilitySet(filter.capabilities),
      kinds: new Set(filter.kinds ?? kindsDefault),
      repos: null,
    };
  }

  /** `GET /v1/orgs/{owner}/queue`: the pushed items this caller may use, in the order asked. */
  workQueue(
    scope: OrgScope,
    filter: OrgFilter & { limit: number },
    nowMs = Date.now(),
  ): FleetResult {
    const heads = this.usable(scope, filter);
    const order = filter.order ?? "fair";
    const candidates = orgCandidates(
      heads,
      this.caller(filter, ["reply", "kick", "rollup", "ready"]),
      order,
      null,
      nowMs,
    );
    return {
      status: 200,
      body: {
        owner: this.store.meta("owner") ?? null,
        order,
        total: candidates.length,
        items: candidates.slice(0, filter.limit).map(itemOf),
        // Repositories holding more available work than they pushed (their queue shows it all).
        more: heads.filter((h) => h.total > h.items.length).map((h) => h.fullName),
      },
    };
  }

  /** `GET /v1/orgs/{owner}/claims`: the live claims the repositories pushed, each with `repo`. */
  claims(scope: OrgScope, nowMs = Date.now()): FleetResult {
    const claims: Array<LiveClaim & { repo: string }> = [];
    for (const h of this.usable(scope, {})) {
      for (const c of h.claims) {
        if (Date.parse(c.expiresAt) > nowMs) claims.push({ ...c, repo: h.fullName });
      }
    }
    claims.sort((a, b) => a.grantedAt.localeCompare(b.grantedAt) || a.repo.localeCompare(b.repo));
    return { status: 200, body: { claims } };
  }

  /**
   * `POST /v1/orgs/{owner}/claims`: the caller's candidates, asked of their repositories in
   * order until one grants (201 with `repo`); a refusal means the push was stale (or a limit of
   * that repository), so the next is tried, at most `ORG_GRANT_ATTEMPTS`. Then, when a
   * repository holds more than it pushed, at most `ORG_FALLBACK_REPOS` of those are asked for a
   * claim-next of their own. Otherwise 204.
   */
  async claimNext(
    scope: OrgScope,
    request: OrgClaimRequest,
    nowMs = Date.now(),
  ): Promise<FleetResult> {
    const heads = this.usable(scope, request);
    const caller = this.caller(request, DEFAULT_CLAIM_KINDS);
    const turn = this.store.turn(request.agentId);
    const candidates = orgCandidates(heads, caller, request.order ?? "fair", turn, nowMs);
    const grant = {
      agentId: request.agentId,
      ...(request.machine !== undefined ? { machine: request.machine } : {}),
      ...(request.ttlSeconds !== undefined ? { ttlSeconds: request.ttlSeconds } : {}),
      ...(request.capabilities !== undefined ? { capabilities: [...request.capabilities] } : {}),
    };
    const skipped = new Set<number>();
    let asked = 0;
    for (const candidate of candidates) {
      if (asked >= ORG_GRANT_ATTEMPTS) break;
      if (skipped.has(candidate.repoId)) continue;
      // Another claim-next is asking for this item right now: one of them would be refused.
      const asking = `${candidate.repoId}#${candidate.item.number}`;
      if (this.asking.has(asking)) continue;
      asked += 1;
      // Granted for what the pick took it for: its work, or its reply (asked for by `kinds`).
      const kind = takenAs(candidate.item, caller.kinds) ?? "work";
      this.asking.add(asking);
      let result: FleetResult;
      try {
        result = await this.repo(candidate.repoId).orgClaim(
          candidate.item.number,
          { ...grant, kind },
          scope.installationId,
        );
      } finally {
        this.asking.delete(asking);
      }
      if (result.status === 201) {
        // Granted: no longer available, whatever the head says until the repository pushes again.
        this.dropItem(candidate);
        return this.granted(request.agentId, candidate, result);
      }
      // Stale: forget the item until the repository pushes again (it was asked to).
      this.dropItem(candidate);
      // A limit, or the repository is out of the installation: none of its items will do.
      const reason = (result.body as { reason?: string } | undefined)?.reason;
      if (result.status !== 409 || reason === "agent-limit" || reason === "repo-limit") {
        skipped.add(candidate.repoId);
      }
    }
    for (const h of fallbackRepos(heads, caller, turn, nowMs, skipped)) {
      const result = await this.repo(h.repoId).orgClaim(
        null,
        { ...grant, kinds: [...caller.kinds] },
        scope.installationId,
      );
      if (result.status === 201) {
        const issue = (result.body as { issue?: { number: number } }).issue;
        return this.granted(
          request.agentId,
          { repoId: h.repoId, fullName: h.fullName, item: { number: issue?.number ?? 0 } as never },
          result,
        );
      }
    }
    return { status: 204 };
  }

  private granted(agentId: string, candidate: Candidate, result: FleetResult): FleetResult {
    const nowMs = Date.now();
    this.store.transaction(() => this.store.setTurn(turnAfter(agentId, candidate.repoId, nowMs)));
    return { ...result, body: { ...result.body, repo: candidate.fullName } };
  }

  private dropItem(candidate: Candidate): void {
    const head = this.store.head(candidate.repoId);
    if (!head) return;
    const at = head.items.findIndex((i) => i.number === candidate.item.number);
    if (at >= 0) head.items.splice(at, 1);
  }

  private repo(repoId: number) {
    return this.env.REPO.get(this.env.REPO.idFromName(String(repoId)));
  }

  // --- owner keys: only hashes reach this object (the route mints and shows a key once) ---

  createKey(key: NewOwnerKey): KeySummary {
    return this.store.transaction(() => {
      const created = this.store.createKey(key);
      this.store.journal.audit(
        "key-created",
        { id: key.id, name: key.name, by: key.createdBy, installation: key.installationId },
        key.createdMs,
      );
      return created;
    });
  }

  listKeys(): KeySummary[] {
    return this.store.listKeys();
  }

  revokeKey(id: string, by: string, nowMs = Date.now()): boolean {
    return this.store.transaction(() => {
      const revoked = this.store.revokeKey(id, nowMs);
      if (revoked) this.store.journal.audit("key-revoked", { id, by }, nowMs);
      return revoked;
    });
  }

  verifyKey(hash: string, installationId: number, nowMs = Date.now()): KeyVerdict {
    return this.store.verifyKey(hash, installationId, nowMs);
  }

  /** Keys moved here from the login-named object that held them before (`moveLegacyKeys`). */
  adoptKeys(rows: OwnerKeyMove[]): void {
    this.store.transaction(() => this.store.adoptKeys(rows));
  }
}

function itemOf(c: Candidate) {
  const { number, title, url, reason, kind, reply, requires, impact, priority, attempts } = c.item;
  return {
    repo: c.fullName,
    number,
    title,
    url,
    reason,
    kind,
    // The unanswered input it carries, as the repository's queue shows it.
    ...(reply != null ? { reply } : {}),
    requires,
    impact,
    priority,
    attempts,
  };
}

/** The owner's object, named by the lower-cased login (GitHub logins are case-insensitive). */
export function ownerObject(env: Env, owner: string) {
  return env.OWNER.get(env.OWNER.idFromName(owner.toLowerCase()));
}

/**
 * Where an installation's owner keys live: an object of the same class named by the
 * installation id, which an organization's rename does not change (the owner's object above is
 * named by the login, and a renamed owner's repositories push to the new name's object). Owner
 * keys belong to one installation anyway (`syk_o<installationId>_...`). Only its key methods are
 * used; a login never contains `:`, so the names cannot meet.
 */
export function ownerKeysObject(env: Env, installationId: number) {
  return env.OWNER.get(env.OWNER.idFromName(keysObjectName(installationId)));
}

function keysObjectName(installationId: number): string {
  return `installation:${installationId}`;
}
