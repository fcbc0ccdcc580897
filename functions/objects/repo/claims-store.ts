import { nextFence } from "../../../shared/claims/fence.ts";
import type { ClaimKind } from "../../../shared/claims/policy.ts";
import type { Attempt, ClaimOutcome, ClaimView } from "../../../shared/claims/rules.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import {
  AUTHOR_TRUST_TTL_MS,
  CLAIM_HISTORY_PER_ISSUE,
  type RetentionCutoffs,
} from "../../../shared/schedule/retention.ts";
import type { Sql } from "../sql.ts";

/** A claim row as stored (`marker`: where its IDD mirror stands). */
export interface ClaimRow extends ClaimView {
  machine: string | null;
  branch: string;
  ttlMs: number;
  grantedMs: number;
  outcome: ClaimOutcome | null;
  note: string | null;
  /** `none`: nothing posted yet; `posted`: claimed-by posted; `released`: unclaimed-by posted; `skip`: never. */
  marker: "none" | "posted" | "released" | "skip" | "repost";
  /** What the claim was granted for: the issue's work or answering a person's input. */
  kind: ClaimKind;
  /** The unanswered input the claim was granted with (its page and time), if any. */
  reply: { url: string; at: string } | null;
}

/** Per-issue fleet state (the `issue_fleet` row; defaults when there is none). */
export interface IssueFleet {
  number: number;
  resetFence: number;
  stuck: boolean;
  stuckLabeled: boolean;
  stuckCommented: boolean;
  /** When switchyard's stuck label went on (GitHub accepted the write). */
  stuckMs: number | null;
  doneSuppressed: boolean;
  removeReady: boolean;
  /** The ready label goes back on (the dead letter was lifted by hand). */
  addReady: boolean;
  processing: boolean;
  processingMs: number | null;
}

type Row = {
  claim_id: string;
  number: number;
  agent_id: string;
  machine: string | null;
  fence: number;
  branch: string;
  ttl_ms: number;
  granted_ms: number;
  expires_ms: number;
  ended_ms: number | null;
  outcome: string | null;
  note: string | null;
  marker: string;
  kind: string;
  reply_url: string | null;
  reply_at: string | null;
};

const claim = (r: Row): ClaimRow => ({
  claimId: r.claim_id,
  number: r.number,
  agentId: r.agent_id,
  machine: r.machine,
  fence: r.fence,
  branch: r.branch,
  ttlMs: r.ttl_ms,
  grantedMs: r.granted_ms,
  expiresMs: r.expires_ms,
  endedMs: r.ended_ms,
  outcome: r.outcome as ClaimOutcome | null,
  note: r.note,
  marker: r.marker as ClaimRow["marker"],
  kind: r.kind === "reply" ? "reply" : "work",
  reply: r.reply_url !== null && r.reply_at !== null ? { url: r.reply_url, at: r.reply_at } : null,
});

type FleetRow = {
  number: number;
  reset_fence: number;
  stuck: number;
  stuck_labeled: number;
  stuck_commented: number;
  stuck_ms: number | null;
  done_suppressed: number;
  remove_ready: number;
  add_ready: number;
  processing: number;
  processing_ms: number | null;
};

const fleet = (r: FleetRow): IssueFleet => ({
  number: r.number,
  resetFence: r.reset_fence,
  stuck: r.stuck === 1,
  stuckLabeled: r.stuck_labeled === 1,
  stuckCommented: r.stuck_commented === 1,
  stuckMs: r.stuck_ms,
  doneSuppressed: r.done_suppressed === 1,
  removeReady: r.remove_ready === 1,
  addReady: r.add_ready === 1,
  processing: r.processing === 1,
  processingMs: r.processing_ms,
});

const FLEET_COLUMNS = {
  stuck: "stuck",
  stuckLabeled: "stuck_labeled",
  stuckCommented: "stuck_commented",
  doneSuppressed: "done_suppressed",
  removeReady: "remove_ready",
  addReady: "add_ready",
  processing: "processing",
} as const;

