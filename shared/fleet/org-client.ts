// A typed client of the org routes (`/v1/orgs/{owner}/...`, docs/api.md "One queue for an
// organization"), beside FleetClient (client.ts): the same transport (transport.ts: token,
// timeout, answers checked, FleetApiError with reason, holder and Retry-After). A grant names
// its repository; `forRepo` gives the FleetClient its heartbeats, releases and writes go through
// (fences are per repository).
import type { z } from "zod";
import {
  OrgClaimGrantSchema,
  OrgClaimRequestSchema,
  OrgClaimsResponseSchema,
  OrgQueueResponseSchema,
} from "../org/schemas.ts";
import { FleetClient } from "./client.ts";
import { FleetRequestError } from "./errors.ts";
import { type Call, FleetTransport, type TokenSource } from "./transport.ts";

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
  readonly #transport: FleetTransport;

  constructor(options: OrgClientOptions) {
    if (!OWNER.test(options.owner)) {
      throw new TypeError(`owner must be a GitHub owner name, got "${options.owner}"`);
    }
    this.#transport = new FleetTransport(options);
    this.server = this.#transport.server;
    this.owner = options.owner;
    this.#options = options;
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
    const join = (list?: readonly string[]) => (list?.length ? list.join(",") : undefined);
    return this.#call({
      method: "GET",
      path: "/queue",
      query: {
        capabilities: join(options.capabilities),
        kinds: join(options.kinds),
        limit: options.limit === undefined ? undefined : String(options.limit),
        order: options.order,
        repos: join(options.repos),
      },
      ok: [200],
      schema: OrgQueueResponseSchema,
    });
  }

  /** `POST /v1/orgs/{owner}/claims`: the grant (with its `repo`), or null when there is no work. */
  async claimNext(request: OrgClaimRequest): Promise<OrgClaimGrant | null> {
    const parsed = OrgClaimRequestSchema.safeParse(request);
    if (!parsed.success) throw new FleetRequestError("org claim-next request", parsed.error);
    return this.#request({
      method: "POST",
      path: "/claims",
      body: parsed.data,
      ok: [201, 204],
      schema: OrgClaimGrantSchema,
    });
  }

  /** `GET /v1/orgs/{owner}/claims` */
  async claims(): Promise<OrgClaimsResponse> {
    return this.#call({
      method: "GET",
      path: "/claims",
      ok: [200],
      schema: OrgClaimsResponseSchema,
    });
  }

  /** A request whose accepted statuses all carry a body (`path` after `/v1/orgs/{owner}`). */
  async #call<T>(call: Call<T> & { schema: z.ZodType<T> }): Promise<T> {
    return (await this.#request(call)) as T;
  }

  async #request<T>(call: Call<T>): Promise<T | null> {
    const path = `/v1/orgs/${encodeURIComponent(this.owner)}${call.path}`;
    return this.#transport.request({ ...call, path });
  }
}
