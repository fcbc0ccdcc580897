// A typed client of the fleet API (docs/api.md). Web-standard only (fetch, URL, AbortSignal),
// so the same client runs in a Worker, Node, Bun and Deno. Every request body is checked with
// the schema the Worker checks it with before it is sent, every answer is checked before it is
// returned, and every failure is a FleetApiError naming the request.
import type { z } from "zod";
import type { QueueKind } from "../queue/queue.ts";
import { describeZodError } from "../validation.ts";
import {
  type ClaimGrant,
  ClaimGrantSchema,
  ClaimNextRequestSchema,
  ClaimRequestSchema,
  type ClaimsResponse,
  ClaimsResponseSchema,
  type CloseRequest,
  CloseRequestSchema,
  type CloseResponse,
  CloseResponseSchema,
  CommentRequestSchema,
  type CommentResponse,
  CommentResponseSchema,
  type CreatedKey,
  CreatedKeySchema,
  type CreateKeyRequest,
  CreateKeyRequestSchema,
  type ErrorBody,
  ErrorBodySchema,
  type GraphListName,
  type GraphPage,
  GraphPageSchema,
  type GraphResponse,
  GraphResponseSchema,
  HeartbeatRequestSchema,
  type HeartbeatResponse,
  HeartbeatResponseSchema,
  type Holder,
  HolderSchema,
  KeyIdSchema,
  type KeyList,
  KeyListSchema,
  type LabelsRequest,
  LabelsRequestSchema,
  type LabelsResponse,
  LabelsResponseSchema,
  type Outcome,
  type QueueOrder,
  type QueueResponse,
  QueueResponseSchema,
  ReleaseRequestSchema,
  type ReleaseResponse,
  ReleaseResponseSchema,
  type SubIssueRequest,
  SubIssueRequestSchema,
  type SubIssueResponse,
  SubIssueResponseSchema,
} from "./schemas.ts";

/** A bearer token, or a function giving a current one (OIDC tokens expire in minutes). */
export type TokenSource = string | (() => string | Promise<string>);

export interface FleetClientOptions {
  /** The Worker's URL, e.g. `https://switchyard.example.workers.dev` (a path prefix is kept). */
  server: string;
  /** `owner/name`. */
  repo: string;
  token: TokenSource;
  fetch?: typeof fetch;
  userAgent?: string;
  /** Per-request timeout in milliseconds (default 30 s). */
  timeoutMs?: number;
}

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

const REPO = /^([A-Za-z0-9][A-Za-z0-9-]{0,38})\/([A-Za-z0-9._-]{1,100})$/;

interface Call<T> {
  method: "GET" | "POST" | "DELETE";
  /** After `/v1/repos/{owner}/{repo}`: `/issues/5/claim`. */
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** Accepted statuses; a status here with no schema (204) answers null. */
  ok: readonly number[];
  schema: z.ZodType<T> | null;
  /** Reads the answer's headers (an answer without a body says things there). */
  headers?: (headers: Headers) => void;
}

/** Why claim-next handed out nothing: no work for this agent, or the breaker's pause. */
export type Idle =
  | { reason: "queue-empty" }
  | { reason: "paused"; since: string; retryAfterSeconds: number | null };

export interface QueueOptions {
  machine?: string;
  capabilities?: readonly string[];
  limit?: number;
  order?: QueueOrder;
  /** Item kinds (`kick`, `rollup`, `ready`, `reply`); absent: all. */
  kinds?: readonly QueueKind[];
}

export interface ClaimOptions {
  agentId: string;
  ttlSeconds?: number;
  machine?: string;
  /** A direct claim: `work` or `reply` (default: work when the issue has work). */
  kind?: "work" | "reply";
}

export interface ClaimNextOptions extends Omit<ClaimOptions, "kind"> {
  capabilities?: string[];
  /** What claim-next may take (default kick, rollup, ready). */
  kinds?: QueueKind[];
}

export interface FenceOptions {
  claimId: string;
  fence: number;
}