/**
 * The fleet tables (fence, claims, issue_fleet, idempotency, author_trust): the only code that runs SQL on
 * them. Decisions live in shared/claims; this module reads and writes rows.
 */
export class ClaimsStore {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  // --- the fencing counter ------------------------------------------------------------------

  /**
   * The next fence: the counter only grows (kept by `wipe`, so it survives an uninstall), and
   * never below the time floor of shared/claims/fence.ts, so a restore cannot lower it.
   */
  nextFence(nowMs: number = Date.now()): number {
    const fence = nextFence(this.currentFence(), nowMs);
    this.sql`INSERT INTO fence (id, value) VALUES (0, ${fence})
      ON CONFLICT (id) DO UPDATE SET value = excluded.value`;
    return fence;
  }

  currentFence(): number {
    return this.sql<{ value: number }>`SELECT value FROM fence WHERE id = 0`[0]?.value ?? 0;
  }

  // --- claims -------------------------------------------------------------------------------

  insert(
    c: Omit<ClaimRow, "endedMs" | "outcome" | "note" | "marker" | "kind" | "reply"> &
      Partial<Pick<ClaimRow, "kind" | "reply">>,
  ): void {
    this
      .sql`INSERT INTO claims (claim_id, number, agent_id, machine, fence, branch, ttl_ms, granted_ms, expires_ms,
        kind, reply_url, reply_at)
      VALUES (${c.claimId}, ${c.number}, ${c.agentId}, ${c.machine}, ${c.fence}, ${c.branch}, ${c.ttlMs},
              ${c.grantedMs}, ${c.expiresMs}, ${c.kind ?? "work"}, ${c.reply?.url ?? null},
              ${c.reply?.at ?? null})`;
  }

  get(claimId: string): ClaimRow | undefined {
    const row = this.sql<Row>`SELECT * FROM claims WHERE claim_id = ${claimId}`[0];
    return row ? claim(row) : undefined;
  }

  /** Claims not ended yet, including those past their expiry that the alarm has not ended. */
  open(): ClaimRow[] {
    return this.sql<Row>`SELECT * FROM claims WHERE ended_ms IS NULL ORDER BY fence`.map(claim);
  }

  /** The issue's live claim (not ended, not expired at `nowMs`). */
  liveOn(number: number, nowMs: number): ClaimRow | undefined {
    const row = this.sql<Row>`SELECT * FROM claims
      WHERE number = ${number} AND ended_ms IS NULL AND expires_ms > ${nowMs}
      ORDER BY fence DESC LIMIT 1`[0];
    return row ? claim(row) : undefined;
  }

  live(nowMs: number): ClaimRow[] {
    return this.sql<Row>`SELECT * FROM claims WHERE ended_ms IS NULL AND expires_ms > ${nowMs}
      ORDER BY fence`.map(claim);
  }

  /** Claims that ended at or after `sinceMs`, newest first, at most `limit` (status figures). */
  endedSince(
    sinceMs: number,
    limit: number,
  ): Array<{ grantedMs: number; endedMs: number; outcome: string }> {
    return this.sql<{ granted_ms: number; ended_ms: number; outcome: string }>`
      SELECT granted_ms, ended_ms, outcome FROM claims
      WHERE ended_ms IS NOT NULL AND ended_ms >= ${sinceMs}
      ORDER BY ended_ms DESC LIMIT ${limit}`.map((r) => ({
      grantedMs: r.granted_ms,
      endedMs: r.ended_ms,
      outcome: r.outcome,
    }));
  }

  liveCount(nowMs: number, agentId?: string): number {
    const rows =
      agentId === undefined
        ? this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM claims
            WHERE ended_ms IS NULL AND expires_ms > ${nowMs}`
        : this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM claims
            WHERE ended_ms IS NULL AND expires_ms > ${nowMs} AND agent_id = ${agentId}`;
    return rows[0]?.n ?? 0;
  }

