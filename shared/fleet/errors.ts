// The fleet clients' errors (client.ts, org-client.ts): every failure of a request is a
// FleetApiError naming the request; an argument refused before sending is a FleetRequestError.
import type { z } from "zod";
import { describeZodError } from "../validation.ts";
import type { ErrorBody, Holder } from "./schemas.ts";

/**
 * `error` is the API's code (`bad-request`, `unauthorized`, `forbidden`, `not-found`,
 * `conflict`, `stale-fence`, `rate-limited`, ...) or one of the client's own:
 * `network` (no answer: `status` null), `timeout` (no answer in time: `status` null),
 * `bad-response` (an answer that is not what docs/api.md promises).
 */
export type FleetErrorCode =
  | "bad-request"
  | "unauthorized"
  | "forbidden"
  | "not-found"
  | "conflict"
  | "stale-fence"
  | "rate-limited"
  | "network"
  | "timeout"
  | "bad-response"
  | (string & {});

/**
 * Every failure of a fleet request. `message` names the request and says what the Worker
 * answered (`POST /v1/repos/acme/app/claims: 409 conflict (held): ...`); `apiMessage` is the
 * Worker's own message; `body` is the parsed error body.
 */
export class FleetApiError extends Error {
  override name = "FleetApiError";
  /** `POST /v1/repos/acme/app/issues/5/claim` (never with credentials). */
  readonly request: string;
  /** The HTTP status, or null when no answer arrived. */
  readonly status: number | null;
  readonly error: FleetErrorCode;
  readonly apiMessage: string;
  /** From `Retry-After` (seconds or an HTTP date), when the answer had one. */
  readonly retryAfterSeconds: number | undefined;
  /** The parsed error body (`{error, message, reason?, holder?}`), when there was one. */
  readonly body: ErrorBody | undefined;
  /** Why a claim was refused (409 `conflict`): `held`, `closed`, `hold`, `epic`, ... */
  readonly reason: string | undefined;
  /** Who holds the issue (409 `conflict` with reason `held`). */
  readonly holder: Holder | undefined;

  constructor(details: {
    request: string;
    status: number | null;
    error: FleetErrorCode;
    message: string;
    retryAfterSeconds?: number | undefined;
    body?: ErrorBody | undefined;
  }) {
    const status = details.status === null ? "" : `${details.status} `;
    const reason = details.body?.reason ? ` (${details.body.reason})` : "";
    const holder = details.body?.holder
      ? `; held by ${details.body.holder.agentId} (${details.body.holder.source})`
      : "";
    const retry =
      details.retryAfterSeconds === undefined ? "" : `; retry after ${details.retryAfterSeconds} s`;
    super(
      `${details.request}: ${status}${details.error}${reason}: ${details.message}${holder}${retry}`,
    );
    this.request = details.request;
    this.status = details.status;
    this.error = details.error;
    this.apiMessage = details.message;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.body = details.body;
    this.reason = details.body?.reason;
    this.holder = details.body?.holder;
  }
}

/** A request the client refused to send: an argument that fails the API's schema. */
export class FleetRequestError extends Error {
  override name = "FleetRequestError";
  /** The first bad field, e.g. `agentId` or `add[2]`. */
  readonly field: string;
  constructor(what: string, error: z.ZodError) {
    super(`invalid ${what}: ${describeZodError(error)}`);
    const first = error.issues[0]?.path ?? [];
    this.field = first.length === 0 ? "(root)" : String(first[0]);
  }
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date (relative to `nowMs`). */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}
