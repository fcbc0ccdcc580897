import type { CiFact } from "../../../shared/breaker/facts.ts";
import {
  type BreakerInput,
  breakerVerdict,
  type CheckRecord,
  commitState,
  type Failing,
  laterHead,
  latestPerCheck,
  RED_CONCLUSIONS,
  redSince,
  type Verdict,
} from "../../../shared/breaker/verdict.ts";
import { CI_PERMISSIONS, readDefaultBranchCi } from "../../../shared/github/ci.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import type { RepoContext } from "./context.ts";
import type { Delivery, IngestOutcome } from "./ingest.ts";
import type { RepoIdentity, RepoStore } from "./repo-store.ts";
import type { Schedules } from "./schedules-store.ts";

// The circuit breaker in the RepoObject (spec 6.4, config `breaker`): what the default branch's
// CI says, learned from `check_run`, `check_suite`, `status`, `workflow_run` and `push` webhooks
// (the acknowledgement path: `ingestCi`) and re-read by the reconcile (the `ci` schedule), so a
// lost webhook heals; the verdict is shared/breaker/verdict.ts. While red, the queue and the
// grants (queue.ts, claims.ts) hand out only repair work.

/** The pause the queue answers and claim-next announces while the breaker is red. */
export interface Pause {
  since: string;
  sha: string;
  failing: Failing[];
}

/** The breaker as the graph API and the status page show it. */
export interface BreakerView {
  state: "unconfigured" | "off" | "unknown" | "green" | "pending" | "red";
  /** Why it is off (a permission the installation lacks): it does not pause, and says so. */
  reason: string | null;
  defaultBranch: string | null;
  head: { sha: string; since: string } | null;
  paused: Pause | null;
  /** The head's required checks still running. */
  pending: string[];
  /** The head's latest report of each check. */
  checks: Array<Pick<CheckRecord, "source" | "name" | "status" | "conclusion" | "url">>;
  /** When GitHub was last asked (the reconcile's re-read). */
  readAt: string | null;
}

/** When claim-next answers 204 while paused: how long to wait before asking again. */
export const PAUSED_RETRY_AFTER_SECONDS = 60;

export class Breaker {
  private readonly store: RepoStore;
  private readonly schedules: Schedules;

  constructor(store: RepoStore, schedules: Schedules) {
    this.store = store;
    this.schedules = schedules;
  }

  private configured() {
    return this.store.config().breaker;
  }

  /** Applies what a webhook or a re-read says; true when the stored state changed. */
  apply(fact: CiFact, nowMs: number): boolean {
    const ci = this.store.ci;
    const state = ci.state();
    switch (fact.type) {
      case "head": {
        if (state.defaultBranch !== fact.defaultBranch) ci.setDefaultBranch(fact.defaultBranch);
        if (!laterHead(state.head, fact)) return false;
        ci.setHead(fact.sha, fact.atMs);
        return true;
      }
      case "report": {
        // Reports before the head is known: the re-read learns which commit is the head.
        if (state.head === null) this.schedules.ensure("ci", nowMs);
        return ci.report(fact.sha, fact.record, nowMs);
      }
      case "suite": {
        // A suite's conclusion that disagrees with its commit's known check runs: a check run's
        // webhook was lost (or is late); the re-read says which.
        const known = ci.reports(fact.sha).filter((r) => r.source === "check");
        const knownRed = commitState(known, null).state === "red";
        const saysRed = fact.conclusion !== null && RED_CONCLUSIONS.has(fact.conclusion);
        if (knownRed !== saysRed) this.schedules.ensure("ci", nowMs);
        return false;
      }
    }
  }

  /** Permissions the last re-read found missing (none known: empty). */
  private missing(): string[] {
    return (this.store.ci.state().missing ?? []).map((p) => CI_PERMISSIONS[p]);
  }

  private verdict(nowMs: number): Verdict {
    const breaker = this.configured();
    const state = this.store.ci.state();
    if (breaker === null) return { state: "unknown" };
    const input: BreakerInput = {
      breaker,
      head: state.head === null ? null : { sha: state.head.sha, sinceMs: state.head.atMs },
      headChecks: state.head === null ? [] : this.store.ci.reports(state.head.sha),
      previous: state.previousSha === null ? null : { sha: state.previousSha },
      previousChecks: state.previousSha === null ? [] : this.store.ci.reports(state.previousSha),
      nowMs,
    };
    return breakerVerdict(input);
  }

