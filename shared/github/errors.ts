/**
 * Why a GitHub request failed, in the terms a caller decides on:
 * - `rate-limited`: primary or secondary limit; retry after `retryAfterMs`.
 * - `server` / `network` / `timeout`: GitHub or the path to it failed.
 * - `unauthorized` (401), `forbidden` (403), `not-found` (404, 410), `invalid` (422),
 *   `http` (another status), `graphql` (errors in a 200 answer), `bad-response`.
 * - `deadline`: the request's deadline (a fenced write's) came first: nothing more was sent.
 */
export type GitHubErrorKind =
  | "rate-limited"
  | "server"
  | "network"
  | "timeout"
  | "unauthorized"
  | "forbidden"
  | "not-found"
  | "invalid"
  | "http"
  | "graphql"
  | "bad-response"
  | "deadline";

/**
 * For a write that failed: `not-applied` when GitHub certainly did nothing (a 4xx, a rate
 * limit), `unknown` when the write may have happened (a 5xx, a lost response, a timeout) and was
 * not retried because retrying could apply it twice.
 */
export type WriteOutcome = "not-applied" | "unknown";

export interface GitHubErrorDetails {
  kind: GitHubErrorKind;
  /** What switchyard was doing, e.g. `add label agent:ready to acme/app#5`. */
  operation: string;
  /** The request, e.g. `POST /repos/acme/app/issues/5/labels` (never with credentials). */
  request: string;
  status: number | null;
  attempts: number;
  reason: string;
  retryAfterMs?: number;
  outcome?: WriteOutcome;
  /** The answer's `Date` header, when there was an answer (a removal is stamped with it). */
  responseDate?: string;
}

/** Every failure of shared/github surfaces as this error: which request failed and why. */
export class GitHubApiError extends Error {
  override name = "GitHubApiError";
  readonly kind: GitHubErrorKind;
  readonly operation: string;
  readonly request: string;
  readonly status: number | null;
  readonly attempts: number;
  readonly reason: string;
  readonly retryAfterMs: number | undefined;
  readonly outcome: WriteOutcome | undefined;
  readonly responseDate: string | undefined;

  constructor(details: GitHubErrorDetails) {
    const status = details.status === null ? "" : ` (HTTP ${details.status})`;
    const tries = details.attempts === 1 ? "1 attempt" : `${details.attempts} attempts`;
    const outcome =
      details.outcome !== "unknown"
        ? ""
        : details.attempts > 1
          ? "; the write may or may not have been applied"
          : "; the write may or may not have been applied, so it was not retried";
    super(
      `${details.operation}: ${details.request} failed after ${tries}: ${details.kind}${status}: ${details.reason}${outcome}`,
    );
    this.kind = details.kind;
    this.operation = details.operation;
    this.request = details.request;
    this.status = details.status;
    this.attempts = details.attempts;
    this.reason = details.reason;
    this.retryAfterMs = details.retryAfterMs;
    this.outcome = details.outcome;
    this.responseDate = details.responseDate;
  }
}

/** Misconfiguration found before any request: a wrong key format, a missing setting. */
export class GitHubConfigError extends Error {
  override name = "GitHubConfigError";
}

/**
 * Whether a failed request can succeed later: rate limits, server and network trouble, and
 * auth problems an operator can fix pass; a missing issue or a request GitHub rejects as
 * invalid never will. Unknown errors count as passing (retrying costs less than losing work).
 */
export function isRetryable(error: unknown): boolean {
  if (!(error instanceof GitHubApiError)) return true;
  return !["not-found", "invalid", "bad-response"].includes(error.kind);
}

/**
 * What the contents API returned is not a text file switchyard can read: a `directory`, a file
 * `too-large` for the JSON form (GitHub leaves `content` empty over 1 MB), a symlink or
 * submodule (`not-a-file`), or bytes that are not UTF-8 (`not-text`).
 */
export type GitHubContentErrorKind = "directory" | "too-large" | "not-a-file" | "not-text";

export class GitHubContentError extends Error {
  override name = "GitHubContentError";
  readonly kind: GitHubContentErrorKind;
  readonly repo: string;
  readonly path: string;
  readonly ref: string | null;

  constructor(details: {
    kind: GitHubContentErrorKind;
    repo: string;
    path: string;
    ref?: string | null;
    reason: string;
  }) {
    const at = details.ref ? ` at ${details.ref}` : "";
    super(`${details.repo}: ${details.path}${at} ${details.reason}`);
    this.kind = details.kind;
    this.repo = details.repo;
    this.path = details.path;
    this.ref = details.ref ?? null;
  }
}

/**
 * A repository read by name turned out to be another repository than the one the client serves
 * (`databaseId` differs): renamed or deleted, and its former name reused. Nothing read may be
 * applied, and nothing may be written, until the repository's name is read again by id.
 */
export class RepositoryMismatchError extends Error {
  override name = "RepositoryMismatchError";
  readonly expectedId: number;
  readonly foundId: number | null;
  readonly fullName: string;

  constructor(details: { expectedId: number; foundId: number | null; fullName: string }) {
    super(
      `${details.fullName} is repository ${details.foundId ?? "(none)"}, not ${details.expectedId}: renamed or deleted, its name taken by another`,
    );
    this.expectedId = details.expectedId;
    this.foundId = details.foundId;
    this.fullName = details.fullName;
  }
}
