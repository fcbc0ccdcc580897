// The GitHub client: Octokit for requests and auth, wrapped in switchyard's retry rules
// (retry-policy.ts), typed errors (errors.ts) and request accounting. Web-standard fetch only.
import { Octokit } from "@octokit/core";
import { type GitHubAuth, octokitAuthOptions } from "./auth.ts";
import { GitHubApiError, type GitHubErrorKind, RepositoryMismatchError } from "./errors.ts";
import { bucketOf, DEFAULT_PACE_BELOW, RateLimitPacer } from "./pacing.ts";
import {
  backoffMs,
  DEFAULT_RETRY_POLICY,
  type RetryPolicy,
  rateLimitSignal,
} from "./retry-policy.ts";

export interface GitHubClientOptions {
  auth: GitHubAuth;
  /** `https://api.github.com` (default), the simulator, or `https://HOST/api/v3` (Enterprise). */
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Per-attempt timeout in milliseconds (default 15 s). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Injectable for tests: how the client waits between attempts. */
  sleep?: (ms: number) => Promise<void>;
  /** Injectable jitter source in [0, 1). */
  random?: () => number;
  now?: () => number;
  userAgent?: string;
  /**
   * Under this fraction of `x-ratelimit-limit` remaining, requests are spaced so the bucket
   * lasts until `x-ratelimit-reset` (pacing.ts; default 0.1, 0 turns pacing off).
   */
  paceBelow?: number;
  /**
   * The rate-limit state pacing reads; by default the client's own. Clients acting as one
   * identity (one installation, one token) may share one so their requests are spaced together.
   */
  rateLimitState?: RateLimitPacer;
  /**
   * The repository this client serves (a RepoObject's): every `/repos/{owner}/{repo}/...`
   * request naming it goes to `/repositories/{id}/...` instead, so a rename, or another
   * repository created under its former name, never redirects a request to the wrong one.
   * GraphQL readers compare the answer's `databaseId` with `id` (RepositoryMismatchError).
   */
  repository?: { id: number; fullName: string };
}

export interface RequestSpec {
  /** What switchyard is doing, for error messages: `close acme/app#5 as completed`. */
  operation: string;
  /** Octokit route, e.g. `POST /repos/{owner}/{repo}/issues/{issue_number}/labels`. */
  route: string;
  params?: Record<string, unknown>;
  headers?: Record<string, string>;
  /**
   * Safe to send twice: reads, PUT/DELETE, and writes whose repetition changes nothing
   * (adding a label that is already there). Non-idempotent writes are never retried after a
   * 5xx, network error or timeout, because the first attempt may have been applied.
   */
  idempotent: boolean;
  /**
   * `manual`: a 3xx is answered as it is (status and `location`), not followed. Confirming a
   * removal needs it: a 301 for an issue means it was transferred.
   */
  redirect?: "manual";
  /**
   * The request names another repository on purpose. A client pinned to one repository
   * (`repository` option) refuses any other write naming another repository (see `addressById`).
   */
  crossRepository?: boolean;
  /**
   * Read the JSON answer with the platform's `JSON.parse`. Octokit's own parser runs a reviver
   * over every value (to keep integers past 2^53 exact), which allocates for each value: a
   * GraphQL page of 100 issues is thousands of them. For answers with no such integer.
   */
  plainJson?: boolean;
  /**
   * A bound the request never outlives (a fenced write's deadline, shared/claims/write-records.ts):
   * no wait (pacing, a rate limit, a retry's backoff) that would end at or after `atMs` (the
   * client's clock) is started, and `signal`, which the caller aborts at that instant, aborts
   * an attempt in flight. Either way a `deadline` GitHubApiError.
   */
  deadline?: { atMs: number; signal: AbortSignal };
}

export interface GitHubResponse<T> {
  status: number;
  data: T;
  headers: Record<string, string | undefined>;
}

