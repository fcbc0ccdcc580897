// The fleet clients' HTTP transport (FleetClient in client.ts, OrgFleetClient in org-client.ts):
// one request to the Worker with the bearer token, a timeout, and the answer checked against its
// schema; every failure a FleetApiError naming the request (status, the API's code, reason,
// holder, Retry-After). Web-standard only (fetch, URL, AbortSignal).
import type { z } from "zod";
import { describeZodError } from "../validation.ts";
import { FleetApiError, parseRetryAfter } from "./errors.ts";
import { type ErrorBody, ErrorBodySchema, HolderSchema } from "./schemas.ts";

/** A bearer token, or a function giving a current one (OIDC tokens expire in minutes). */
export type TokenSource = string | (() => string | Promise<string>);

export interface TransportOptions {
  /** The Worker's URL, e.g. `https://switchyard.example.workers.dev` (a path prefix is kept). */
  server: string;
  token: TokenSource;
  fetch?: typeof fetch;
  userAgent?: string;
  /** Per-request timeout in milliseconds (default 30 s). */
  timeoutMs?: number;
}

export interface Call<T> {
  method: "GET" | "POST" | "DELETE";
  /** The path after the server, e.g. `/v1/repos/acme/app/issues/5/claim`. */
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** Accepted statuses; a status here with no schema (204) answers null. */
  ok: readonly number[];
  schema: z.ZodType<T> | null;
  /** Reads the answer's headers (an answer without a body says things there). */
  headers?: (headers: Headers) => void;
}

/** The server URL without a trailing slash; a TypeError when it is not http(s). */
export function serverBase(server: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new TypeError(`server must be an http(s) URL, got "${server}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`server must be an http(s) URL, got "${server}"`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

export class FleetTransport {
  readonly server: string;
  readonly #token: TokenSource;
  readonly #fetch: typeof fetch;
  readonly #userAgent: string | undefined;
  readonly #timeoutMs: number;

  constructor(options: TransportOptions) {
    this.server = serverBase(options.server);
    this.#token = options.token;
    // Calling the global through a closure keeps `this` right on every runtime.
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#userAgent = options.userAgent;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** A request whose accepted statuses all carry a body. */
  async call<T>(call: Call<T> & { schema: z.ZodType<T> }): Promise<T> {
    return (await this.request(call)) as T;
  }

  async request<T>(call: Call<T>): Promise<T | null> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) search.set(key, value);
    }
    const qs = search.toString() === "" ? "" : `?${search}`;
    const request = `${call.method} ${call.path}${qs}`;
    const token = typeof this.#token === "string" ? this.#token : await this.#token();
    const headers: Record<string, string> = {
      accept: "application/json",
      authorization: `Bearer ${token}`,
    };
    if (call.body !== undefined) headers["content-type"] = "application/json";
    if (this.#userAgent !== undefined) headers["user-agent"] = this.#userAgent;

    let response: Response;
    try {
      response = await this.#fetch(`${this.server}${call.path}${qs}`, {
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
