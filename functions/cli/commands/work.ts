// `switchyard work -- <command...>`: a one-line fleet worker. Claims the queue's next issue,
// runs the command for it with the claim in its environment, heartbeats while it runs, releases
// by its exit status, and loops until there is no work (the queue is empty, or the circuit
// breaker pauses it: the `paused` event says since when) or once, with --once.
//
// Streams: the command inherits stdin, stdout and stderr, so stdout belongs to the command;
// the CLI writes one JSON object per line to stderr for each thing it does (claimed, started,
// heartbeat, lost, exited, released, queue-empty, paused, stopped, ...).
//
// Exit codes: 0 when the loop ended normally (queue empty, or --once after one run), whatever
// the commands' own exit statuses were (those are the releases' outcomes, printed as events and
// recorded by the Worker); 1 when an API request failed (claim-next, or a release that could
// not be delivered); 2 on bad usage, including a command that cannot be started (its claim is
// released `abandoned` first); 130 after SIGINT/SIGTERM (the command is stopped and its claim
// released `abandoned`).
import type { FleetClient, Idle } from "../../../shared/fleet/client.ts";
import { FleetApiError } from "../../../shared/fleet/client.ts";
import type { OrgFleetClient } from "../../../shared/fleet/org-client.ts";
import type { ClaimGrant, ClaimNextRequest, Outcome } from "../../../shared/fleet/schemas.ts";
import { ClaimNextRequestSchema } from "../../../shared/fleet/schemas.ts";
import { numberFlag, parseFlags, requireFlag } from "../args.ts";
import type { CliCommand } from "../command.ts";
import {
  CONNECTION_FLAGS,
  checkFlags,
  defined,
  fleetCall,
  fleetConnection,
  fleetFailure,
  integerFlag,
  listFlag,
  ORG_FLAG,
  orgConnection,
} from "../fleet.ts";
import { type CliIo, ExitCode, UsageError } from "../io.ts";
import {
  type ChildExit,
  type ChildHandle,
  type InterruptSignal,
  nodeProcesses,
  type ProcessIo,
} from "../processes.ts";

const NAME = "work";
const RELEASE_ATTEMPTS = 3;
/** Longest wait before retrying a failed heartbeat (sooner when the claim is about to expire). */
const HEARTBEAT_RETRY_MS = 5_000;

interface WorkOptions {
  client: FleetClient | null;
  /** `--org`: claim-next across the owner's repositories; each grant's `repo` is worked on. */
  org: OrgFleetClient | null;
  server: string;
  repo: string | null;
  agentId: string;
  machine: string | undefined;
  capabilities: string[] | undefined;
  /** What claim-next may take (default kick, rollup, ready: no replies unless asked). */
  kinds: ClaimNextRequest["kinds"];
  ttlSeconds: number | undefined;
  /** Heartbeat interval; default a third of the claim's TTL. */
  heartbeatMs: number | undefined;
  /** Between SIGTERM and SIGKILL when the command has to be stopped. */
  graceMs: number;
  once: boolean;
  command: string;
  args: string[];
}

type RunOutcome = Outcome | "lost";
/** A grant; an org grant also names its repository. */
type Grant = ClaimGrant & { repo?: string };

