// `switchyard work`: the claim → run → heartbeat → release loop, with a scripted fleet API and
// scripted child processes, so every branch (lost claim, grace period, Ctrl-C, a command that
// cannot start, a flaky server) is deterministic. test/e2e/work.test.ts runs it for real.
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../../functions/cli/io.ts";
import { main } from "../../../functions/cli/main.ts";
import {
  type ChildExit,
  type ChildHandle,
  type InterruptSignal,
  nodeProcesses,
  type ProcessIo,
  type StopSignal,
} from "../../../functions/cli/processes.ts";
import { FakeFleet } from "../fleet/fake-fleet.ts";

const SERVER = "https://fleet.example";
const BASE = ["work", "--server", SERVER, "--repo", "acme/app", "--agent-id", "bot-1"];

/** How a fake child behaves once started; it may call `exit` now or later. */
type Behaviour = (child: FakeChild) => void;

class FakeChild implements ChildHandle {
  readonly pid: number;
  readonly signals: StopSignal[] = [];
  readonly exited: Promise<ChildExit>;
  /** What SIGTERM does (default: the child exits by it). */
  onTerm: () => void = () => this.exit({ code: null, signal: "SIGTERM" });
  private resolve!: (exit: ChildExit) => void;
  private done = false;

  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;

  constructor(pid: number, command: string, args: readonly string[], env: Record<string, string>) {
    this.pid = pid;
    this.command = command;
    this.args = args;
    this.env = env;
    this.exited = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  exit(exit: ChildExit) {
    if (this.done) return;
    this.done = true;
    this.resolve(exit);
  }

  kill(signal: StopSignal) {
    this.signals.push(signal);
    if (signal === "SIGKILL") this.exit({ code: null, signal: "SIGKILL" });
    else this.onTerm();
  }
}

class FakeProcesses implements ProcessIo {
  readonly children: FakeChild[] = [];
  private handlers = new Set<(signal: InterruptSignal) => void>();
  private behave: Behaviour;
  constructor(behave: Behaviour) {
    this.behave = behave;
  }

  spawn(command: string, args: readonly string[], env: Record<string, string>) {
    const child = new FakeChild(1000 + this.children.length, command, args, env);
    this.children.push(child);
    queueMicrotask(() => this.behave(child));
    return child;
  }

