import type { BudgetDecision } from "../../../shared/budget/write-budget.ts";
import { bodyWithMarker, subIssueMarker } from "../../../shared/claims/sub-issue-marker.ts";
import {
  WRITE_SETTLE_MARGIN_MS,
  type WriteEnd,
  withWriteMarker,
} from "../../../shared/claims/write-records.ts";
import { fencedWriteProblem } from "../../../shared/claims/writes.ts";
import type { GitHubClient } from "../../../shared/github/client.ts";
import { GitHubApiError, RepositoryMismatchError } from "../../../shared/github/errors.ts";
import {
  addLabels,
  addSubIssue,
  closeIssue,
  createComment,
  createIssue,
  findIssueWithMarker,
  removeLabel,
} from "../../../shared/github/writes.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import type { Claims } from "./claims.ts";
import type { FenceRequest, FleetResult } from "./fleet-api.ts";
import type { QueueViews } from "./queue.ts";
import type { RepoStore } from "./repo-store.ts";

/** The GitHub writes a claim holder may ask switchyard to make (spec 6.4, fenced writes). */
export type FencedOp =
  | { kind: "comment"; body: string }
  | { kind: "labels"; add: string[]; remove: string[] }
  | { kind: "close"; reason: "completed" | "not_planned" }
  | { kind: "sub-issue"; title: string; body?: string; idempotencyKey?: string };

interface Call {
  number: number;
  request: FenceRequest;
  op: FencedOp;
  /**
   * The repository's current name, read right before the writes (after the budget wait: a
   * rename may land during it), together with `client`, which addresses that name by id.
   */
  fullName: () => string;
  client: () => GitHubClient;
  installation: { reserveWrites(n: number): Promise<BudgetDecision> | BudgetDecision };
  /** The clock fences are judged by (tests pass a virtual one). */
  now: () => number;
  /** The settle margin (default `WRITE_SETTLE_MARGIN_MS`; `FENCED_WRITE_MARGIN_MS`). */
  marginMs?: number;
  /** Points the object's alarm at its schedules (the record's close is one). */
  rearm?: () => Promise<void>;
}

/** A lost create is looked for among issues updated since its key's first use, less this. */
const LOOKUP_SKEW_MS = 5 * 60_000;

/** How long a sub-issue request with an idempotency key may be in flight before a retry redoes it. */
const IN_FLIGHT_MS = 120_000;

const cost = (op: FencedOp): number =>
  op.kind === "labels"
    ? (op.add.length > 0 ? 1 : 0) + op.remove.length
    : op.kind === "sub-issue"
      ? 2
      : 1;

type Idempotency =
  | { kind: "none" }
  | { kind: "fresh"; key: string }
  /** An earlier attempt's create lost its answer (or never finished): look before creating. */
  | { kind: "lookup"; key: string; sinceMs: number }
  | { kind: "opened"; key: string; number: number }
  | { kind: "done"; number: number }
  | { kind: "in-flight" };

/**
 * Takes a sub-issue request's idempotency key (per parent issue) synchronously, before any
 * await, so a retry racing the first request finds it and never opens a second issue.
 */
function takeKey(store: RepoStore, call: Call): Idempotency {
  const { op, number } = call;
  if (op.kind !== "sub-issue" || op.idempotencyKey === undefined) return { kind: "none" };
  const key = `${number}:${op.idempotencyKey}`;
  const nowMs = call.now();
  return store.transaction((): Idempotency => {
    const row = store.claims.idempotent(key);
    if (row?.linked && row.number !== null) return { kind: "done", number: row.number };
    if (row?.number != null) return { kind: "opened", key, number: row.number };
    if (row !== undefined) {
      if (row.outcome !== "unknown" && nowMs - row.createdMs <= IN_FLIGHT_MS) {
        return { kind: "in-flight" };
      }
      // The earlier attempt may have opened the issue (its answer was lost, or it never
      // finished): this one looks for it before opening another.
      store.claims.retryIdempotent(key, call.request.claimId, nowMs);
      return { kind: "lookup", key, sinceMs: row.firstMs };
    }
    store.claims.recordIdempotent(key, call.request.claimId, null, false, nowMs);
    return { kind: "fresh", key };
  });
}

/**
 * Checks the fence, reserves the installation's write budget, checks the fence again right
 * before calling GitHub, then writes with the App's token. A stale fence writes nothing.
 */