export interface ClientStats {
  /** HTTP attempts sent, including retries. */
  requests: number;
  retries: number;
  rateLimitWaits: number;
  /** Requests held back to space them out before the limit (pacing.ts), and for how long. */
  paceWaits: number;
  pacedMs: number;
  notModified: number;
  byRoute: Record<string, number>;
  /** The last `x-ratelimit-*` values seen. */
  rateLimit: { limit: number; remaining: number; reset: number; resource: string } | null;
  /** The last `x-ratelimit-*` values seen of each resource (`core`, `graphql`, ...). */
  rateLimits: Record<string, { limit: number; remaining: number; reset: number }>;
}

interface Failure {
  kind: GitHubErrorKind;
  status: number | null;
  headers: Record<string, string | undefined>;
  reason: string;
}

const TRANSIENT = new Set<GitHubErrorKind>(["server", "network", "timeout"]);

const SILENT_LOG = { debug() {}, info() {}, warn() {}, error() {} };

const BY_NAME = /^(\w+) \/repos\/\{owner\}\/\{repo\}(?=\/|$)/;

/**
 * A write a client pinned to one repository was asked to send to another repository by name:
 * most likely its own former name (read before a rename), which may belong to another
 * repository now. Refused before anything is sent; a RepositoryMismatchError, so the RepoObject
 * reads its repository again by id before it writes again.
 */
export class ForeignRepositoryWriteError extends RepositoryMismatchError {
  override name = "ForeignRepositoryWriteError";
  constructor(route: string, named: string, repository: { id: number; fullName: string }) {
    super({ expectedId: repository.id, foundId: null, fullName: named });
    this.message = `${route.split(" ")[0]} names ${named}, but this client writes only to repository ${repository.id} (${repository.fullName}): refused, nothing was sent`;
  }
}

/**
 * `route` and `params` addressed by repository id when they name `repository` (case-insensitive,
 * as GitHub's names are); anything else unchanged. GitHub serves every `/repos/{owner}/{repo}`
 * route under `/repositories/{id}` too (not in its OpenAPI description; the simulator's
 * contract lists those routes by their name twins).
 *
 * A write (any method but GET) naming another repository than `repository` throws
 * ForeignRepositoryWriteError unless `crossRepository` says it is meant to: a name read before a
 * rename would otherwise go by name, maybe to another repository that took that name. Reads of
 * other repositories (cross-repository blockers) go by name as before.
 */
export function addressById(
  route: string,
  params: Record<string, unknown>,
  repository: { id: number; fullName: string } | undefined,
  options: { crossRepository?: boolean | undefined } = {},
): { route: string; params: Record<string, unknown> } {
  if (!repository || !BY_NAME.test(route)) return { route, params };
  const named = `${String(params.owner)}/${String(params.repo)}`;
  if (named.toLowerCase() !== repository.fullName.toLowerCase()) {
    if (!/^GET /.test(route) && options.crossRepository !== true) {
      throw new ForeignRepositoryWriteError(route, named, repository);
    }
    return { route, params };
  }
  const { owner: _owner, repo: _repo, ...rest } = params;
  return {
    route: route.replace(BY_NAME, "$1 /repositories/{repository_id}"),
    params: { ...rest, repository_id: repository.id },
  };
}

function expand(route: string, params: Record<string, unknown>): string {
  return route.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = params[name];
    return v === undefined ? `{${name}}` : encodeURIComponent(String(v));
  });
}

function classify(error: unknown): Failure {
  const e = error as {
    status?: number;
    name?: string;
    message?: string;
    response?: { headers?: Record<string, string>; data?: unknown };
    cause?: { name?: string; message?: string };
  };
  if (e && typeof e === "object" && e.response && typeof e.status === "number") {
    const data = e.response.data as { message?: unknown } | string | undefined;
    const reason =
      typeof data === "object" && data && typeof data.message === "string"
        ? data.message
        : typeof data === "string" && data !== ""
          ? data.slice(0, 200)
          : (e.message ?? `HTTP ${e.status}`);
    const s = e.status;
    const kind: GitHubErrorKind =
      s >= 500
        ? "server"
        : s === 401
          ? "unauthorized"
          : s === 403
            ? "forbidden"
            : s === 404 || s === 410
              ? "not-found"
              : s === 422
                ? "invalid"
                : "http";
    return { kind, status: s, headers: e.response.headers ?? {}, reason };
  }
  const causeName = e?.cause?.name ?? e?.name;
  if (causeName === "TimeoutError" || causeName === "AbortError") {
    return { kind: "timeout", status: null, headers: {}, reason: "no response before the timeout" };
  }
  const message = e?.cause?.message ?? e?.message ?? String(error);
  return { kind: "network", status: null, headers: {}, reason: message };
}