  /** Claims past their expiry that nothing has ended yet. */
  expiredOpen(nowMs: number): ClaimRow[] {
    return this.sql<Row>`SELECT * FROM claims WHERE ended_ms IS NULL AND expires_ms <= ${nowMs}
      ORDER BY fence`.map(claim);
  }

  /** When the next live claim expires (for the alarm), or null. */
  nextExpiryMs(): number | null {
    return (
      this.sql<{ due: number | null }>`SELECT MIN(expires_ms) AS due FROM claims
        WHERE ended_ms IS NULL`[0]?.due ?? null
    );
  }

  extend(claimId: string, expiresMs: number): void {
    this.sql`UPDATE claims SET expires_ms = ${expiresMs} WHERE claim_id = ${claimId}`;
  }

  end(claimId: string, endedMs: number, outcome: ClaimOutcome, note: string | null): void {
    const number = this.sql<{ number: number }>`
      UPDATE claims SET ended_ms = ${endedMs}, outcome = ${outcome}, note = ${note}
      WHERE claim_id = ${claimId} AND ended_ms IS NULL RETURNING number`[0]?.number;
    if (number !== undefined) this.trimHistory(number);
  }

  /**
   * Keeps the issue's latest CLAIM_HISTORY_PER_ISSUE ended claims. Beyond them go only rows
   * nothing needs: not a failed claim still counting as an attempt (the dead letter counts
   * those), not one whose IDD `claimed-by` was posted and awaits its `unclaimed-by`. An ended
   * claim never posted needs nothing (a grant and release between two flushes posts nothing).
   */
  private trimHistory(number: number): void {
    this.sql`DELETE FROM claims WHERE number = ${number} AND ended_ms IS NOT NULL
      AND marker NOT IN ('posted', 'repost')
      AND NOT (outcome NOT IN ('done', 'preempted', 'mirror-failed')
        AND fence > COALESCE((SELECT f.reset_fence FROM issue_fleet f WHERE f.number = ${number}), 0))
      AND fence <= (SELECT fence FROM claims WHERE number = ${number} AND ended_ms IS NOT NULL
        ORDER BY fence DESC LIMIT 1 OFFSET ${CLAIM_HISTORY_PER_ISSUE})`;
  }

  /** When to re-read the claim's issue for an earlier IDD claim (null: nothing to verify). */
  setVerify(claimId: string, atMs: number | null): void {
    this.sql`UPDATE claims SET verify_ms = ${atMs} WHERE claim_id = ${claimId}`;
  }

  /** Claims not ended whose verification is due at `nowMs`. */
  verifyDue(nowMs: number): ClaimRow[] {
    return this.sql<Row>`SELECT * FROM claims WHERE ended_ms IS NULL
      AND verify_ms IS NOT NULL AND verify_ms <= ${nowMs} ORDER BY fence`.map(claim);
  }

  /** The next verification due (for the alarm), or null. */
  nextVerifyMs(): number | null {
    return (
      this.sql<{ due: number | null }>`SELECT MIN(verify_ms) AS due FROM claims
        WHERE ended_ms IS NULL AND verify_ms IS NOT NULL`[0]?.due ?? null
    );
  }

  setMarker(claimId: string, marker: ClaimRow["marker"]): void {
    this.sql`UPDATE claims SET marker = ${marker} WHERE claim_id = ${claimId}`;
  }

  /** Claims whose IDD mirror is behind: live and unposted, or ended with a claimed-by posted. */
  markersDue(): ClaimRow[] {
    return this.sql<Row>`SELECT * FROM claims
      WHERE marker IN ('none', 'repost') OR (marker = 'posted' AND ended_ms IS NOT NULL)
      ORDER BY fence`.map(claim);
  }