export interface ReleaseOptions extends FenceOptions {
  outcome: Outcome;
  note?: string;
}

export class FleetClient {
  readonly server: string;
  readonly repo: string;
  readonly #base: string;
  readonly #token: TokenSource;
  readonly #fetch: typeof fetch;
  readonly #userAgent: string | undefined;
  readonly #timeoutMs: number;

  constructor(options: FleetClientOptions) {
    let url: URL;
    try {
      url = new URL(options.server);
    } catch {
      throw new TypeError(`server must be an http(s) URL, got "${options.server}"`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`server must be an http(s) URL, got "${options.server}"`);
    }
    const repo = REPO.exec(options.repo);
    if (!repo) throw new TypeError(`repo must be OWNER/NAME, got "${options.repo}"`);
    this.server = `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
    this.repo = options.repo;
    this.#base = `/v1/repos/${encodeURIComponent(repo[1]!)}/${encodeURIComponent(repo[2]!)}`;
    this.#token = options.token;
    // Calling the global through a closure keeps `this` right on every runtime.
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#userAgent = options.userAgent;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** `GET .../queue`: claimable work, in the order the Worker would hand it out. */
  async queue(options: QueueOptions = {}): Promise<QueueResponse> {
    return this.#call({
      method: "GET",
      path: "/queue",
      query: {
        machine: options.machine,
        capabilities: options.capabilities?.length ? options.capabilities.join(",") : undefined,
        limit: options.limit === undefined ? undefined : String(options.limit),
        order: options.order,
        kinds: options.kinds?.length ? options.kinds.join(",") : undefined,
      },
      ok: [200],
      schema: QueueResponseSchema,
    });
  }

  /** `POST .../issues/{n}/claim`: a `409 conflict` FleetApiError says why not (`reason`, `holder`). */
  async claim(number: number, options: ClaimOptions): Promise<ClaimGrant> {
    return this.#call({
      method: "POST",
      path: `/issues/${issueNumber(number)}/claim`,
      body: checked("claim request", ClaimRequestSchema, options),
      ok: [201],
      schema: ClaimGrantSchema,
    });
  }

  /** `POST .../claims`: claims the queue's first issue; null when there is no work (204). */
  async claimNext(options: ClaimNextOptions): Promise<ClaimGrant | null> {
    const next = await this.claimNextOrIdle(options);
    return "grant" in next ? next.grant : null;
  }

  /**
   * `POST .../claims`, saying why there is no work: the queue is empty for this agent, or the
   * circuit breaker pauses ordinary work (204 with `X-Switchyard-Paused` and `Retry-After`).
   */
  async claimNextOrIdle(
    options: ClaimNextOptions,
  ): Promise<{ grant: ClaimGrant } | { idle: Idle }> {
    let idle: Idle = { reason: "queue-empty" };
    const grant = await this.#request({
      method: "POST",
      path: "/claims",
      body: checked("claim-next request", ClaimNextRequestSchema, options),
      ok: [201, 204],
      schema: ClaimGrantSchema,
      headers: (h) => {
        const since = h.get("x-switchyard-paused");
        if (since === null) return;
        const retry = Number(h.get("retry-after"));
        idle = {
          reason: "paused",
          since,
          retryAfterSeconds: Number.isFinite(retry) && retry > 0 ? retry : null,
        };
      },
    });
    return grant === null ? { idle } : { grant };
  }

  /** `POST .../issues/{n}/claim/heartbeat`: extends the claim by its TTL; 409 `stale-fence` once it is lost. */
  async heartbeat(number: number, options: FenceOptions): Promise<HeartbeatResponse> {
    return this.#call({
      method: "POST",
      path: `/issues/${issueNumber(number)}/claim/heartbeat`,
      body: checked("heartbeat request", HeartbeatRequestSchema, options),
      ok: [200],
      schema: HeartbeatResponseSchema,
    });
  }

  /** `POST .../issues/{n}/claim/release` */
  async release(number: number, options: ReleaseOptions): Promise<ReleaseResponse> {
    return this.#call({
      method: "POST",
      path: `/issues/${issueNumber(number)}/claim/release`,
      body: checked("release request", ReleaseRequestSchema, options),
      ok: [200],
      schema: ReleaseResponseSchema,
    });
  }

  /** `GET .../claims`: the live claims. */
  async claims(): Promise<ClaimsResponse> {
    return this.#call({
      method: "GET",
      path: "/claims",
      ok: [200],
      schema: ClaimsResponseSchema,
    });
  }

  /** `POST .../issues/{n}/comments` (fenced). */
  async comment(
    number: number,
    options: FenceOptions & { body: string },
  ): Promise<CommentResponse> {
    return this.#call({
      method: "POST",
      path: `/issues/${issueNumber(number)}/comments`,
      body: checked("comment request", CommentRequestSchema, options),
      ok: [201],
      schema: CommentResponseSchema,
    });
  }

  /** `POST .../issues/{n}/labels` (fenced): add and/or remove labels. */
  async labels(number: number, options: LabelsRequest): Promise<LabelsResponse> {
    return this.#call({
      method: "POST",
      path: `/issues/${issueNumber(number)}/labels`,
      body: checked("labels request", LabelsRequestSchema, options),
      ok: [200],
      schema: LabelsResponseSchema,
    });
  }

  /** `POST .../issues/{n}/close` (fenced). */
  async close(number: number, options: CloseRequest): Promise<CloseResponse> {
    return this.#call({
      method: "POST",
      path: `/issues/${issueNumber(number)}/close`,
      body: checked("close request", CloseRequestSchema, options),
      ok: [200],
      schema: CloseResponseSchema,
    });
  }

  /** `POST .../issues/{n}/sub-issues` (fenced): opens an issue linked as a sub-issue of `n`. */
  async subIssue(number: number, options: SubIssueRequest): Promise<SubIssueResponse> {
    return this.#call({
      method: "POST",
      path: `/issues/${issueNumber(number)}/sub-issues`,
      body: checked("sub-issue request", SubIssueRequestSchema, options),
      ok: [201],
      schema: SubIssueResponseSchema,
    });
  }

  /**
   * `GET .../graph`: the scan of the stored graph plus watermarks, with `blocked`, `ready` and
   * `kicks` cut to their first `limit` items (`pages` says how many each has and the next cursor).
   */
  async graph(options: { machine?: string; limit?: number } = {}): Promise<GraphResponse> {
    return this.#call({
      method: "GET",
      path: "/graph",
      query: {
        machine: options.machine,
        limit: options.limit === undefined ? undefined : String(options.limit),
      },
      ok: [200],
      schema: GraphResponseSchema,
    });
  }

  /** `GET .../graph?list=`: one page of one long list; pass the last page's `next` as `cursor`. */
  async graphPage(
    list: GraphListName,
    options: { cursor?: string; limit?: number; machine?: string } = {},
  ): Promise<GraphPage> {
    return this.#call({
      method: "GET",
      path: "/graph",
      query: {
        list,
        machine: options.machine,
        limit: options.limit === undefined ? undefined : String(options.limit),
        cursor: options.cursor,
      },
      ok: [200],
      schema: GraphPageSchema,
    });
  }

  /** Every item of one long list of the graph, page by page. */
  async graphList(
    list: GraphListName,
    options: { limit?: number; machine?: string } = {},
  ): Promise<unknown[]> {
    const items: unknown[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await this.graphPage(list, { ...options, ...(cursor ? { cursor } : {}) });
      items.push(...page.items);
      if (page.next === null) return items;
      cursor = page.next;
    }
  }

  /** `POST .../keys` (admin): mints a fleet key; its secret (`key`) is shown only here. */
  async createKey(options: CreateKeyRequest): Promise<CreatedKey> {
    return this.#call({
      method: "POST",
      path: "/keys",
      body: checked("key request", CreateKeyRequestSchema, options),
      ok: [200, 201],
      schema: CreatedKeySchema,
    });
  }

  /** `GET .../keys`: the repository's fleet keys, without secrets. */
  async listKeys(): Promise<KeyList> {
    return this.#call({ method: "GET", path: "/keys", ok: [200], schema: KeyListSchema });
  }

  /** `DELETE .../keys/{id}`: revokes a fleet key. */
  async revokeKey(id: string): Promise<void> {
    if (!KeyIdSchema.safeParse(id).success) {
      throw new TypeError("key id must be 1 to 64 characters");
    }
    await this.#request({
      method: "DELETE",
      path: `/keys/${encodeURIComponent(id)}`,
      ok: [200, 204],
      schema: null,
    });
  }

  /** A request whose accepted statuses all carry a body. */
  async #call<T>(call: Call<T> & { schema: z.ZodType<T> }): Promise<T> {
    return (await this.#request(call)) as T;
  }

  async #request<T>(call: Call<T>): Promise<T | null> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) search.set(key, value);
    }
    const qs = search.toString() === "" ? "" : `?${search}`;
    const path = `${this.#base}${call.path}`;
    const request = `${call.method} ${path}${qs}`;
    const token = typeof this.#token === "string" ? this.#token : await this.#token();
    const headers: Record<string, string> = {
      accept: "application/json",
      authorization: `Bearer ${token}`,
    };
    if (call.body !== undefined) headers["content-type"] = "application/json";
    if (this.#userAgent !== undefined) headers["user-agent"] = this.#userAgent;

    let response: Response;
    try {
      response = await this.#fetch(`${this.server}${path}${qs}`, {
        method: call.method,
        headers,
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      const e = error as { name?: string; message?: string; cause?: { message?: string } };
      const timedOut = e?.name === "TimeoutError" || e?.name === "AbortError";
      throw new FleetApiError({
        request,
        status: null,
        error: timedOut ? "timeout" : "network",
        message: timedOut
          ? `no answer within ${this.#timeoutMs} ms`
          : (e?.cause?.message ?? e?.message ?? String(error)),
      });
    }

    const text = await response.text().catch(() => "");
    if (!call.ok.includes(response.status)) throw errorFrom(request, response, text);
    call.headers?.(response.headers);
    if (response.status === 204 || call.schema === null) return null;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new FleetApiError({
        request,
        status: response.status,
        error: "bad-response",
        message: `the answer is not JSON: ${snippet(text)}`,
      });
    }
    const parsed = call.schema.safeParse(json);
    if (!parsed.success) {
      throw new FleetApiError({
        request,
        status: response.status,
        error: "bad-response",
        message: `the answer does not match docs/api.md: ${describeZodError(parsed.error)}`,
      });
    }
    return parsed.data;
  }
}

function issueNumber(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new TypeError(`issue number must be a positive integer, got ${n}`);
  }
  return n;
}

function checked<T>(what: string, schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new FleetRequestError(what, parsed.error);
  return parsed.data;
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat === "") return "(empty body)";
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

function errorFrom(request: string, response: Response, text: string): FleetApiError {
  const retryAfterSeconds = parseRetryAfter(response.headers.get("retry-after"), Date.now());
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = ErrorBodySchema.safeParse(json);
  let body: ErrorBody | undefined;
  if (parsed.success) {
    body = parsed.data;
  } else if (
    json !== null &&
    typeof json === "object" &&
    typeof (json as { error?: unknown }).error === "string"
  ) {
    // An error body with an odd `holder` (or no message) still says what went wrong.
    const raw = json as Record<string, unknown>;
    const holder = HolderSchema.safeParse(raw.holder);
    body = {
      ...raw,
      error: raw.error as string,
      message: typeof raw.message === "string" ? raw.message : "",
      reason: typeof raw.reason === "string" ? raw.reason : undefined,
      holder: holder.success ? holder.data : undefined,
    };
  }
  return new FleetApiError({
    request,
    status: response.status,
    error: body?.error ?? `http-${response.status}`,
    message: body?.message || response.statusText || snippet(text),
    retryAfterSeconds,
    body,
  });
}