export class GitHubClient {
  readonly baseUrl: string;
  readonly stats: ClientStats = {
    requests: 0,
    retries: 0,
    rateLimitWaits: 0,
    paceWaits: 0,
    pacedMs: 0,
    notModified: 0,
    byRoute: {},
    rateLimit: null,
    rateLimits: {},
  };
  private readonly octokit: Octokit;
  private readonly policy: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly appAuth: boolean;
  private readonly paceBelow: number;
  private readonly pacer: RateLimitPacer;
  readonly repository: { id: number; fullName: string } | undefined;
  /** The deadline every request of this client keeps (a view made by `bounded`). */
  private deadline: RequestSpec["deadline"];

  constructor(options: GitHubClientOptions) {
    this.repository = options.repository;
    this.appAuth = options.auth.kind === "app";
    this.baseUrl = (options.baseUrl ?? "https://api.github.com").replace(/\/+$/, "");
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
    this.now = options.now ?? (() => Date.now());
    this.paceBelow = options.paceBelow ?? DEFAULT_PACE_BELOW;
    this.pacer = options.rateLimitState ?? new RateLimitPacer();
    const fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
    this.octokit = new Octokit({
      baseUrl: this.baseUrl,
      userAgent: options.userAgent ?? "switchyard",
      log: SILENT_LOG,
      request: { fetch: fetchFn },
      ...octokitAuthOptions(options.auth, this.now),
    });
  }

  /**
   * This client, every request of which keeps `deadline` (a fenced write's: see
   * `RequestSpec.deadline`). The view shares everything else (token, pacing, counters).
   */
  bounded(deadline: NonNullable<RequestSpec["deadline"]>): GitHubClient {
    const view = Object.create(this) as GitHubClient;
    view.deadline = deadline;
    return view;
  }

  /** GraphQL lives at `/graphql` on github.com and at `/api/graphql` on Enterprise. */
  get graphqlUrl(): string {
    return /\/api\/v3$/.test(this.baseUrl)
      ? this.baseUrl.replace(/\/api\/v3$/, "/api/graphql")
      : `${this.baseUrl}/graphql`;
  }

  private observe(route: string, headers: Record<string, string | undefined>): void {
    this.pacer.observe(headers, bucketOf(route));
    this.stats.requests += 1;
    this.stats.byRoute[route] = (this.stats.byRoute[route] ?? 0) + 1;
    const remaining = headers["x-ratelimit-remaining"];
    if (remaining !== undefined) {
      this.stats.rateLimit = {
        limit: Number(headers["x-ratelimit-limit"]),
        remaining: Number(remaining),
        reset: Number(headers["x-ratelimit-reset"]),
        resource: headers["x-ratelimit-resource"] ?? "core",
      };
      const { resource, ...reading } = this.stats.rateLimit;
      this.stats.rateLimits[resource] = reading;
    }
  }