  /** Marker-less ended claims never need a marker: a grant and release between two flushes. */
  skipUnpostedEnded(): void {
    this.sql`UPDATE claims SET marker = 'skip' WHERE marker = 'none' AND ended_ms IS NOT NULL`;
  }

  hasClaimId(claimId: string): boolean {
    return this.sql`SELECT 1 FROM claims WHERE claim_id = ${claimId}`.length > 0;
  }

  /** Failed attempts (ended without `done`) of an issue since its last reset, oldest first. */
  attempts(number: number, afterFence: number): Attempt[] {
    return this.sql<{ agent_id: string; outcome: string; note: string | null; ended_ms: number }>`
      SELECT agent_id, outcome, note, ended_ms FROM claims
      WHERE number = ${number} AND fence > ${afterFence} AND outcome IS NOT NULL AND outcome NOT IN ('done', 'preempted', 'mirror-failed')
        AND kind = 'work'
      ORDER BY fence`.map((r) => ({
      agentId: r.agent_id,
      outcome: r.outcome as ClaimOutcome,
      note: r.note,
      at: formatInstant(r.ended_ms),
    }));
  }

  /** Failed-attempt counts per issue since each issue's reset (issues with none are absent). */
  attemptCounts(): Map<number, number> {
    const out = new Map<number, number>();
    for (const r of this.sql<{ number: number; n: number }>`
      SELECT c.number AS number, COUNT(*) AS n FROM claims c
      LEFT JOIN issue_fleet f ON f.number = c.number
      WHERE c.outcome IS NOT NULL AND c.outcome NOT IN ('done', 'preempted', 'mirror-failed') AND c.fence > COALESCE(f.reset_fence, 0)
        AND c.kind = 'work'
      GROUP BY c.number`) {
      out.set(r.number, r.n);
    }
    return out;
  }

  // --- per-issue fleet state ----------------------------------------------------------------

  fleet(number: number): IssueFleet {
    const row = this.sql<FleetRow>`SELECT * FROM issue_fleet WHERE number = ${number}`[0];
    return row
      ? fleet(row)
      : {
          number,
          resetFence: 0,
          stuck: false,
          stuckLabeled: false,
          stuckCommented: false,
          stuckMs: null,
          doneSuppressed: false,
          removeReady: false,
          addReady: false,
          processing: false,
          processingMs: null,
        };
  }

  /** Issues with any fleet state worth reading (stuck, suppressed, owed writes, our label). */
  /** How many issues are dead letters (the org status page's figure, without reading them). */
  stuckCount(): number {
    return (
      this.sql<{ n: number }>`SELECT COUNT(*) AS n FROM issue_fleet WHERE stuck = 1`[0]?.n ?? 0
    );
  }

  fleetRows(): IssueFleet[] {
    return this.sql<FleetRow>`SELECT * FROM issue_fleet
      WHERE stuck = 1 OR done_suppressed = 1 OR remove_ready = 1 OR add_ready = 1 OR processing = 1
      ORDER BY number`.map(fleet);
  }

