// A small in-memory stand-in for the Worker's fleet API (docs/api.md), for CLI tests that need
// to script what the server answers (a lost claim, a 503 on one heartbeat) without the Worker.
// The real Worker is exercised by test/e2e/work.test.ts.

export interface FakeClaim {
  claimId: string;
  number: number;
  agentId: string;
  fence: number;
  branch: string;
  expiresAt: string;
}

export interface FakeRequest {
  method: string;
  path: string;
  search: string;
  authorization: string | null;
  body: unknown;
}

/** A scripted answer: a Response, or "network" for a connection failure; undefined: normal. */
export type Fault = (request: FakeRequest) => Response | "network" | undefined;

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });

export class FakeFleet {
  /** Issues claim-next hands out, in order. */
  queue: number[];
  fence = 0;
  readonly live = new Map<number, FakeClaim>();
  readonly released: { number: number; fence: number; outcome: string; note?: string }[] = [];
  readonly comments: { number: number; body: string }[] = [];
  readonly requests: FakeRequest[] = [];
  fault: Fault = () => undefined;
  /** While set, claim-next with nothing to hand out answers as the breaker's pause does. */
  pausedSince: string | null = null;
  /** Issues with unanswered input: a claim-next asking for `reply` gets them as replies. */
  readonly replies = new Map<number, { reason: string; url: string; author: string; at: string }>();

  readonly repo: string;

  constructor(issues: number[], repo = "acme/app") {
    this.queue = [...issues];
    this.repo = repo;
  }

  private grant(number: number, body: { agentId: string; ttlSeconds?: number; kinds?: string[] }) {
    const reply = this.replies.get(number);
    const kind = reply !== undefined && body.kinds?.includes("reply") ? "reply" : "work";
    this.fence += 1;
    const claim: FakeClaim = {
      claimId: `claim-${this.fence}`,
      number,
      agentId: body.agentId,
      fence: this.fence,
      branch: `issue/${number}-work`,
      expiresAt: new Date(Date.now() + (body.ttlSeconds ?? 1800) * 1000).toISOString(),
    };
    this.live.set(number, claim);
    this.queue = this.queue.filter((n) => n !== number);
    const { number: _n, agentId: _a, ...rest } = claim;
    return json(201, {
      ...rest,
      kind,
      issue: {
        number,
        title: `Issue ${number}`,
        url: `https://github.com/${this.repo}/issues/${number}`,
        ...(reply !== undefined ? { reply } : {}),
      },
    });
  }

  private fenced(number: number, body: { claimId?: string; fence?: number }) {
    const claim = this.live.get(number);
    if (!claim || claim.claimId !== body.claimId || claim.fence !== body.fence) {
      return {
        error: json(409, { error: "stale-fence", message: `not the live claim of #${number}` }),
      };
    }
    return { claim };
  }

  readonly fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const text = await request.text();
    const seen: FakeRequest = {
      method: request.method,
      path: url.pathname,
      search: url.search,
      authorization: request.headers.get("authorization"),
      body: text === "" ? undefined : JSON.parse(text),
    };
    this.requests.push(seen);
    const faulted = this.fault(seen);
    if (faulted === "network")
      throw new TypeError("fetch failed", { cause: new Error("ECONNRESET") });
    if (faulted) return faulted;
    return this.answer(seen);
  }) as typeof fetch;

  private answer(r: FakeRequest): Response {
    const prefix = `/v1/repos/${this.repo}`;
    if (!r.path.startsWith(prefix)) return json(404, { error: "not-found", message: r.path });
    const path = r.path.slice(prefix.length);
    const body = (r.body ?? {}) as Record<string, unknown>;
    const issue = /^\/issues\/(\d+)\//.exec(path);
    const number = issue ? Number(issue[1]) : 0;
    const route = `${r.method} ${path.replace(/^\/issues\/\d+\//, "/issues/{n}/")}`;
    switch (route) {
      case "GET /queue":
        return json(200, {
          repo: this.repo,
          order: "number",
          items: this.queue.map((n) => ({
            number: n,
            title: `Issue ${n}`,
            url: `https://github.com/${this.repo}/issues/${n}`,
            reason: "kick",
            labels: ["agent:ready"],
            requires: [],
            impact: 0,
            attempts: 0,
          })),
          total: this.queue.length,
        });
      case "POST /claims": {
        const next = this.queue.find((n) => !this.live.has(n));
        if (next === undefined) {
          // The circuit breaker's pause: 204 saying since when, and when to ask again.
          const headers: Record<string, string> =
            this.pausedSince === null
              ? {}
              : { "x-switchyard-paused": this.pausedSince, "retry-after": "60" };
          return new Response(null, { status: 204, headers });
        }
        return this.grant(next, body as { agentId: string });
      }
      case "GET /claims":
        return json(200, {
          claims: [...this.live.values()].map((c) => ({
            ...c,
            machine: null,
            grantedAt: new Date().toISOString(),
          })),
        });
      case "POST /issues/{n}/claim": {
        const holder = this.live.get(number);
        if (holder) {
          return json(409, {
            error: "conflict",
            reason: "held",
            message: `#${number} is claimed`,
            holder: { agentId: holder.agentId, source: "switchyard", expiresAt: holder.expiresAt },
          });
        }
        return this.grant(number, body as { agentId: string });
      }
      case "POST /issues/{n}/claim/heartbeat": {
        const { claim, error } = this.fenced(number, body);
        if (error) return error;
        claim.expiresAt = new Date(Date.now() + 1_800_000).toISOString();
        return json(200, {
          claimId: claim.claimId,
          fence: claim.fence,
          expiresAt: claim.expiresAt,
        });
      }
      case "POST /issues/{n}/claim/release": {
        const { claim, error } = this.fenced(number, body);
        if (error) return error;
        this.live.delete(number);
        this.released.push({
          number,
          fence: claim.fence,
          outcome: body.outcome as string,
          ...(body.note === undefined ? {} : { note: body.note as string }),
        });
        return json(200, {
          claimId: claim.claimId,
          fence: claim.fence,
          outcome: body.outcome,
          releasedAt: new Date().toISOString(),
        });
      }
      case "POST /issues/{n}/comments": {
        const { error } = this.fenced(number, body);
        if (error) return error;
        this.comments.push({ number, body: body.body as string });
        return json(201, {
          id: this.comments.length,
          url: `https://github.com/c/${this.comments.length}`,
        });
      }
      default:
        return json(404, { error: "not-found", message: `no route ${route}` });
    }
  }

  /** Requests to one route (`POST /issues/{n}/claim/heartbeat`-style suffix match). */
  count(method: string, suffix: string): number {
    return this.requests.filter((r) => r.method === method && r.path.endsWith(suffix)).length;
  }
}
