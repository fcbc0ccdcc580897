// The GitHub simulator: a hono app that serves the REST and GraphQL subset switchyard uses,
// with GitHub's auth, rate-limit headers, ETags, webhooks, counters and a fault plan.
// Web-standard only, so it runs in-process (`sim.fetch`), under Node (serve.ts) and in workerd.
import { type Context, Hono } from "hono";
import {
  badCredentials,
  type Identity,
  importAppPublicKey,
  parseBasicAuth,
  TokenRegistry,
  verifyAppJwt,
} from "./auth.ts";
import { registerCheckRoutes } from "./checks-routes.ts";
import { registerContentRoutes } from "./contents.ts";
import { registerControlRoutes } from "./control.ts";
import { FaultPlan, type RequestFault } from "./faults.ts";
import { executeGraphql, operationNameOf } from "./graphql.ts";
import { registerManifestRoutes } from "./manifest.ts";
import { hasScopes, type SimRepo, tokenKindOf } from "./model.ts";
import { oauthClient, registerOAuthRoutes } from "./oauth.ts";
import { OidcIssuer, registerOidcRoutes } from "./oidc.ts";
import { registerOrgRoutes } from "./org-routes.ts";
import { projectAccess } from "./projects-graphql.ts";
import { registerProjectRoutes } from "./projects-routes.ts";
import { RateLimits, RequestCounter, type Resource } from "./rate-limit.ts";
import type { RenderContext } from "./render.ts";
import { registerRestRoutes } from "./rest.ts";
import {
  ConcurrencyLimit,
  SECONDARY_LIMIT_DOCS,
  SECONDARY_LIMIT_MESSAGE,
} from "./secondary-limit.ts";
import { SimHttpError, SimMoved, SimState } from "./state.ts";
import { WebhookEmitter } from "./webhooks.ts";

export interface SimulatorOptions {
  appId?: number;
  appSlug?: string;
  /** SPKI PEM (`BEGIN PUBLIC KEY`) of the App key; App JWTs are verified against it. */
  appPublicKey?: string | null;
  webhookSecret?: string;
  /** Push every webhook to this URL as well as queueing it in the outbox. */
  webhookUrl?: string | null;
  /** Requests per hour per identity and resource (GitHub: 5,000 for an installation). */
  rateLimit?: number;
  /**
   * Tokens that stand for the unrestricted user `octocat` (every repository, no `permissions`);
   * default none. Tokens of users registered through `POST /_sim/users` and minted
   * installation tokens are accepted too; any other token is answered 401 "Bad credentials".
   */
  userTokens?: string[];
  /** The origin written into payload URLs when no request is in flight (webhooks). */
  publicUrl?: string;
  /** Used to push webhooks. */
  fetch?: typeof fetch;
}

export interface ApiRequest {
  c: Context;
  method: string;
  /** The route template, always in its `/repos/{owner}/{repo}` form (also for by-id twins). */
  template: string;
  identity: Identity;
  base: string;
  params: Record<string, string>;
  query: URLSearchParams;
  json(): unknown;
  /** The login changes are attributed to (`slug[bot]` for an installation). */
  sender: string;
  ctx: RenderContext;
}

export interface ApiResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** `app`: the App's JWT; `token`: an installation or user token; `client`: the App's OAuth client (Basic). */
type AuthMode = "app" | "token" | "client";

/** What GitHub links from a redirect's body. */
export const REDIRECT_DOCS = "https://docs.github.com/v3/#http-redirects";

const REPO_PREFIX = "/repos/{owner}/{repo}";
const BY_ID_PREFIX = "/repositories/{repository_id}";

/**
 * The answer to a request for something that moved: 301 for GET and HEAD, 307 otherwise (as
 * GitHub does for renamed and transferred repositories), `Location` and the body GitHub sends.
 */