  setFlag(number: number, flag: keyof typeof FLEET_COLUMNS, value: boolean): void {
    const v = value ? 1 : 0;
    // Column names come from the fixed map above, never from input.
    switch (FLEET_COLUMNS[flag]) {
      case "stuck":
        this.sql`INSERT INTO issue_fleet (number, stuck) VALUES (${number}, ${v})
          ON CONFLICT (number) DO UPDATE SET stuck = excluded.stuck`;
        return;
      case "stuck_labeled":
        this.sql`INSERT INTO issue_fleet (number, stuck_labeled) VALUES (${number}, ${v})
          ON CONFLICT (number) DO UPDATE SET stuck_labeled = excluded.stuck_labeled`;
        return;
      case "stuck_commented":
        this.sql`INSERT INTO issue_fleet (number, stuck_commented) VALUES (${number}, ${v})
          ON CONFLICT (number) DO UPDATE SET stuck_commented = excluded.stuck_commented`;
        return;
      case "done_suppressed":
        this.sql`INSERT INTO issue_fleet (number, done_suppressed) VALUES (${number}, ${v})
          ON CONFLICT (number) DO UPDATE SET done_suppressed = excluded.done_suppressed`;
        return;
      case "remove_ready":
        this.sql`INSERT INTO issue_fleet (number, remove_ready) VALUES (${number}, ${v})
          ON CONFLICT (number) DO UPDATE SET remove_ready = excluded.remove_ready`;
        return;
      case "add_ready":
        this.sql`INSERT INTO issue_fleet (number, add_ready) VALUES (${number}, ${v})
          ON CONFLICT (number) DO UPDATE SET add_ready = excluded.add_ready`;
        return;
      case "processing":
        this.sql`INSERT INTO issue_fleet (number, processing) VALUES (${number}, ${v})
          ON CONFLICT (number) DO UPDATE SET processing = excluded.processing`;
        return;
    }
  }

  setStuckMs(number: number, atMs: number): void {
    this.sql`INSERT INTO issue_fleet (number, stuck_ms) VALUES (${number}, ${atMs})
      ON CONFLICT (number) DO UPDATE SET stuck_ms = excluded.stuck_ms`;
  }

  setProcessingMs(number: number, atMs: number | null): void {
    this.sql`INSERT INTO issue_fleet (number, processing_ms) VALUES (${number}, ${atMs})
      ON CONFLICT (number) DO UPDATE SET processing_ms = excluded.processing_ms`;
  }

  /** A human took the stuck label off: attempts count again from now, the issue is back. */
  resetAttempts(number: number): void {
    const fence = this.currentFence();
    this.sql`INSERT INTO issue_fleet (number, reset_fence) VALUES (${number}, ${fence})
      ON CONFLICT (number) DO UPDATE SET reset_fence = excluded.reset_fence, stuck = 0,
        stuck_labeled = 0, stuck_commented = 0, stuck_ms = NULL, remove_ready = 0, add_ready = 1`;
  }

  // --- marker authors' write access (author_trust) -----------------------------------------

  /** What GitHub said of a login's write access, if asked within the last day. */
  trust(login: string, nowMs = Date.now()): boolean | undefined {
    const row = this.sql<{ trusted: number; checked_ms: number }>`
      SELECT trusted, checked_ms FROM author_trust WHERE login = ${login.toLowerCase()}`[0];
    if (!row || row.checked_ms < nowMs - AUTHOR_TRUST_TTL_MS) return undefined;
    return row.trusted === 1;
  }

  /**
   * `trust` read once per login for as long as the returned function is kept (a view, a read of
   * pages), however many comments a login wrote: each statement costs native memory under workerd.
   */
  trustReader(nowMs = Date.now()): (login: string) => boolean | undefined {
    const known = new Map<string, boolean | undefined>();
    return (login) => {
      const key = login.toLowerCase();
      if (!known.has(key)) known.set(key, this.trust(key, nowMs));
      return known.get(key);
    };
  }

  setTrust(login: string, trusted: boolean, nowMs: number): void {
    this.sql`INSERT INTO author_trust (login, trusted, checked_ms)
      VALUES (${login.toLowerCase()}, ${trusted ? 1 : 0}, ${nowMs})
      ON CONFLICT (login) DO UPDATE SET trusted = excluded.trusted, checked_ms = excluded.checked_ms`;
  }

  // --- idempotent sub-issue creation --------------------------------------------------------

