import type { BudgetDecision } from "../../../shared/budget/write-budget.ts";
import { bodyWithMarker, subIssueMarker } from "../../../shared/claims/sub-issue-marker.ts";
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
}

const staleFence: FleetResult = {
  status: 409,
  body: {
    error: "stale-fence",
    message: "that claim id and fence are not the issue's live claim; nothing was written",
  },
};

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
  if (!claims.current(number, request, call.now())) return staleFence;
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
  // The budget wait let other requests in: the claim must still be the live one.
  if (!claims.current(number, request, call.now())) return release(staleFence);

  // Name and client read together, after the last wait: the client sends requests naming its
  // repository's current name by id (and refuses writes naming any other), so a rename during
  // the budget wait cannot send this write, by the old name, to another repository.
  const client = call.client();
  const repo = call.fullName();
  try {
    switch (op.kind) {
      case "comment": {
        const comment = await createComment(client, repo, number, op.body);
        audit(store, call, { commentId: comment.id });
        return { status: 201, body: { id: comment.id, url: comment.url } };
      }
      case "labels": {
        if (op.add.length > 0) await addLabels(client, repo, number, op.add);
        for (const label of op.remove) await removeLabel(client, repo, number, label);
        store.transaction(() => {
          for (const label of op.add) store.applyOwnLabelWrite(number, label, "add");
          for (const label of op.remove) store.applyOwnLabelWrite(number, label, "remove");
        });
        audit(store, call, { add: op.add, remove: op.remove });
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
    }
  } catch (error) {
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
      return {
        status: 502,
        body: { error: "github-error", message: `GitHub refused the write: ${error.message}` },
      };
    }
    throw error;
  }
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
