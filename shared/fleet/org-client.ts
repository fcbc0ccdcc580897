// A typed client of the org routes (`/v1/orgs/{owner}/...`, docs/api.md "One queue for an
// organization"), beside FleetClient (client.ts): the same token, fetch and error type. A grant
// names its repository; `forRepo` gives the FleetClient its heartbeats, releases and writes go
// through (fences are per repository).
import type { z } from "zod";
import {
  OrgClaimGrantSchema,
  OrgClaimRequestSchema,
  OrgClaimsResponseSchema,
  OrgQueueResponseSchema,
} from "../org/schemas.ts";
import { describeZodError } from "../validation.ts";
import { FleetApiError, FleetClient, FleetRequestError, type TokenSource } from "./client.ts";
import { ErrorBodySchema } from "./schemas.ts";

export type OrgClaimGrant = z.infer<typeof OrgClaimGrantSchema>;
export type OrgQueueResponse = z.infer<typeof OrgQueueResponseSchema>;
export type OrgClaimsResponse = z.infer<typeof OrgClaimsResponseSchema>;
export type OrgClaimRequest = z.input<typeof OrgClaimRequestSchema>;

export interface OrgClientOptions {
  server: string;
  /** The installation owner: an organization or a user login. */
  owner: string;
  token: TokenSource;
  fetch?: typeof fetch;
  userAgent?: string;
  timeoutMs?: number;
}

const OWNER = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/;

export class OrgFleetClient {
  readonly server: string;
  readonly owner: string;
  readonly #options: OrgClientOptions;
  readonly #fetch: typeof fetch;

  constructor(options: OrgClientOptions) {
    if (!OWNER.test(options.owner)) {
      throw new TypeError(`owner must be a GitHub owner name, got "${options.owner}"`);
    }
    const url = new URL(options.server);
    this.server = `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
    this.owner = options.owner;
    this.#options = options;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** The client of one repository (the grant's `repo`), with the same token. */
  forRepo(repo: string): FleetClient {
    return new FleetClient({ ...this.#options, server: this.server, repo });
  }

  /** `GET /v1/orgs/{owner}/queue` */
  async queue(
    options: {
      capabilities?: readonly string[];
      kinds?: readonly string[];
      limit?: number;
      order?: string;
      repos?: readonly string[];
    } = {},
  ): Promise<OrgQueueResponse> {
    const query = new URLSearchParams();
    const join = (list?: readonly string[]) => (list?.length ? list.join(",") : undefined);
    for (const [key, value] of Object.entries({
      capabilities: join(options.capabilities),
      kinds: join(options.kinds),
      limit: options.limit === undefined ? undefined : String(options.limit),
      order: options.order,
      repos: join(options.repos),
    })) {
      if (value !== undefined) query.set(key, value);
    }
    const qs = query.toString() === "" ? "" : `?${query}`;
    return (await this.#request("GET", `/queue${qs}`, undefined, OrgQueueResponseSchema))!;
  }

  /** `POST /v1/orgs/{owner}/claims`: the grant (with its `repo`), or null when there is no work. */
  async claimNext(request: OrgClaimRequest): Promise<OrgClaimGrant | null> {
    const parsed = OrgClaimRequestSchema.safeParse(request);
    if (!parsed.success) throw new FleetRequestError("org claim-next request", parsed.error);
    return this.#request("POST", "/claims", parsed.data, OrgClaimGrantSchema);
  }

  /** `GET /v1/orgs/{owner}/claims` */
  async claims(): Promise<OrgClaimsResponse> {
    return (await this.#request("GET", "/claims", undefined, OrgClaimsResponseSchema))!;
  }

  async #request<T>(
    method: string,
    path: string,
    body: unknown,
    schema: z.ZodType<T>,
  ): Promise<T | null> {
    const full = `/v1/orgs/${encodeURIComponent(this.owner)}${path}`;
    const request = `${method} ${full}`;
    const token =
      typeof this.#options.token === "string" ? this.#options.token : await this.#options.token();
    const headers: Record<string, string> = {
      accept: "application/json",
      authorization: `Bearer ${token}`,
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.#options.userAgent !== undefined) headers["user-agent"] = this.#options.userAgent;
    let response: Response;
    try {
      response = await this.#fetch(`${this.server}${full}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.#options.timeoutMs ?? 30_000),
      });
    } catch (error) {
      const e = error as { name?: string; message?: string };
      const timedOut = e?.name === "TimeoutError" || e?.name === "AbortError";
      throw new FleetApiError({
        request,
        status: null,
        error: timedOut ? "timeout" : "network",
        message: e?.message ?? String(error),
      });
    }
    const text = await response.text().catch(() => "");
    let json: unknown;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (response.status === 204) return null;
    if (response.status < 200 || response.status >= 300) {
      const parsed = ErrorBodySchema.safeParse(json);
      throw new FleetApiError({
        request,
        status: response.status,
        error: parsed.success ? parsed.data.error : `http-${response.status}`,
        message: parsed.success ? parsed.data.message : response.statusText,
        ...(parsed.success ? { body: parsed.data } : {}),
      });
    }
    const parsed = schema.safeParse(json);
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