  idempotent(key: string):
    | {
        claimId: string;
        number: number | null;
        linked: boolean;
        /** When the latest attempt with this key started. */
        createdMs: number;
        /** When the key was first used: a lost create happened after this. */
        firstMs: number;
        /** `unknown`: an attempt's create lost its answer (the issue may exist). */
        outcome: "unknown" | null;
      }
    | undefined {
    const row = this.sql<{
      claim_id: string;
      number: number | null;
      linked: number;
      created_ms: number;
      first_ms: number | null;
      outcome: string | null;
    }>`SELECT claim_id, number, linked, created_ms, first_ms, outcome FROM idempotency
      WHERE key = ${key}`[0];
    return row
      ? {
          claimId: row.claim_id,
          number: row.number,
          linked: row.linked === 1,
          createdMs: row.created_ms,
          firstMs: row.first_ms ?? row.created_ms,
          outcome: row.outcome === "unknown" ? "unknown" : null,
        }
      : undefined;
  }

  /** The create of the key's attempt lost its answer: kept, so the retry looks the issue up. */
  idempotentUnknown(key: string): void {
    this.sql`UPDATE idempotency SET outcome = 'unknown' WHERE key = ${key} AND number IS NULL`;
  }

  /** A new attempt with a key whose earlier one ended unknown (or never finished). */
  retryIdempotent(key: string, claimId: string, nowMs: number): void {
    this.sql`UPDATE idempotency SET outcome = NULL, created_ms = ${nowMs}, claim_id = ${claimId}
      WHERE key = ${key}`;
  }

  /** A request that never opened its issue gives its key back. */
  forgetIdempotent(key: string): void {
    this.sql`DELETE FROM idempotency WHERE key = ${key} AND number IS NULL`;
  }

  recordIdempotent(
    key: string,
    claimId: string,
    number: number | null,
    linked: boolean,
    nowMs: number,
  ): void {
    this.sql`INSERT INTO idempotency (key, claim_id, number, linked, created_ms, first_ms)
      VALUES (${key}, ${claimId}, ${number}, ${linked ? 1 : 0}, ${nowMs}, ${nowMs})
      ON CONFLICT (key) DO UPDATE SET number = excluded.number, linked = excluded.linked,
        outcome = NULL`;
  }

  /**
   * The daily prune (bounds in docs/worker.md): idempotency keys after a week, author-trust
   * answers after a day, ended claims after 30 days once their IDD marker is settled, except a
   * failed claim that still counts as an attempt of its issue (after its `reset_fence`: at most
   * `claims.maxAttempts` per issue, kept until a reset, because the dead letter counts them),
   * then `issue_fleet` rows with nothing set and no claim left for their `reset_fence` to hide.
   */
  prune(cutoffs: RetentionCutoffs): void {
    this.sql`DELETE FROM idempotency WHERE created_ms < ${cutoffs.idempotencyMs}`;
    this.sql`DELETE FROM author_trust WHERE checked_ms < ${cutoffs.authorTrustMs}`;
    this.sql`DELETE FROM claims WHERE ended_ms IS NOT NULL AND ended_ms < ${cutoffs.claimsMs}
      AND marker IN ('released', 'skip')
      AND NOT (outcome IS NOT NULL AND outcome NOT IN ('done', 'preempted', 'mirror-failed')
        AND fence > COALESCE((SELECT f.reset_fence FROM issue_fleet f WHERE f.number = claims.number), 0))`;
    this.sql`DELETE FROM issue_fleet WHERE stuck = 0 AND stuck_labeled = 0 AND stuck_commented = 0
      AND stuck_ms IS NULL AND done_suppressed = 0 AND remove_ready = 0 AND add_ready = 0
      AND processing = 0 AND processing_ms IS NULL
      AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.number = issue_fleet.number
        AND c.fence <= issue_fleet.reset_fence)`;
  }

  /** Uninstalled: forget claims and fleet state, keep the fencing counter. */
  wipe(): void {
    this.sql`DELETE FROM claims`;
    this.sql`DELETE FROM issue_fleet`;
    this.sql`DELETE FROM idempotency`;
    this.sql`DELETE FROM author_trust`;
  }
}