export const workCommand: CliCommand = {
  async run(argv, io) {
    const dash = argv.indexOf("--");
    const flagArgs = dash === -1 ? argv : argv.slice(0, dash);
    const commandLine = dash === -1 ? [] : argv.slice(dash + 1);
    const flags = parseFlags(NAME, flagArgs, {
      ...CONNECTION_FLAGS,
      "agent-id": { type: "string" },
      once: { type: "boolean" },
      machine: { type: "string" },
      capabilities: { type: "string" },
      kinds: { type: "string" },
      "ttl-seconds": { type: "string" },
      "heartbeat-seconds": { type: "string" },
      "grace-seconds": { type: "string" },
      ...ORG_FLAG,
    });
    const org = orgConnection(io, NAME, flags);
    const repoConnection = org === null ? fleetConnection(io, NAME, flags) : null;
    const server = org?.server ?? repoConnection!.server;
    const agentId = requireFlag(NAME, "agent-id", flags["agent-id"]);
    const request = checkFlags(
      NAME,
      ClaimNextRequestSchema,
      defined({
        agentId,
        machine: flags.machine,
        capabilities: listFlag(flags.capabilities),
        kinds: listFlag(flags.kinds),
        ttlSeconds: integerFlag(NAME, "ttl-seconds", flags["ttl-seconds"]),
      }),
    );
    const heartbeatSeconds = numberFlag(NAME, "heartbeat-seconds", flags["heartbeat-seconds"]);
    if (heartbeatSeconds === 0) {
      throw new UsageError(`${NAME}: --heartbeat-seconds must be greater than 0`);
    }
    if (
      heartbeatSeconds !== undefined &&
      request.ttlSeconds !== undefined &&
      heartbeatSeconds >= request.ttlSeconds
    ) {
      throw new UsageError(
        `${NAME}: --heartbeat-seconds must be less than --ttl-seconds, or the claim expires between heartbeats`,
      );
    }
    const graceSeconds = numberFlag(NAME, "grace-seconds", flags["grace-seconds"]) ?? 10;
    const [command, ...args] = commandLine;
    if (command === undefined || command === "") {
      throw new UsageError(
        `${NAME}: give the command to run after --, e.g. switchyard work ... -- claude -p "Fix issue $SWITCHYARD_ISSUE"`,
      );
    }
    await work(
      {
        client: repoConnection?.client ?? null,
        org: org?.client ?? null,
        server,
        repo: repoConnection?.repo ?? null,
        agentId: request.agentId,
        machine: request.machine,
        capabilities: request.capabilities,
        kinds: request.kinds,
        ttlSeconds: request.ttlSeconds,
        heartbeatMs: heartbeatSeconds === undefined ? undefined : heartbeatSeconds * 1000,
        graceMs: graceSeconds * 1000,
        once: flags.once === true,
        command,
        args,
      },
      io,
      io.processes ?? nodeProcesses,
    );
  },
};

function emit(io: CliIo, event: string, fields: Record<string, unknown> = {}): void {
  io.stderr(`${JSON.stringify({ event, ...fields })}\n`);
}