export async function fencedWrite(
  claims: Claims,
  views: QueueViews,
  store: RepoStore,
  call: Call,
): Promise<FleetResult> {
  const { number, request, op } = call;
  if (!claims.current(number, request, call.now())) return claims.stale(request);
  const problem = fencedWriteProblem(op, {
    labels: store.config().labels,
    issueLabels: store.issueLabels(number) ?? [],
  });
  if (problem) return { status: problem.status, body: problem.body };

  const idem = takeKey(store, call);
  if (idem.kind === "done") {
    return {
      status: 201,
      body: { number: idem.number, url: views.issueUrl(idem.number), created: false },
    };
  }
  if (idem.kind === "in-flight") {
    return {
      status: 409,
      body: {
        error: "conflict",
        reason: "in-progress",
        message: "a request with this idempotency key is still being carried out; retry shortly",
      },
    };
  }
  // Gives an unused key back when the request stops before opening its issue; a key whose
  // earlier create is unknown stays unknown.
  const release = <T>(result: T): T => {
    if (idem.kind === "fresh") store.transaction(() => store.claims.forgetIdempotent(idem.key));
    if (idem.kind === "lookup") store.transaction(() => store.claims.idempotentUnknown(idem.key));
    return result;
  };
  // Set while the create is sent: a failure then may have opened the issue all the same.
  let creating = false;

  const needed = idem.kind === "opened" ? 1 : cost(op);
  if (needed > 0) {
    const budget = await call.installation.reserveWrites(needed);
    if (budget.granted < needed) {
      const seconds = Math.max(
        1,
        Math.ceil(((budget.retryAtMs ?? Date.now() + 60_000) - Date.now()) / 1000),
      );
      return release({
        status: 429,
        body: {
          error: "rate-limited",
          message: `the installation's GitHub write budget is spent; retry in ${seconds} s`,
        },
        headers: { "retry-after": String(seconds) },
      });
    }
  }
  // The budget wait let other requests in: the claim must still be the live one. The write is
  // recorded in the same transaction as that check, with its deadline; until the record closes
  // the issue is granted to nobody (shared/claims/write-records.ts).
  const marginMs = call.marginMs ?? WRITE_SETTLE_MARGIN_MS;
  const record = claims.openWrite(number, request, op.kind, call.now(), marginMs);
  if (record === null) return release(claims.stale(request));
  await call.rearm?.();
  // Every request of the write keeps the deadline: waits that would pass it are not started,
  // a request in flight at it is aborted. (`now` may be a virtual clock: the deadline is
  // carried over to the client's real one as the time left.)
  const leftMs = Math.max(0, record.deadlineMs - call.now());
  const abort = new AbortController();
  // Cleared when the write ends: a pending timer would keep the object from going idle.
  const timer = setTimeout(() => abort.abort(), leftMs);
  const deadline = { atMs: Date.now() + leftMs, signal: abort.signal };
  const deadlineAt = formatInstant(record.deadlineMs);
  // Between two calls of one operation: is the claim still live and the deadline ahead?
  const between = (done: string): FleetResult | null => {
    if (!claims.current(number, request, call.now())) {
      return withMessage(claims.stale(request), `the claim ended during the write: ${done}`);
    }
    if (Date.now() >= deadline.atMs)
      return pastDeadline(deadlineAt, `${done}; nothing more was sent`);
    return null;
  };

  // Name and client read together, after the last wait: the client sends requests naming its
  // repository's current name by id (and refuses writes naming any other), so a rename during
  // the budget wait cannot send this write, by the old name, to another repository.
  let end: WriteEnd = "answered";
  try {
    const client = call.client().bounded(deadline);
    const repo = call.fullName();
    switch (op.kind) {
      case "comment": {
        // The hidden marker names the claim and fence: a comment GitHub applies late is found.
        const body = withWriteMarker(op.body, request);
        const comment = await createComment(client, repo, number, body);
        audit(store, call, { commentId: comment.id });
        return { status: 201, body: { id: comment.id, url: comment.url } };
      }
      case "labels": {
        // One call per label: the fence and the deadline are checked between calls.
        const added: string[] = [];
        const removed: string[] = [];
        let stopped: FleetResult | null = null;
        try {
          if (op.add.length > 0) {
            await addLabels(client, repo, number, op.add);
            added.push(...op.add);
          }
          for (const label of op.remove) {
            stopped = between(labelsDone(added, removed, op));
            if (stopped) break;
            await removeLabel(client, repo, number, label);
            removed.push(label);
          }
        } finally {
          store.transaction(() => {
            for (const label of added) store.applyOwnLabelWrite(number, label, "add");
            for (const label of removed) store.applyOwnLabelWrite(number, label, "remove");
          });
        }
        audit(store, call, { add: added, remove: removed, ...(stopped ? { stopped: true } : {}) });
        if (stopped) return stopped;
        return { status: 200, body: { labels: store.issueLabels(number) ?? [] } };
      }
      case "close": {
        await closeIssue(client, repo, number, op.reason);
        audit(store, call, { reason: op.reason });
        return { status: 200, body: { number, state: "closed", stateReason: op.reason } };
      }
      case "sub-issue": {
        let child: number;
        let childId: number | undefined;
        // The issue an earlier attempt opened (found by its marker), if any.
        let found: { number: number; id: number } | null = null;
        if (idem.kind === "opened") {
          child = idem.number;
        } else {
          const marker = idem.kind === "none" ? null : await subIssueMarker(idem.key);
          found =
            idem.kind === "lookup" && marker !== null
              ? await findIssueWithMarker(
                  client,
                  repo,
                  new Date(idem.sinceMs - LOOKUP_SKEW_MS).toISOString(),
                  marker,
                )
              : null;
          if (found) {
            child = found.number;
            childId = found.id;
          } else {
            const body = marker === null ? op.body : bodyWithMarker(op.body, marker);
            creating = true;
            const created = await createIssue(client, repo, {
              title: op.title,
              ...(body ? { body } : {}),
            });
            creating = false;
            child = created.number;
            childId = created.id;
          }
          if (idem.kind !== "none") {
            store.transaction(() =>
              store.claims.recordIdempotent(idem.key, request.claimId, child, false, Date.now()),
            );
          }
          const stopped = between(`issue #${child} was opened but not linked as a sub-issue`);
          if (stopped) {
            audit(store, call, { child, linked: false });
            return stopped;
          }
        }
        await addSubIssue(client, repo, number, child, childId === undefined ? {} : { childId });
        if (idem.kind !== "none") {
          store.transaction(() =>
            store.claims.recordIdempotent(idem.key, request.claimId, child, true, Date.now()),
          );
        }
        audit(store, call, { child });
        return {
          status: 201,
          body: {
            number: child,
            url: views.issueUrl(child),
            created: idem.kind !== "opened" && found === null,
          },
        };
      }
      default:
        throw new Error(`unknown fenced write ${(op as { kind: string }).kind}`);
    }
  } catch (error) {
    end = endOf(error);
    const maybeOpened =
      creating && !(error instanceof GitHubApiError && error.outcome === "not-applied");
    if (maybeOpened && (idem.kind === "fresh" || idem.kind === "lookup")) {
      // The answer was lost: GitHub may have opened the issue. The key stays, with outcome
      // unknown, and the retry looks the issue up by its marker before opening another.
      store.transaction(() => store.claims.idempotentUnknown(idem.key));
    } else release(undefined);
    if (error instanceof RepositoryMismatchError) {
      // Refused by the client before anything was sent: the repository's name changed under it.
      return {
        status: 409,
        body: {
          error: "conflict",
          reason: "renamed",
          message: `the repository's name changed while the write waited; nothing was written, retry: ${error.message}`,
        },
      };
    }
    if (error instanceof GitHubApiError) {
      if (error.kind === "deadline") {
        return pastDeadline(
          deadlineAt,
          error.outcome === "unknown"
            ? "GitHub had not answered; the write may still be applied (the issue is granted to nobody until its record closes)"
            : "nothing was written",
        );
      }
      if (error.kind === "rate-limited") {
        const seconds = Math.max(1, Math.ceil((error.retryAfterMs ?? 60_000) / 1000));
        return {
          status: 429,
          body: {
            error: "rate-limited",
            message: `GitHub rate-limited the write; retry in ${seconds} s: ${error.message}`,
          },
          headers: { "retry-after": String(seconds) },
        };
      }
      return {
        status: 502,
        body: { error: "github-error", message: `GitHub refused the write: ${error.message}` },
      };
    }
    throw error;
  } finally {
    clearTimeout(timer);
    claims.finishWrite(record, end, call.now(), marginMs);
    await call.rearm?.();
  }
}