function movedResult(error: SimMoved, method: string, url: URL): ApiResult {
  let location = `${url.origin}${error.path}`;
  if (error.keepSuffix) {
    const rest = url.pathname.replace(/^\/repos\/[^/]+\/[^/]+|^\/repositories\/\d+/, "");
    location += `${rest}${url.search}`;
  }
  return {
    status: method === "GET" || method === "HEAD" ? 301 : 307,
    body: { message: "Moved Permanently", url: location, documentation_url: REDIRECT_DOCS },
    headers: { location },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function jsonResponse(status: number, body: unknown, headers: Record<string, string>): Response {
  const h = new Headers(headers);
  if (body === undefined || status === 204 || status === 304)
    return new Response(null, { status, headers: h });
  h.set("content-type", "application/json; charset=utf-8");
  return new Response(JSON.stringify(body), { status, headers: h });
}

export class GitHubSimulator {
  readonly app = new Hono();
  readonly state: SimState;
  readonly faults = new FaultPlan();
  readonly limits: RateLimits;
  readonly counter = new RequestCounter();
  /** GitHub's secondary limit: requests in flight per identity. */
  readonly concurrency = new ConcurrencyLimit();
  readonly tokens = new TokenRegistry();
  readonly webhooks: WebhookEmitter;
  /** The GitHub Actions OIDC issuer served under `/oidc` (keys made on first use). */
  readonly oidc = new OidcIssuer();
  readonly appId: number;
  readonly appSlug: string;
  userTokens: string[];
  publicUrl: string;
  private appKey: Promise<CryptoKey | null>;
  private fixedNow: number | null = null;
  private offsetMs = 0;
  /** API requests being answered (route handlers in flight, fault delays included). */
  private answering = 0;
  private quiet: Array<() => void> = [];

  constructor(opts: SimulatorOptions = {}) {
    this.appId = opts.appId ?? 1;
    this.appSlug = opts.appSlug ?? "switchyard-sim";
    this.userTokens = [...(opts.userTokens ?? [])];
    this.publicUrl = opts.publicUrl ?? "http://github-sim.localhost";
    this.appKey = opts.appPublicKey ? importAppPublicKey(opts.appPublicKey) : Promise.resolve(null);
    // Never reject unobserved: a bad key surfaces when an App JWT is verified.
    this.appKey.catch(() => undefined);
    this.state = new SimState(() => this.now());
    this.limits = new RateLimits(
      opts.rateLimit ?? 5000,
      () => this.now(),
      (id) => {
        const inst = this.state.installations.get(id);
        return inst
          ? {
              repositories: this.state.installationRepoCount(inst),
              members: this.state.orgs.activeMembers(inst.account),
            }
          : null;
      },
    );
    this.webhooks = new WebhookEmitter({
      state: this.state,
      faults: this.faults,
      secret: opts.webhookSecret ?? "switchyard-sim-secret",
      ctx: () => this.renderContext(this.publicUrl),
      fetch: opts.fetch,
    });
    this.webhooks.pushUrl = opts.webhookUrl ?? null;
    this.state.onEvent = (event) => this.webhooks.handle(event);
    this.app.onError((error, c) => {
      if (error instanceof SimMoved) {
        const moved = movedResult(error, c.req.method, new URL(c.req.url));
        return jsonResponse(moved.status, moved.body, moved.headers ?? {});
      }
      if (error instanceof SimHttpError)
        return c.json({ message: error.message }, error.status as 400);
      return c.json(
        { message: `simulator error: ${error instanceof Error ? error.message : String(error)}` },
        500,
      );
    });
    registerControlRoutes(this);
    registerRestRoutes(this);
    registerContentRoutes(this);
    registerOidcRoutes(this);
    registerManifestRoutes(this);
    registerOAuthRoutes(this);
    registerOrgRoutes(this);
    registerCheckRoutes(this);
    registerProjectRoutes(this);
    this.api("POST", "/graphql", "token", "graphql", async (req) => {
      const body = (req.json() ?? {}) as Record<string, unknown>;
      const result = await executeGraphql(
        {
          state: this.state,
          base: req.base,
          canRead: (repo) => this.canRead(req.identity, repo),
          projectAccess: (org) => projectAccess(this.state, req.identity, org),
        },
        body,
      );
      return { status: 200, body: result };
    });
    this.app.notFound((c) => {
      const path = new URL(c.req.url).pathname;
      if (!path.startsWith("/_sim"))
        this.counter.record(`${c.req.method} (unknown route)`, 404, false);
      return c.json(
        { message: "Not Found", documentation_url: "https://docs.github.com/rest" },
        404,
      );
    });
  }

  /** The Web-standard entry: `sim.fetch(new Request(...))`. */
  fetch = (request: Request): Promise<Response> => Promise.resolve(this.app.fetch(request));

  now(): Date {
    return new Date((this.fixedNow ?? Date.now()) + this.offsetMs);
  }

  /** App JWTs are verified against this key from now on (the manifest flow's new App). */
  setAppPublicKey(spkiPem: string): void {
    this.appKey = importAppPublicKey(spkiPem);
    this.appKey.catch(() => undefined);
  }

  setClock(opts: { now?: string | null; advanceSeconds?: number }): void {
    if (opts.now !== undefined) {
      this.fixedNow = opts.now === null ? null : Date.parse(opts.now);
      this.offsetMs = 0;
    }
    if (opts.advanceSeconds) this.offsetMs += opts.advanceSeconds * 1000;
  }

  renderContext(base: string): RenderContext {
    return {
      base,
      repoOf: (issue) => this.state.repoOf(issue),
      issueById: (id) => this.state.issuesById.get(id),
      appId: this.appId,
      appSlug: this.appSlug,
      roleOf: (login, repo) => this.state.roleOf(login, repo),
    };
  }

  canRead(identity: Identity, repo: SimRepo): boolean {
    if (identity.kind === "user") {
      // A classic token without the `repo` scope reaches public repositories only.
      if (hasScopes(identity.tokenKind) && !identity.scopes.includes("repo") && repo.private)
        return false;
      // A registered user sees only the repositories it has a role on (they are private).
      return !identity.registered || this.state.roleOf(identity.login, repo) !== undefined;
    }
    if (identity.kind !== "installation") return false;
    // As on GitHub, any installation token reads a public repository, installed there or not:
    // a successful read says nothing about which installation covers it.
    if (!repo.private && this.state.installations.has(identity.installationId)) return true;
    return this.canWrite(identity, repo);
  }

  /**
   * Writes need the repository's own installation, or, for a user, what `canRead` allows (and
   * for a classic token the `repo` scope, or `public_repo` on a public repository).
   */
  canWrite(identity: Identity, repo: SimRepo): boolean {
    if (identity.kind === "user") {
      if (!this.canRead(identity, repo)) return false;
      if (!hasScopes(identity.tokenKind) || identity.scopes.includes("repo")) return true;
      return !repo.private && identity.scopes.includes("public_repo");
    }
    if (identity.kind !== "installation") return false;
    const inst = this.state.installations.get(identity.installationId);
    if (!inst) return false;
    return this.state.installationFor(repo)?.id === inst.id;
  }

  /**
   * Resets state (users included), counters, faults, tokens, OIDC request tokens and the outbox;
   * keeps configuration and the OIDC signing keys.
   */
  reset(): void {
    this.state.reset();
    this.faults.clear();
    this.limits.reset();
    this.counter.reset();
    this.concurrency.resetCounts();
    this.tokens.reset();
    this.webhooks.reset();
    this.oidc.reset();
    this.fixedNow = null;
    this.offsetMs = 0;
  }

  private async authenticate(c: Context, mode: AuthMode): Promise<Identity> {
    const header = c.req.header("authorization") ?? "";
    if (mode === "client") {
      const basic = parseBasicAuth(header);
      if (!basic) throw new SimHttpError(401, "Requires authentication");
      const client = oauthClient(this);
      if (basic.id !== client.clientId || basic.secret !== client.clientSecret)
        throw badCredentials();
      return { kind: "client", clientId: basic.id };
    }
    const m = /^(?:token|bearer)\s+(\S+)$/i.exec(header.trim());
    if (!m) throw new SimHttpError(401, "Requires authentication");
    const credential = m[1]!;
    if (mode === "app") {
      await verifyAppJwt(
        credential,
        await this.appKey.catch(() => null),
        this.appId,
        `Iv1.sim${this.appId}`,
        this.now(),
      );
      return { kind: "app" };
    }
    if (credential.split(".").length === 3 && credential.startsWith("ey")) {
      throw new SimHttpError(
        401,
        "A JSON web token cannot be used to access this endpoint; use an installation token",
      );
    }
    const issued = this.tokens.lookup(credential, this.now());
    if (issued === "expired") throw badCredentials();
    if (issued) {
      const inst = this.state.installations.get(issued.installationId);
      if (!inst) throw badCredentials();
      if (inst.suspendedAt) throw new SimHttpError(403, "This installation has been suspended");
      return { kind: "installation", installationId: issued.installationId, token: credential };
    }
    const user = this.state.userByToken(credential);
    if (user) {
      const grant = user.tokens.get(credential)!;
      return {
        kind: "user",
        login: user.login,
        token: credential,
        registered: true,
        tokenKind: grant.kind,
        scopes: grant.scopes,
        clientId: grant.clientId,
      };
    }
    // `userTokens` stand for octocat, who sees everything; every other token is unknown.
    if (!this.userTokens.includes(credential) || credential.startsWith("ghs_"))
      throw badCredentials();
    const kind = tokenKindOf(credential);
    return {
      kind: "user",
      login: "octocat",
      token: credential,
      registered: false,
      tokenKind: kind,
      scopes: hasScopes(kind) ? ["repo"] : [],
      clientId: null,
    };
  }

  /**
   * Whose budget a request spends (primary and secondary limits): an installation, the App
   * (its JWT), the App's OAuth client, or a user (GitHub counts a user's tokens together).
   */
  identityKey(identity: Identity): string {
    if (identity.kind === "app") return "app";
    if (identity.kind === "client") return `client:${identity.clientId}`;
    if (identity.kind === "installation") return `installation:${identity.installationId}`;
    return `user:${identity.login.toLowerCase()}`;
  }

  private faultResponse(fault: RequestFault): Response {
    if (fault.network)
      return new Response(null, { status: 599, headers: { "x-sim-fault": "network" } });
    const status = fault.status ?? 500;
    const headers: Record<string, string> = { ...(fault.headers ?? {}) };
    if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter);
    let body = fault.body;
    if (body === undefined) {
      body =
        status === 403 || status === 429
          ? {
              message: SECONDARY_LIMIT_MESSAGE,
              documentation_url: SECONDARY_LIMIT_DOCS,
            }
          : { message: status >= 500 ? "Server Error" : "Simulated fault" };
    }
    return jsonResponse(status, body, headers);
  }

  /**
   * Registers one API route with the whole GitHub pipeline around its handler: fault plan,
   * authentication, primary rate limit, ETag/304, rate-limit headers and the request counter.
   */
  api(
    method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT",
    template: string,
    auth: AuthMode,
    resource: Resource | null,
    handler: (req: ApiRequest) => Promise<ApiResult> | ApiResult,
  ): void {
    this.route(method, template, template, auth, resource, handler);
    // GitHub serves every repository route by id too (undocumented): `/repositories/{id}/...`
    // answers exactly as `/repos/{owner}/{repo}/...` does for the repository's current name.
    if (template.startsWith(`${REPO_PREFIX}/`) || template === REPO_PREFIX) {
      const twin = BY_ID_PREFIX + template.slice(REPO_PREFIX.length);
      this.route(method, twin, template, auth, resource, (req) => {
        const id = Number(req.params.repository_id);
        const repo = Number.isSafeInteger(id) ? this.state.repoById(id) : undefined;
        if (!repo) throw new SimHttpError(404, "Not Found");
        return handler({ ...req, params: { ...req.params, owner: repo.owner, repo: repo.name } });
      });
    }
  }

  /** The name twin (`/repos/{owner}/{repo}/...`) of a `/repositories/{id}/...` path, if any. */
  private nameTwin(path: string): string | null {
    const m = /^\/repositories\/(\d+)(\/.*)?$/.exec(path);
    const repo = m ? this.state.repoById(Number(m[1])) : undefined;
    return repo ? `/repos/${repo.owner}/${repo.name}${m![2] ?? ""}` : null;
  }

  private route(
    method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT",
    template: string,
    canonical: string,
    auth: AuthMode,
    resource: Resource | null,
    handler: (req: ApiRequest) => Promise<ApiResult> | ApiResult,
  ): void {
    // `{path}` (a file path) spans segments, as in GitHub's contents routes.
    const honoPath = template.replace(/\{(\w+)\}/g, (_, name: string) =>
      name === "path" ? ":path{.+}" : `:${name}`,
    );
    const answer = async (c: Context): Promise<Response> => {
      const url = new URL(c.req.url);
      const text =
        method === "GET" || method === "DELETE"
          ? await c.req.text().catch(() => "")
          : await c.req.text();
      let parsed: unknown;
      let parseError = false;
      if (text !== "") {
        try {
          parsed = JSON.parse(text);
        } catch {
          parseError = true;
        }
      }
      const operation =
        template === "/graphql" && parsed && typeof parsed === "object"
          ? operationNameOf(
              String((parsed as { query?: unknown }).query ?? ""),
              (parsed as { operationName?: string }).operationName,
            )
          : null;
      const endpoint = `${method} ${template}${operation ? ` ${operation}` : ""}`;
      // Authentication has no side effects: it is decided first (whose request it is, for the
      // concurrency limit) and answered in turn, after the fault plan.
      const authenticated = await this.authenticate(c, auth).then(
        (identity) => ({ identity }),
        (error: unknown) => ({ error }),
      );
      const caller = "identity" in authenticated ? this.identityKey(authenticated.identity) : null;
      /** The request as GitHub answers it once admitted: faults, auth, limits, the handler. */
      const inner = async (): Promise<Response> => {
        // A fault rule written for a repository's name path also hits its by-id twin.
        const twinPath = template === canonical ? null : this.nameTwin(url.pathname);
        const fault = this.faults.takeRequestFault(
          method,
          twinPath ? [url.pathname, twinPath] : url.pathname,
          operation,
        );
        const replaces = fault && (fault.status !== undefined || fault.network);
        if (fault && fault.phase === "before") {
          if (fault.delayMs) await sleep(fault.delayMs);
          if (replaces) {
            const r = this.faultResponse(fault);
            this.counter.record(endpoint, r.status, false);
            return r;
          }
        }

        let response: Response;
        let billed = false;
        try {
          if ("error" in authenticated) throw authenticated.error;
          const { identity } = authenticated;
          const key = this.identityKey(identity);
          if (resource) this.limits.refresh(key);
          const limitHeaders = () => (resource ? this.limits.headers(key, resource) : {});
          if (resource && this.limits.exhausted(key, resource)) {
            this.concurrency.refusedForRateLimit(key);
            const who =
              identity.kind === "installation"
                ? `installation ID ${identity.installationId}`
                : "this token";
            response = jsonResponse(
              403,
              {
                message: `API rate limit exceeded for ${who}.`,
                documentation_url:
                  "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting",
              },
              limitHeaders(),
            );
          } else if (parseError) {
            response = jsonResponse(400, { message: "Problems parsing JSON" }, limitHeaders());
            if (resource) this.limits.consume(key, resource);
            billed = resource !== null;
          } else {
            const base = url.origin;
            const sender =
              identity.kind === "installation"
                ? `${this.appSlug}[bot]`
                : identity.kind === "user"
                  ? identity.login
                  : this.appSlug;
            const result = await Promise.resolve()
              .then(() =>
                handler({
                  c,
                  method,
                  template: canonical,
                  identity,
                  base,
                  params: c.req.param() as Record<string, string>,
                  query: url.searchParams,
                  json: () => parsed,
                  sender,
                  ctx: this.renderContext(base),
                }),
              )
              .catch((error: unknown): ApiResult => {
                if (error instanceof SimMoved) return movedResult(error, method, url);
                if (error instanceof SimHttpError) {
                  const body: Record<string, unknown> = {
                    message: error.message,
                    documentation_url: "https://docs.github.com/rest",
                  };
                  if (error.errors) body.errors = error.errors;
                  return { status: error.status, body } satisfies ApiResult;
                }
                throw error;
              });
            const headers: Record<string, string> = { ...(result.headers ?? {}) };
            let status = result.status;
            let body = result.body;
            if (method === "GET" && status === 200) {
              const etag = `W/"${(await sha256Hex(JSON.stringify(body))).slice(0, 40)}"`;
              headers.etag = etag;
              const inm = c.req.header("if-none-match");
              if (inm?.split(/\s*,\s*/).includes(etag)) {
                status = 304;
                body = undefined;
              }
            }
            // A 304 costs nothing against the primary rate limit (GitHub's documented rule).
            if (resource && status !== 304) {
              this.limits.consume(key, resource);
              billed = true;
            }
            response = jsonResponse(status, body, { ...headers, ...limitHeaders() });
          }
        } catch (error) {
          if (!(error instanceof SimHttpError)) throw error;
          response = jsonResponse(
            error.status,
            { message: error.message, documentation_url: "https://docs.github.com/rest" },
            {},
          );
        }
        // A classic token's scopes come with every answer to it, as GitHub sends them.
        if ("identity" in authenticated) {
          const { identity } = authenticated;
          if (identity.kind === "user" && hasScopes(identity.tokenKind))
            response.headers.set("x-oauth-scopes", identity.scopes.join(", "));
        }

        if (fault && fault.phase === "after") {
          if (fault.delayMs) await sleep(fault.delayMs);
          if (replaces) response = this.faultResponse(fault);
        }
        response.headers.set("x-github-request-id", crypto.randomUUID().slice(0, 18).toUpperCase());
        this.counter.record(endpoint, response.status, billed);
        return response;
      };
      if (caller !== null && !this.concurrency.enter(caller)) {
        // Over the secondary limit: GitHub refuses before doing anything (no fault rule used).
        const refused = jsonResponse(
          403,
          { message: SECONDARY_LIMIT_MESSAGE, documentation_url: SECONDARY_LIMIT_DOCS },
          {
            "retry-after": String(this.concurrency.retryAfterSeconds),
            ...(resource ? this.limits.headers(caller, resource) : {}),
          },
        );
        refused.headers.set("x-github-request-id", crypto.randomUUID().slice(0, 18).toUpperCase());
        this.counter.record(endpoint, 403, false);
        return refused;
      }
      try {
        return await inner();
      } finally {
        if (caller !== null) this.concurrency.leave(caller);
      }
    };

    this.app.on(method, honoPath, async (c) => {
      this.answering += 1;
      try {
        return await answer(c);
      } finally {
        this.answering -= 1;
        if (this.answering === 0) for (const resolve of this.quiet.splice(0)) resolve();
      }
    });
  }

  /**
   * Resolves once no API request is being answered: a delayed answer its client gave up on has
   * finished (and been counted) on the server.
   */
  settled(): Promise<void> {
    if (this.answering === 0) return Promise.resolve();
    return new Promise((resolve) => this.quiet.push(resolve));
  }
}

export function createGitHubSimulator(opts: SimulatorOptions = {}): GitHubSimulator {
  return new GitHubSimulator(opts);
}

/**
 * A `fetch` that calls the simulator in-process. A simulated network fault surfaces as the
 * TypeError a real fetch throws; an abort signal is honoured like a real fetch.
 */
export function simulatorFetch(sim: GitHubSimulator): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const signal = init?.signal ?? request.signal;
    if (signal?.aborted)
      throw signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
    const pending = sim.fetch(request);
    // An aborted caller stops waiting; the simulator finishes the request on its own.
    pending.catch(() => undefined);
    const response = await (signal
      ? Promise.race([
          pending,
          new Promise<never>((_, reject) =>
            signal.addEventListener(
              "abort",
              () =>
                reject(
                  signal.reason ?? new DOMException("The operation was aborted.", "AbortError"),
                ),
              { once: true },
            ),
          ),
        ])
      : pending);
    if (response.headers.get("x-sim-fault") === "network")
      throw new TypeError("fetch failed", { cause: new Error("socket hang up (simulated)") });
    return response;
  };
}