function describeExit(exit: ChildExit): string {
  if (exit.error) return `could not start: ${exit.error.message}`;
  return exit.code !== null ? `exit code ${exit.code}` : `killed by ${exit.signal ?? "a signal"}`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function work(o: WorkOptions, io: CliIo, processes: ProcessIo): Promise<void> {
  const tally: Record<RunOutcome, number> = { done: 0, failed: 0, abandoned: 0, lost: 0 };
  let runs = 0;
  let interrupted: InterruptSignal | null = null;
  const interruption = () => interrupted;
  let running: { issue: number; child: ChildHandle; stop(why: string): void } | null = null;

  const unsubscribe = processes.onInterrupt((signal) => {
    if (interrupted !== null) {
      // A second Ctrl-C does not wait for the grace period.
      running?.child.kill("SIGKILL");
      return;
    }
    interrupted = signal;
    emit(io, "interrupted", { signal, issue: running?.issue ?? null });
    running?.stop(`interrupted by ${signal}`);
  });

  // The grant's repository: its client (heartbeats, releases) and name (SWITCHYARD_REPO).
  const clients = new Map<string, FleetClient>();
  const clientOf = (grant: Grant): FleetClient => {
    if (o.org === null || grant.repo === undefined) return o.client!;
    let client = clients.get(grant.repo);
    if (!client) {
      client = o.org.forRepo(grant.repo);
      clients.set(grant.repo, client);
    }
    return client;
  };

  const release = async (grant: Grant, outcome: Outcome, note: string): Promise<boolean> => {
    const issue = grant.issue.number;
    for (let attempt = 1; ; attempt++) {
      try {
        const released = await clientOf(grant).release(issue, {
          claimId: grant.claimId,
          fence: grant.fence,
          outcome,
          note,
        });
        emit(io, "released", { issue, outcome, note, releasedAt: released.releasedAt });
        return true;
      } catch (error) {
        if (error instanceof FleetApiError && error.status === 409) {
          emit(io, "lost", {
            issue,
            fence: grant.fence,
            message: `the claim was no longer live when it was released: ${error.message}`,
          });
          return false;
        }
        const transient =
          error instanceof FleetApiError &&
          (error.status === null || error.status >= 500 || error.status === 429);
        if (!transient || attempt >= RELEASE_ATTEMPTS) throw fleetFailure(NAME, error);
        const waitMs = Math.min((error.retryAfterSeconds ?? attempt) * 1000, 10_000);
        emit(io, "release-failed", {
          issue,
          message: error.message,
          retryInSeconds: waitMs / 1000,
        });
        await sleep(waitMs);
      }
    }
  };

  const runClaim = async (grant: Grant, sentMs: number): Promise<RunOutcome> => {
    const issue = grant.issue.number;
    const { claimId, fence } = grant;
    // The claim's TTL: the one asked for, else what the grant's expiry says (within the API's
    // bounds). Deadlines are counted from when a request was sent, on this machine's clock.
    const granted = Date.parse(grant.expiresAt) - io.now().getTime();
    const ttlMs =
      o.ttlSeconds !== undefined
        ? o.ttlSeconds * 1000
        : Number.isFinite(granted)
          ? Math.min(Math.max(granted, 60_000), 86_400_000)
          : 60_000;
    const intervalMs = o.heartbeatMs ?? ttlMs / 3;
    let deadline = sentMs + ttlMs;
    emit(io, "claimed", {
      ...(grant.repo !== undefined ? { repo: grant.repo } : {}),
      issue,
      title: grant.issue.title,
      url: grant.issue.url,
      claimId,
      fence,
      branch: grant.branch,
      expiresAt: grant.expiresAt,
    });

    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(io.env)) if (value !== undefined) env[key] = value;
    Object.assign(env, {
      SWITCHYARD_SERVER: o.server,
      SWITCHYARD_REPO: grant.repo ?? o.repo ?? "",
      SWITCHYARD_AGENT_ID: o.agentId,
      SWITCHYARD_ISSUE: String(issue),
      SWITCHYARD_ISSUE_TITLE: grant.issue.title,
      SWITCHYARD_ISSUE_URL: grant.issue.url,
      SWITCHYARD_BRANCH: grant.branch,
      SWITCHYARD_CLAIM_ID: claimId,
      SWITCHYARD_FENCE: String(fence),
      // `reply`: answer a person's input (`--kinds reply`); `work`: the issue's work.
      SWITCHYARD_KIND: grant.kind ?? "work",
      ...(grant.issue.reply !== undefined
        ? {
            SWITCHYARD_REPLY_URL: grant.issue.reply.url,
            SWITCHYARD_REPLY_REASON: grant.issue.reply.reason,
          }
        : {}),
    });
    const child = processes.spawn(o.command, o.args, env);

    let lost: string | null = null;
    let stopping = false;
    let graceTimer: ReturnType<typeof setTimeout> | undefined;
    const stop = (why: string) => {
      if (stopping) return;
      stopping = true;
      emit(io, "stopping", { issue, pid: child.pid ?? null, reason: why });
      child.kill("SIGTERM");
      graceTimer = setTimeout(() => {
        emit(io, "killing", { issue, pid: child.pid ?? null, graceSeconds: o.graceMs / 1000 });
        child.kill("SIGKILL");
      }, o.graceMs);
    };
    running = { issue, child, stop };
    emit(io, "started", { issue, pid: child.pid ?? null, command: [o.command, ...o.args] });

    let ended = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let beating: Promise<void> = Promise.resolve();
    const loseClaim = (message: string) => {
      lost = message;
      emit(io, "lost", { issue, fence, message });
      stop("the claim was lost");
    };
    const schedule = (ms: number) => {
      if (ended || lost !== null) return;
      timer = setTimeout(() => {
        beating = beat();
      }, ms);
    };
    const beat = async () => {
      const sent = io.now().getTime();
      try {
        const extended = await clientOf(grant).heartbeat(issue, { claimId, fence });
        deadline = sent + ttlMs;
        emit(io, "heartbeat", { issue, fence, expiresAt: extended.expiresAt });
        schedule(intervalMs);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (error instanceof FleetApiError && error.status === 409) {
          loseClaim(message);
          return;
        }
        // Anything else may pass (network, 5xx, 429, a token refresh): retry until the claim
        // would have expired.
        const left = deadline - io.now().getTime();
        if (left <= 0) {
          loseClaim(`heartbeats failed until the claim expired: ${message}`);
          return;
        }
        const retryMs = Math.min(intervalMs, HEARTBEAT_RETRY_MS, left);
        emit(io, "heartbeat-failed", { issue, message, retryInSeconds: retryMs / 1000 });
        schedule(retryMs);
      }
    };
    schedule(intervalMs);

    const exit = await child.exited;
    ended = true;
    clearTimeout(timer);
    clearTimeout(graceTimer);
    await beating;
    running = null;
    emit(io, "exited", { issue, code: exit.code, signal: exit.signal });

    if (exit.error) {
      await release(grant, "abandoned", `could not start ${o.command}: ${exit.error.message}`);
      throw new UsageError(`${NAME}: could not start "${o.command}": ${exit.error.message}`);
    }
    if (lost !== null) return "lost";
    const signal = interruption();
    const outcome: Outcome = signal ? "abandoned" : exit.code === 0 ? "done" : "failed";
    const note = signal ? `interrupted by ${signal} (${describeExit(exit)})` : describeExit(exit);
    return (await release(grant, outcome, note)) ? outcome : "lost";
  };

  let reason = "queue-empty";
  try {
    for (;;) {
      if (interruption()) {
        reason = "interrupted";
        break;
      }
      const sentMs = io.now().getTime();
      const request = defined({
        agentId: o.agentId,
        machine: o.machine,
        capabilities: o.capabilities,
        kinds: o.kinds,
        ttlSeconds: o.ttlSeconds,
      });
      const org = o.org;
      const next: { grant: Grant } | { idle: Idle } = await fleetCall(NAME, async () => {
        if (org === null) return o.client!.claimNextOrIdle(request);
        const grant = await org.claimNext(request);
        return grant === null ? { idle: { reason: "queue-empty" } as const } : { grant };
      });
      if ("idle" in next) {
        // Why it is idle: nothing to claim, or the default branch is red (the breaker).
        if (next.idle.reason === "paused") {
          const { since, retryAfterSeconds } = next.idle;
          emit(io, "paused", { since, retryAfterSeconds });
        } else emit(io, "queue-empty");
        reason = next.idle.reason;
        break;
      }
      const grant = next.grant;
      runs += 1;
      const signal = interruption();
      if (signal) {
        // Ctrl-C while the claim was on its way: hand it straight back.
        emit(io, "claimed", {
          issue: grant.issue.number,
          claimId: grant.claimId,
          fence: grant.fence,
        });
        const released = await release(
          grant,
          "abandoned",
          `interrupted by ${signal} before the command started`,
        );
        tally[released ? "abandoned" : "lost"] += 1;
        reason = "interrupted";
        break;
      }
      tally[await runClaim(grant, sentMs)] += 1;
      if (interruption()) {
        reason = "interrupted";
        break;
      }
      if (o.once) {
        reason = "once";
        break;
      }
    }
  } finally {
    unsubscribe();
  }
  emit(io, "stopped", { reason, runs, ...tally });
  if (reason === "interrupted") throw new ExitCode(130);
}