  /**
   * Sends one logical request with switchyard's retry rules. A 304 is returned (not thrown) so
   * conditional requests read naturally; every other failure throws GitHubApiError.
   */
  async send<T>(spec: RequestSpec): Promise<GitHubResponse<T>> {
    // Counted under the route as written (the `/repos/{owner}/{repo}` twin), sent by id.
    const templ0 = spec.route;
    const { route, params } = addressById(spec.route, spec.params ?? {}, this.repository, {
      crossRepository: spec.crossRepository,
    });
    const method = route.split(" ")[0]!;
    const path = route.slice(method.length + 1);
    const described = `${method} ${path.startsWith("http") ? new URL(path).pathname : expand(path, params)}`;
    const templ = path.startsWith("http") ? `${method} ${new URL(path).pathname}` : templ0;
    let retries = 0;
    let rateLimitRetries = 0;
    let refreshedToken = false;
    const bucket = bucketOf(templ);
    let waitedForLimit = false;
    const deadline = spec.deadline ?? this.deadline;
    // The request's deadline came (or would come during a wait): nothing more is sent. Whatever
    // was sent in flight, or failed in transit before, may have been applied.
    const pastDeadline = (attempts: number, inFlight: boolean, reason: string) =>
      new GitHubApiError({
        kind: "deadline",
        operation: spec.operation,
        request: described,
        status: null,
        attempts,
        reason,
        outcome: method === "GET" ? undefined : inFlight || retries > 0 ? "unknown" : "not-applied",
      });
    for (let attempt = 1; ; attempt++) {
      // Low on requests: space them so the bucket lasts until it resets (pacing.ts). A wait
      // longer than the client accepts for a rate limit is a `rate-limited` refusal instead,
      // before anything is sent (the Worker turns it into a later alarm). Right after waiting
      // out a rate-limit answer, the wait GitHub asked for stands in for the spacing.
      const now = this.now();
      const pace = waitedForLimit ? 0 : this.pacer.delayFor(bucket, this.paceBelow, now);
      waitedForLimit = false;
      if (pace > this.policy.maxRateLimitWaitMs) {
        throw new GitHubApiError({
          kind: "rate-limited",
          operation: spec.operation,
          request: described,
          status: null,
          attempts: attempt - 1,
          reason: `${this.pacer.bucket(bucket)?.remaining ?? 0} requests left of the ${bucket} rate limit; the next one may go out in ${Math.ceil(pace / 1000)} s`,
          // An earlier attempt that failed in transit may have been applied.
          outcome: method === "GET" ? undefined : retries > 0 ? "unknown" : "not-applied",
          retryAfterMs: pace,
        });
      }
      if (deadline && (deadline.signal.aborted || now + pace >= deadline.atMs)) {
        throw pastDeadline(attempt - 1, false, "the write's deadline came before it could be sent");
      }
      this.pacer.sent(bucket, now + pace);
      if (pace > 0) {
        this.stats.paceWaits += 1;
        this.stats.pacedMs += pace;
        await this.sleep(pace);
      }
      const timeout = AbortSignal.timeout(this.timeoutMs);
      const signal = deadline ? AbortSignal.any([timeout, deadline.signal]) : timeout;
      try {
        const res = await this.octokit.request(route, {
          ...params,
          headers: spec.headers,
          request: {
            signal,
            ...(spec.redirect ? { redirect: spec.redirect } : {}),
            ...(spec.plainJson ? { parseSuccessResponseBody: false } : {}),
          },
        });
        const headers = res.headers as Record<string, string | undefined>;
        this.observe(templ, headers);
        const data = spec.plainJson ? await plainJson(res.data as ReadableStream | null) : res.data;
        return { status: res.status, data: data as T, headers };
      } catch (error) {
        if (deadline?.signal.aborted && !timeout.aborted) {
          throw pastDeadline(
            attempt,
            true,
            "aborted at the write's deadline, before GitHub answered",
          );
        }
        const failure = classify(error);
        this.observe(templ, failure.headers);
        if (failure.status === 304) {
          this.stats.notModified += 1;
          return { status: 304, data: undefined as T, headers: failure.headers };
        }
        const fail = (kind: GitHubErrorKind, extra: { retryAfterMs?: number } = {}) =>
          new GitHubApiError({
            kind,
            operation: spec.operation,
            request: described,
            status: failure.status,
            attempts: attempt,
            reason: failure.reason,
            outcome: method === "GET" ? undefined : TRANSIENT.has(kind) ? "unknown" : "not-applied",
            ...(failure.headers.date ? { responseDate: failure.headers.date } : {}),
            ...extra,
          });
        const limit =
          failure.status === null
            ? null
            : rateLimitSignal(failure.status, failure.headers, failure.reason, this.now());
        if (limit) {
          // A rate-limited request was refused before it did anything: any request may be retried.
          if (
            rateLimitRetries >= this.policy.maxRateLimitRetries ||
            limit.waitMs > this.policy.maxRateLimitWaitMs
          ) {
            throw fail("rate-limited", { retryAfterMs: limit.waitMs });
          }
          if (deadline && this.now() + limit.waitMs >= deadline.atMs) {
            throw pastDeadline(
              attempt,
              false,
              `GitHub asked to wait ${Math.ceil(limit.waitMs / 1000)} s, past the write's deadline`,
            );
          }
          rateLimitRetries += 1;
          this.stats.rateLimitWaits += 1;
          waitedForLimit = true;
          await this.sleep(limit.waitMs);
          continue;
        }
        // An installation token can die before its expiry (revoked, permissions changed):
        // mint a fresh one once and try again; the refused request did nothing.
        if (
          failure.kind === "unauthorized" &&
          this.appAuth &&
          !refreshedToken &&
          !/^\S+ \/app\b/.test(templ)
        ) {
          refreshedToken = true;
          try {
            await this.octokit.auth({ type: "installation", refresh: true });
          } catch (refreshError) {
            const f = classify(refreshError);
            throw new GitHubApiError({
              kind: f.kind,
              operation: `${spec.operation} (minting a new installation token after a 401)`,
              request: "POST /app/installations/{installation_id}/access_tokens",
              status: f.status,
              attempts: 1,
              reason: f.reason,
            });
          }
          continue;
        }
        const transient = TRANSIENT.has(failure.kind);
        if (transient && spec.idempotent && retries < this.policy.maxRetries) {
          const backoff = backoffMs(this.policy, retries + 1, this.random);
          if (deadline && this.now() + backoff >= deadline.atMs) throw fail(failure.kind);
          retries += 1;
          this.stats.retries += 1;
          await this.sleep(backoff);
          continue;
        }
        throw fail(failure.kind);
      }
    }
  }