  onInterrupt(handler: (signal: InterruptSignal) => void) {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  interrupt(signal: InterruptSignal) {
    for (const h of this.handlers) h(signal);
  }

  get listening() {
    return this.handlers.size;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(what: string, check: () => boolean, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function run(
  argv: string[],
  opts: {
    fleet: FakeFleet;
    processes?: ProcessIo;
    env?: Record<string, string>;
    now?: () => Date;
  },
) {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    readFile: async () => "",
    env: { SWITCHYARD_TOKEN: "fleet-key", PATH: process.env.PATH ?? "", ...opts.env },
    now: opts.now ?? (() => new Date()),
    fetch: opts.fleet.fetch,
    processes: opts.processes,
  };
  const code = main(argv, io);
  return {
    code,
    stdout: () => stdout,
    stderr: () => stderr,
    events: () =>
      stderr
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { event: string } & Record<string, unknown>),
  };
}

describe("switchyard work", () => {
  it("runs the command for each issue until the queue is empty: exit 0 → done, else failed", async () => {
    const fleet = new FakeFleet([3, 4, 5]);
    const codes = [0, 3, 0];
    const processes = new FakeProcesses((child) =>
      child.exit({ code: codes.shift()!, signal: null }),
    );
    const r = run([...BASE, "--", "agent", "--flag", "$SWITCHYARD_ISSUE"], { fleet, processes });
    expect(await r.code).toBe(0);
    expect(fleet.released).toEqual([
      { number: 3, fence: 1, outcome: "done", note: "exit code 0" },
      { number: 4, fence: 2, outcome: "failed", note: "exit code 3" },
      { number: 5, fence: 3, outcome: "done", note: "exit code 0" },
    ]);
    // No shell: the arguments arrive as given.
    expect(processes.children.map((c) => [c.command, c.args])).toEqual([
      ["agent", ["--flag", "$SWITCHYARD_ISSUE"]],
      ["agent", ["--flag", "$SWITCHYARD_ISSUE"]],
      ["agent", ["--flag", "$SWITCHYARD_ISSUE"]],
    ]);
    expect(processes.children[1]!.env).toMatchObject({
      SWITCHYARD_ISSUE: "4",
      SWITCHYARD_BRANCH: "issue/4-work",
      SWITCHYARD_FENCE: "2",
      SWITCHYARD_CLAIM_ID: "claim-2",
      SWITCHYARD_SERVER: SERVER,
      SWITCHYARD_REPO: "acme/app",
      SWITCHYARD_AGENT_ID: "bot-1",
      SWITCHYARD_ISSUE_URL: "https://github.com/acme/app/issues/4",
      SWITCHYARD_TOKEN: "fleet-key",
      PATH: process.env.PATH ?? "",
    });
    // stdout is the command's; the CLI's own lines are JSON on stderr.
    expect(r.stdout()).toBe("");
    const events = r.events();
    expect(events.map((e) => e.event)).toEqual([
      ...["claimed", "started", "exited", "released"],
      ...["claimed", "started", "exited", "released"],
      ...["claimed", "started", "exited", "released"],
      "queue-empty",
      "stopped",
    ]);
    expect(events.at(-1)).toEqual({
      event: "stopped",
      reason: "queue-empty",
      runs: 3,
      done: 2,
      failed: 1,
      abandoned: 0,
      lost: 0,
    });
    expect(processes.listening).toBe(0);
  });

  it("--kinds reply takes replies: the command learns the kind and the input to answer", async () => {
    const fleet = new FakeFleet([7, 8]);
    const reply = {
      reason: "unanswered-human-comment",
      url: "https://github.com/acme/app/issues/7#issuecomment-70",
      author: "alice",
      at: "2026-12-01T00:00:00Z",
    };
    fleet.replies.set(7, reply);
    const processes = new FakeProcesses((child) => child.exit({ code: 0, signal: null }));
    const r = run([...BASE, "--kinds", "reply,kick", "--", "agent"], { fleet, processes });
    expect(await r.code).toBe(0);
    const claimNext = fleet.requests.filter(
      (q) => q.method === "POST" && q.path.endsWith("/claims"),
    );
    expect(claimNext.map((q) => (q.body as { kinds?: string[] }).kinds)).toEqual([
      ["reply", "kick"],
      ["reply", "kick"],
      ["reply", "kick"],
    ]);
    expect(processes.children[0]!.env).toMatchObject({
      SWITCHYARD_ISSUE: "7",
      SWITCHYARD_KIND: "reply",
      SWITCHYARD_REPLY_URL: reply.url,
      SWITCHYARD_REPLY_REASON: reply.reason,
    });
    expect(processes.children[1]!.env).toMatchObject({
      SWITCHYARD_ISSUE: "8",
      SWITCHYARD_KIND: "work",
    });
    expect(processes.children[1]!.env).not.toHaveProperty("SWITCHYARD_REPLY_URL");
  });

  it("--kinds is checked before anything is claimed", async () => {
    const fleet = new FakeFleet([7]);
    const r = run([...BASE, "--kinds", "replies", "--", "agent"], { fleet });
    expect(await r.code).toBe(2);
    expect(r.stderr()).toContain("kinds");
    expect(fleet.requests).toEqual([]);
  });

  it("with --once runs one issue and leaves the rest; an empty queue ends at once", async () => {
    const fleet = new FakeFleet([3, 4]);
    const processes = new FakeProcesses((child) => child.exit({ code: 0, signal: null }));
    const r = run([...BASE, "--once", "--", "agent"], { fleet, processes });
    expect(await r.code).toBe(0);
    expect(fleet.released.map((x) => x.number)).toEqual([3]);
    expect(fleet.queue).toEqual([4]);
    expect(r.events().at(-1)).toMatchObject({ event: "stopped", reason: "once", runs: 1 });

    const idle = run([...BASE, "--once", "--", "agent"], { fleet: new FakeFleet([]), processes });
    expect(await idle.code).toBe(0);
    expect(idle.events().map((e) => e.event)).toEqual(["queue-empty", "stopped"]);
  });

  it("says when it is idle because the breaker pauses work (from X-Switchyard-Paused)", async () => {
    const fleet = new FakeFleet([]);
    fleet.pausedSince = "2026-12-01T10:00:00Z";
    const processes = new FakeProcesses((child) => child.exit({ code: 0, signal: null }));
    const r = run([...BASE, "--", "agent"], { fleet, processes });
    expect(await r.code).toBe(0);
    expect(r.events()).toEqual([
      { event: "paused", since: "2026-12-01T10:00:00Z", retryAfterSeconds: 60 },
      { event: "stopped", reason: "paused", runs: 0, done: 0, failed: 0, abandoned: 0, lost: 0 },
    ]);
  });

  it("records a command killed by a signal as failed, naming the signal", async () => {
    const fleet = new FakeFleet([3]);
    const processes = new FakeProcesses((child) => child.exit({ code: null, signal: "SIGSEGV" }));
    expect(await run([...BASE, "--", "agent"], { fleet, processes }).code).toBe(0);
    expect(fleet.released).toEqual([
      { number: 3, fence: 1, outcome: "failed", note: "killed by SIGSEGV" },
    ]);
  });

  it("heartbeats with the claim's fence while the command runs", async () => {
    const fleet = new FakeFleet([3]);
    const processes = new FakeProcesses(() => {});
    const r = run([...BASE, "--heartbeat-seconds", "0.02", "--", "agent"], { fleet, processes });
    await waitUntil("three heartbeats", () => fleet.count("POST", "/claim/heartbeat") >= 3);
    processes.children[0]!.exit({ code: 0, signal: null });
    expect(await r.code).toBe(0);
    const beats = fleet.requests.filter((q) => q.path.endsWith("/issues/3/claim/heartbeat"));
    expect(beats[0]!.body).toEqual({ claimId: "claim-1", fence: 1 });
    expect(fleet.released).toEqual([{ number: 3, fence: 1, outcome: "done", note: "exit code 0" }]);
    // No heartbeat after the release.
    const releasedAt = fleet.requests.findIndex((q) => q.path.endsWith("/claim/release"));
    expect(fleet.requests.slice(releasedAt + 1).some((q) => q.path.endsWith("/heartbeat"))).toBe(
      false,
    );
  });

  it.each([
    [["--ttl-seconds", "180"], 60_000],
    // Without --ttl-seconds, the TTL is read from the grant's expiry (the fake grants 30 minutes).
    [[], 600_000],
  ])("heartbeats every third of the TTL by default (%j)", async (flags, interval) => {
    const fleet = new FakeFleet([3]);
    const processes = new FakeProcesses(() => {});
    const scheduled: number[] = [];
    const realSetTimeout = globalThis.setTimeout;
    const near = (ms: number) => ms > interval - 1_000 && ms <= interval;
    // Record the delays the command asks for; the heartbeat's runs at once.
    globalThis.setTimeout = ((fn: () => void, ms?: number) => {
      scheduled.push(ms ?? 0);
      return realSetTimeout(fn, near(ms ?? 0) ? 1 : ms);
    }) as typeof setTimeout;
    try {
      const r = run([...BASE, ...flags, "--", "agent"], { fleet, processes });
      await waitUntil("a heartbeat", () => fleet.count("POST", "/claim/heartbeat") >= 1);
      processes.children[0]!.exit({ code: 0, signal: null });
      expect(await r.code).toBe(0);
    } finally {
      globalThis.setTimeout = realSetTimeout;
    }
    expect(scheduled.some(near)).toBe(true);
  });

  it("stops the command when a heartbeat says the claim is lost, and releases nothing", async () => {
    const fleet = new FakeFleet([3, 4]);
    const processes = new FakeProcesses((child) => {
      // Issue 4's command finishes at once; issue 3's runs until it is stopped.
      if (child.env.SWITCHYARD_ISSUE === "4") child.exit({ code: 0, signal: null });
    });
    const r = run([...BASE, "--heartbeat-seconds", "0.02", "--", "agent"], { fleet, processes });
    await waitUntil("the first heartbeat", () => fleet.count("POST", "/claim/heartbeat") >= 1);
    // Someone else's release (or an expiry) makes issue 3's claim stale.
    fleet.live.delete(3);
    expect(await r.code).toBe(0);
    expect(processes.children[0]!.signals).toEqual(["SIGTERM"]);
    expect(fleet.count("POST", "/issues/3/claim/release")).toBe(0);
    expect(fleet.released).toEqual([{ number: 4, fence: 2, outcome: "done", note: "exit code 0" }]);
    const events = r.events();
    expect(events.find((e) => e.event === "lost")).toMatchObject({ issue: 3, fence: 1 });
    expect(String(events.find((e) => e.event === "lost")!.message)).toContain("409 stale-fence");
    expect(events.at(-1)).toMatchObject({ event: "stopped", runs: 2, done: 1, lost: 1 });
  });

  it("sends SIGKILL when the command outlives the grace period", async () => {
    const fleet = new FakeFleet([3]);
    const processes = new FakeProcesses((child) => {
      child.onTerm = () => {}; // ignores SIGTERM
    });
    const r = run(
      [...BASE, "--heartbeat-seconds", "0.02", "--grace-seconds", "0.05", "--", "agent"],
      { fleet, processes },
    );
    await waitUntil("the first heartbeat", () => fleet.count("POST", "/claim/heartbeat") >= 1);
    fleet.live.delete(3);
    expect(await r.code).toBe(0);
    expect(processes.children[0]!.signals).toEqual(["SIGTERM", "SIGKILL"]);
    expect(r.events().map((e) => e.event)).toContain("killing");
    expect(fleet.released).toEqual([]);
  });

  it("retries a failed heartbeat and keeps the claim when the server recovers", async () => {
    const fleet = new FakeFleet([3]);
    let failures = 2;
    fleet.fault = (q) =>
      q.path.endsWith("/heartbeat") && failures-- > 0
        ? new Response(JSON.stringify({ error: "internal", message: "boom" }), { status: 503 })
        : undefined;
    const processes = new FakeProcesses(() => {});
    const r = run([...BASE, "--heartbeat-seconds", "0.02", "--", "agent"], { fleet, processes });
    await waitUntil("a good heartbeat", () => r.events().some((e) => e.event === "heartbeat"));
    processes.children[0]!.exit({ code: 0, signal: null });
    expect(await r.code).toBe(0);
    expect(r.events().filter((e) => e.event === "heartbeat-failed")).toHaveLength(2);
    expect(processes.children[0]!.signals).toEqual([]);
    expect(fleet.released).toEqual([{ number: 3, fence: 1, outcome: "done", note: "exit code 0" }]);
  });

  it("gives the claim up as lost when heartbeats fail until it would have expired", async () => {
    const fleet = new FakeFleet([3]);
    fleet.fault = (q) => (q.path.endsWith("/heartbeat") ? "network" : undefined);
    const processes = new FakeProcesses(() => {});
    // A clock running 1000 times faster: the 60 s TTL passes in about 60 ms.
    const start = Date.now();
    const now = () => new Date(start + (Date.now() - start) * 1000);
    const r = run([...BASE, "--ttl-seconds", "60", "--heartbeat-seconds", "0.01", "--", "agent"], {
      fleet,
      processes,
      now,
    });
    expect(await r.code).toBe(0);
    expect(processes.children[0]!.signals).toEqual(["SIGTERM"]);
    expect(fleet.count("POST", "/claim/release")).toBe(0);
    const lost = r.events().find((e) => e.event === "lost")!;
    expect(String(lost.message)).toContain("heartbeats failed until the claim expired");
  });

  it("on Ctrl-C stops the command, releases abandoned and exits 130", async () => {
    const fleet = new FakeFleet([3, 4]);
    const processes = new FakeProcesses(() => {});
    const r = run([...BASE, "--", "agent"], { fleet, processes });
    await waitUntil("the command to start", () => processes.children.length === 1);
    processes.interrupt("SIGINT");
    expect(await r.code).toBe(130);
    expect(processes.children[0]!.signals).toEqual(["SIGTERM"]);
    expect(fleet.released).toEqual([
      {
        number: 3,
        fence: 1,
        outcome: "abandoned",
        note: "interrupted by SIGINT (killed by SIGTERM)",
      },
    ]);
    // No further claim after the interrupt.
    expect(fleet.count("POST", "/v1/repos/acme/app/claims")).toBe(1);
    expect(r.events().at(-1)).toMatchObject({ event: "stopped", reason: "interrupted" });
    expect(processes.listening).toBe(0);
  });

  it("abandons a command that exits 0 on Ctrl-C too, and a second Ctrl-C kills at once", async () => {
    const fleet = new FakeFleet([3]);
    const processes = new FakeProcesses((child) => {
      child.onTerm = () => {};
    });
    const r = run([...BASE, "--", "agent"], { fleet, processes });
    await waitUntil("the command to start", () => processes.children.length === 1);
    processes.interrupt("SIGTERM");
    processes.interrupt("SIGTERM");
    expect(await r.code).toBe(130);
    expect(processes.children[0]!.signals).toEqual(["SIGTERM", "SIGKILL"]);
    expect(fleet.released[0]).toMatchObject({ outcome: "abandoned" });
  });

  it("hands back a claim granted while Ctrl-C was pressed", async () => {
    const fleet = new FakeFleet([3]);
    const processes = new FakeProcesses(() => {});
    fleet.fault = (q) => {
      if (q.path.endsWith("/claims") && q.method === "POST") processes.interrupt("SIGINT");
      return undefined;
    };
    const r = run([...BASE, "--", "agent"], { fleet, processes });
    expect(await r.code).toBe(130);
    expect(processes.children).toEqual([]);
    expect(fleet.released).toEqual([
      {
        number: 3,
        fence: 1,
        outcome: "abandoned",
        note: "interrupted by SIGINT before the command started",
      },
    ]);
  });

  it("releases abandoned and exits 2 when the command cannot be started", async () => {
    const fleet = new FakeFleet([3, 4]);
    const r = run([...BASE, "--", "./no-such-agent-command"], { fleet, processes: nodeProcesses });
    expect(await r.code).toBe(2);
    expect(r.stderr()).toContain('switchyard work: could not start "./no-such-agent-command"');
    expect(fleet.released).toEqual([expect.objectContaining({ number: 3, outcome: "abandoned" })]);
    expect(fleet.queue).toEqual([4]);
  });

  it("runs a real command: exit status and the claim's environment", async () => {
    const fleet = new FakeFleet([3, 4]);
    const script =
      "process.exit(process.env.SWITCHYARD_ISSUE === '3' && process.env.SWITCHYARD_FENCE === '1' ? 0 : 7)";
    const r = run([...BASE, "--", process.execPath, "-e", script], {
      fleet,
      processes: nodeProcesses,
    });
    expect(await r.code).toBe(0);
    expect(fleet.released).toEqual([
      { number: 3, fence: 1, outcome: "done", note: "exit code 0" },
      { number: 4, fence: 2, outcome: "failed", note: "exit code 7" },
    ]);
  });

  it("retries a release the server could not take, then exits 1 when it never does", async () => {
    const fleet = new FakeFleet([3]);
    let failures = 1;
    fleet.fault = (q) =>
      q.path.endsWith("/release") && failures-- > 0
        ? new Response(JSON.stringify({ error: "rate-limited", message: "later" }), {
            status: 429,
            headers: { "retry-after": "0" },
          })
        : undefined;
    const processes = new FakeProcesses((child) => child.exit({ code: 0, signal: null }));
    expect(await run([...BASE, "--", "agent"], { fleet, processes }).code).toBe(0);
    expect(fleet.released).toHaveLength(1);

    const down = new FakeFleet([3]);
    down.fault = (q) =>
      q.path.endsWith("/release")
        ? new Response(JSON.stringify({ error: "forbidden", message: "key revoked" }), {
            status: 403,
          })
        : undefined;
    const r = run([...BASE, "--", "agent"], { fleet: down, processes });
    expect(await r.code).toBe(1);
    expect(r.stderr()).toContain(
      "switchyard work: POST /v1/repos/acme/app/issues/3/claim/release: 403 forbidden: key revoked",
    );
  });

  it("exits 1 naming the request when claim-next fails", async () => {
    const fleet = new FakeFleet([3]);
    fleet.fault = () =>
      new Response(JSON.stringify({ error: "unauthorized", message: "bad token" }), {
        status: 401,
      });
    const r = run([...BASE, "--", "agent"], { fleet, processes: new FakeProcesses(() => {}) });
    expect(await r.code).toBe(1);
    expect(r.stderr()).toContain(
      "switchyard work: POST /v1/repos/acme/app/claims: 401 unauthorized: bad token",
    );
  });

  it.each([
    [["work", "--server", SERVER, "--repo", "acme/app", "--", "x"], "--agent-id is required"],
    [[...BASE], "give the command to run after --"],
    [[...BASE, "--"], "give the command to run after --"],
    [[...BASE, "--ttl-seconds", "30", "--", "x"], "--ttl-seconds must be at least 60"],
    [[...BASE, "--capabilities", "a b", "--", "x"], "--capabilities"],
    [
      [...BASE, "--heartbeat-seconds", "0", "--", "x"],
      "--heartbeat-seconds must be greater than 0",
    ],
    [[...BASE, "--heartbeat-seconds", "-1", "--", "x"], "--heartbeat-seconds"],
    [
      [...BASE, "--ttl-seconds", "60", "--heartbeat-seconds", "60", "--", "x"],
      "--heartbeat-seconds must be less than --ttl-seconds",
    ],
    [[...BASE, "--grace-seconds", "soon", "--", "x"], "--grace-seconds"],
    [[...BASE, "--once=yes", "--", "x"], "--once"],
    [["work", "--repo", "acme/app", "--agent-id", "a", "--", "x"], "--server is required"],
  ])("exits 2 on bad usage %j", async (argv, message) => {
    const fleet = new FakeFleet([3]);
    const r = run(argv, { fleet, processes: new FakeProcesses(() => {}) });
    expect(await r.code).toBe(2);
    expect(r.stderr()).toContain(message);
    expect(fleet.requests).toEqual([]);
  });
});

describe("switchyard work --org", () => {
  /**
   * The org routes over two scripted repositories: claim-next takes turns between them and
   * names the grant's `repo`; each repository's own routes answer heartbeats and releases.
   */
  function orgFleet() {
    const app = new FakeFleet([1, 2], "acme/app");
    const lib = new FakeFleet([7], "acme/lib");
    const fleets = [app, lib];
    let turn = 0;
    const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      const url = new URL(request.url);
      if (url.pathname === "/v1/orgs/acme/claims" && request.method === "POST") {
        const body = await request.text();
        for (let i = 0; i < fleets.length; i++) {
          const fleet = fleets[(turn + i) % fleets.length]!;
          const answer = await fleet.fetch(`${SERVER}/v1/repos/${fleet.repo}/claims`, {
            method: "POST",
            headers: request.headers,
            body,
          });
          if (answer.status === 201) {
            turn = (turn + i + 1) % fleets.length;
            const grant = (await answer.json()) as Record<string, unknown>;
            return Response.json({ ...grant, repo: fleet.repo }, { status: 201 });
          }
        }
        return new Response(null, { status: 204 });
      }
      const fleet = fleets.find((f) => url.pathname.startsWith(`/v1/repos/${f.repo}/`));
      return fleet
        ? fleet.fetch(input, init)
        : Response.json({ error: "not-found", message: url.pathname }, { status: 404 });
    }) as typeof globalThis.fetch;
    return { app, lib, fetch };
  }

  it("works across the owner's repositories, releasing on each grant's repository with SWITCHYARD_REPO set", async () => {
    const { app, lib, fetch } = orgFleet();
    const processes = new FakeProcesses((child) => child.exit({ code: 0, signal: null }));
    const argv = [
      "work",
      "--server",
      SERVER,
      "--org",
      "acme",
      "--agent-id",
      "bot-1",
      "--",
      "agent",
    ];
    const r = run(argv, { fleet: { fetch } as unknown as FakeFleet, processes });
    expect(await r.code).toBe(0);
    expect(
      processes.children.map((c) => `${c.env.SWITCHYARD_REPO}#${c.env.SWITCHYARD_ISSUE}`),
    ).toEqual(["acme/app#1", "acme/lib#7", "acme/app#2"]);
    expect(app.released.map((x) => x.number)).toEqual([1, 2]);
    expect(lib.released.map((x) => x.number)).toEqual([7]);
    const claimed = r.events().filter((e) => e.event === "claimed");
    expect(claimed.map((e) => e.repo)).toEqual(["acme/app", "acme/lib", "acme/app"]);
  });

  it("refuses --org with --repo, and a malformed owner", async () => {
    const { fetch } = orgFleet();
    const fleet = { fetch } as unknown as FakeFleet;
    const both = run(
      [
        "work",
        "--server",
        SERVER,
        "--org",
        "acme",
        "--repo",
        "acme/app",
        "--agent-id",
        "b",
        "--",
        "x",
      ],
      { fleet },
    );
    expect(await both.code).toBe(2);
    expect(both.stderr()).toMatch(/--repo or --org, not both/);
    const bad = run(["claim", "--server", SERVER, "--org", "ac/me", "--agent-id", "b"], { fleet });
    expect(await bad.code).toBe(2);
    expect(bad.stderr()).toMatch(/--org must be/);
  });
});