/** How a write that threw ended: did a request go unanswered (it may still be applied)? */
function endOf(error: unknown): WriteEnd {
  if (error instanceof RepositoryMismatchError) return "not-sent";
  if (error instanceof GitHubApiError)
    return error.outcome === "unknown" ? "no-answer" : "answered";
  return "no-answer";
}

function labelsDone(added: string[], removed: string[], op: { remove: string[] }): string {
  const left = op.remove.filter((l) => !removed.includes(l));
  const done = [...added.map((l) => `+${l}`), ...removed.map((l) => `-${l}`)];
  return `${done.length > 0 ? `${done.join(", ")} changed` : "nothing changed"}, ${left.map((l) => `-${l}`).join(", ")} not`;
}

function withMessage(result: FleetResult, message: string): FleetResult {
  return { ...result, body: { ...result.body, message } };
}

/** 504: the write's deadline (its claim's expiry plus the settle margin) came first. */
function pastDeadline(deadlineAt: string, detail: string): FleetResult {
  return {
    status: 504,
    body: {
      error: "deadline",
      message: `the write's deadline (${deadlineAt}: the claim's expiry plus the settle margin) came before GitHub took it: ${detail}`,
    },
  };
}

function audit(store: RepoStore, call: Call, detail: Record<string, unknown>): void {
  store.audit(
    "fenced-write",
    {
      number: call.number,
      kind: call.op.kind,
      claimId: call.request.claimId,
      fence: call.request.fence,
      ...detail,
    },
    Date.now(),
  );
}
