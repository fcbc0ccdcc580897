// A typed client of the fleet API (docs/api.md). Web-standard only (fetch, URL, AbortSignal),
// so the same client runs in a Worker, Node, Bun and Deno. Every request body is checked with
// the schema the Worker checks it with before it is sent, every answer is checked before it is
// returned, and every failure is a FleetApiError naming the request (transport.ts, the HTTP
// transport this client shares with the org client, org-client.ts).
import type { z } from "zod";
import type { QueueKind } from "../queue/queue.ts";
import { FleetRequestError } from "./errors.ts";
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
  type GraphListName,
  type GraphPage,
  GraphPageSchema,
  type GraphResponse,
  GraphResponseSchema,
  HeartbeatRequestSchema,
  type HeartbeatResponse,
  HeartbeatResponseSchema,
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
import { type Call, FleetTransport, type TokenSource } from "./transport.ts";

export {
  FleetApiError,
  type FleetErrorCode,
  FleetRequestError,
  parseRetryAfter,
} from "./errors.ts";
export type { TokenSource } from "./transport.ts";

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

const REPO = /^([A-Za-z0-9][A-Za-z0-9-]{0,38})\/([A-Za-z0-9._-]{1,100})$/;

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
  readonly #transport: FleetTransport;

  constructor(options: FleetClientOptions) {
    const transport = new FleetTransport(options);
    const repo = REPO.exec(options.repo);
    if (!repo) throw new TypeError(`repo must be OWNER/NAME, got "${options.repo}"`);
    this.server = transport.server;
    this.repo = options.repo;
    this.#base = `/v1/repos/${encodeURIComponent(repo[1]!)}/${encodeURIComponent(repo[2]!)}`;
    this.#transport = transport;
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

  /** A request whose accepted statuses all carry a body (`path` after `/v1/repos/{owner}/{repo}`). */
  async #call<T>(call: Call<T> & { schema: z.ZodType<T> }): Promise<T> {
    return (await this.#request(call)) as T;
  }

  async #request<T>(call: Call<T>): Promise<T | null> {
    return this.#transport.request({ ...call, path: `${this.#base}${call.path}` });
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