  /**
   * The verdict now, with its turns recorded: red since when (kept while it stays red), an
   * audit entry `breaker` at each turn, and a re-evaluation when a carried red verdict ends.
   */
  evaluate(nowMs: number): { verdict: Verdict; sinceMs: number | null; off: string | null } {
    if (this.configured() === null)
      return { verdict: { state: "unknown" }, sinceMs: null, off: null };
    const missing = this.missing();
    const off =
      missing.length > 0
        ? `the installation lacks ${missing.join(", ")}: the breaker cannot see the default branch's CI and does not pause (grant the permission in the App's settings)`
        : null;
    const verdict: Verdict = off === null ? this.verdict(nowMs) : { state: "unknown" };
    const state = this.store.ci.state();
    const since = redSince(state.redSinceMs, verdict, nowMs);
    const sha = verdict.state === "red" ? verdict.sha : null;
    if (since !== state.redSinceMs || sha !== state.redSha) {
      this.store.ci.setRed(since, sha);
      this.store.audit(
        "breaker",
        verdict.state === "red"
          ? { state: "red", sha, failing: verdict.failing.map((f) => f.name) }
          : { state: off === null ? verdict.state : "off", ...(off ? { reason: off } : {}) },
        nowMs,
      );
    }
    if (verdict.state === "red" && verdict.untilMs !== undefined) {
      this.schedules.ensure("breaker", verdict.untilMs);
    }
    return { verdict, sinceMs: since, off };
  }

  /** The pause while the breaker is red, else null. */
  paused(nowMs: number): Pause | null {
    const { verdict, sinceMs } = this.evaluate(nowMs);
    if (verdict.state !== "red" || sinceMs === null) return null;
    return { since: formatInstant(sinceMs), sha: verdict.sha, failing: verdict.failing };
  }

  view(nowMs: number): BreakerView {
    const state = this.store.ci.state();
    const head =
      state.head === null ? null : { sha: state.head.sha, since: formatInstant(state.head.atMs) };
    const base = {
      defaultBranch: state.defaultBranch,
      head,
      checks:
        state.head === null
          ? []
          : latestPerCheck(this.store.ci.reports(state.head.sha)).map((r) => ({
              source: r.source,
              name: r.name,
              status: r.status,
              conclusion: r.conclusion,
              url: r.url,
            })),
      readAt: state.readMs === null ? null : formatInstant(state.readMs),
    };
    if (this.configured() === null) {
      return { state: "unconfigured", reason: null, paused: null, pending: [], ...base };
    }
    const { verdict, off } = this.evaluate(nowMs);
    if (off !== null) return { state: "off", reason: off, paused: null, pending: [], ...base };
    return {
      state: verdict.state,
      reason: null,
      paused: this.paused(nowMs),
      pending: verdict.state === "pending" ? verdict.pending : [],
      ...base,
    };
  }
}

/**
 * A CI webhook (the acknowledgement path: never a call to GitHub): applied once per delivery
 * id, only for an active repository of this installation whose config turns the breaker on.
 */
export async function ingestCi(
  c: RepoContext,
  delivery: Delivery,
  repo: { id: number; fullName: string; installationId: number },
  fact: CiFact,
): Promise<IngestOutcome> {
  const { store, schedules } = c;
  const outcome = store.transaction((): IngestOutcome => {
    if (store.hasDelivery(delivery.id)) {
      store.count("deliveriesDuplicate");
      return "duplicate";
    }
    const identity = store.identity();
    // Another installation's, an unknown or an inactive repository's CI: the graph's own
    // webhooks and `sync` sort out where the repository belongs; CI waits for that.
    if (identity?.status !== "active" || identity.installationId !== repo.installationId) {
      return "ignored";
    }
    if (store.config().breaker === null) return "ignored";
    store.recordDelivery(delivery.id, delivery.receivedMs);
    store.count("deliveriesApplied");
    const changed = c.breaker.apply(fact, delivery.receivedMs);
    c.breaker.evaluate(delivery.receivedMs);
    return changed ? "applied" : "unchanged";
  });
  await schedules.rearm();
  return outcome;
}

/**
 * The `ci` schedule: the default branch's head and its checks read again (asked for by the
 * reconcile, a config change, or a check suite that disagrees with what webhooks said).
 */
export async function runCiRead(
  c: RepoContext,
  identity: RepoIdentity,
  nowMs: number,
): Promise<void> {
  if (c.store.config().breaker === null) return;
  const read = await readDefaultBranchCi(
    c.client(`read the CI of ${identity.fullName}`),
    identity.fullName,
    c.store.ci.state().defaultBranch,
  );
  c.store.transaction(() => {
    const { breaker, store } = c;
    store.ci.setRead(read.missing, nowMs);
    if (store.ci.state().defaultBranch !== read.defaultBranch) {
      store.ci.setDefaultBranch(read.defaultBranch);
    }
    if (read.head !== null) {
      const head = read.head;
      breaker.apply(
        { type: "head", sha: head, before: null, atMs: nowMs, defaultBranch: read.defaultBranch },
        nowMs,
      );
      for (const record of read.reports)
        breaker.apply({ type: "report", sha: head, record }, nowMs);
    }
    breaker.evaluate(Date.now());
  });
}

/** The `breaker` schedule: a carried red verdict's time is over; the verdict is made again. */
export async function runBreakerReview(c: RepoContext): Promise<void> {
  c.store.transaction(() => c.breaker.evaluate(Date.now()));
}