  /** Runs a GraphQL query (always idempotent: switchyard sends no GraphQL mutations). */
  async graphql<T>(
    operation: string,
    query: string,
    variables: Record<string, unknown>,
  ): Promise<T> {
    const res = await this.send<{ data?: T; errors?: { message: string; type?: string }[] }>({
      operation,
      route: `POST ${this.graphqlUrl}`,
      params: { query, variables },
      idempotent: true,
      // GraphQL answers hold no integer past 2^53: GitHub's Int is 32-bit, its BigInt a string.
      plainJson: true,
    });
    const body = res.data;
    const name = /^\s*query\s+(\w+)/.exec(query)?.[1] ?? "query";
    if (!body || typeof body !== "object") {
      throw new GitHubApiError({
        kind: "bad-response",
        operation,
        request: `POST /graphql ${name}`,
        status: res.status,
        attempts: 1,
        reason: "the answer is not a JSON object",
      });
    }
    if (body.errors && body.errors.length > 0) {
      const first = body.errors[0]!;
      throw new GitHubApiError({
        kind:
          first.type === "NOT_FOUND"
            ? "not-found"
            : first.type === "FORBIDDEN"
              ? "forbidden"
              : "graphql",
        operation,
        request: `POST /graphql ${name}`,
        status: res.status,
        attempts: 1,
        reason: body.errors.map((e) => e.message).join("; "),
      });
    }
    if (body.data === undefined || body.data === null) {
      throw new GitHubApiError({
        kind: "bad-response",
        operation,
        request: `POST /graphql ${name}`,
        status: res.status,
        attempts: 1,
        reason: "the answer has no data",
      });
    }
    return body.data;
  }
}

/** An answer's body as JSON (its text when it is not JSON, undefined when empty), as Octokit reads it. */
async function plainJson(body: ReadableStream | null): Promise<unknown> {
  if (body === null) return undefined;
  const text = await new Response(body).text();
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
