// The Worker under `wrangler dev` (local Durable Object storage) wired to a GitHub simulator on
// loopback: what `npm start` and the ingress benchmark run. Node-only.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { createServer } from "node:net";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { SIM_CLIENT_SECRET } from "./github-sim/oauth.ts";
import { type RunningSimulator, startSimulatorServer } from "./github-sim/serve.ts";

export const root = fileURLToPath(new URL("../", import.meta.url));
const APP_ID = 1;

export interface LocalStack {
  sim: RunningSimulator;
  workerUrl: string;
  webhookSecret: string;
  /** The `wrangler dev` process (its workerd runs as a descendant). */
  workerPid(): number | undefined;
  /** Where the Worker's Durable Objects keep their storage. */
  stateDir: string;
  /** The Worker's V8 inspector (Chrome DevTools Protocol) under `wrangler dev`; null elsewhere. */
  inspectorUrl: string | null;
  /**
   * Kills the Worker (SIGKILL: a crash, not a shutdown) and starts it again on the same port and
   * storage: what survives is what a Durable Object had committed.
   */
  restartWorker(): Promise<void>;
  /** Stops the Worker (SIGTERM) and the simulator; the Worker's exit code (null if it was gone). */
  close(): Promise<number | null>;
}

/** Every process below `pid` (Linux `ps`), deepest last. */
export function descendants(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  let out = "";
  try {
    out = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" });
  } catch {
    return []; // no children (ps exits 1)
  }
  const children = out
    .split("\n")
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
  return children.flatMap((c) => [c, ...descendants(c)]);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  /** Gives up at once when this says so (what was awaited can no longer happen). */
  hopeless: () => string | null = () => null,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {
      // not up yet
    }
    const why = hopeless();
    if (why !== null) throw new Error(`gave up waiting for ${what}: ${why}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Starts the simulator and `wrangler dev` with a fresh App key pair (PKCS#8, as Workers
 * require), a fresh webhook secret and fresh storage under `.tmp/<name>-state`.
 */
/**
 * Where the Worker runs: `wrangler dev` (workerd, the default), or the portable host
 * (`switchyard serve`, functions/serve.ts) under Node, Bun or Deno (docs/self-hosting.md).
 */
export type LocalHost = "wrangler" | "node" | "bun" | "deno";

interface StackOptions {
  vars?: Record<string, string>;
  /** Called when the Worker exits once it was up (not on a failed start: that throws). */
  onWorkerExit?: (code: number | null) => void;
  host?: LocalHost;
  /** The Worker's port on the first try (default: one free a moment before). */
  workerPort?: number;
}

/**
 * The V8 flags `wrangler dev` gives the Worker's workerd by default: its heap capped at 128 MB,
 * as Cloudflare caps each isolate. Alone, workerd sets no memory limit on an isolate, so V8 sizes
 * its heap for the machine (on 24 GiB its generations grew to about 100 MiB committed around
 * 20 MiB live; bench/README). Capped, the memory the stack shows is what the platform would
 * see, and a Worker that outgrows the limit fails here as it would there.
 */
export const PLATFORM_V8_FLAGS = "--max-heap-size=128";

/**
 * What the Worker's workerd runs with (miniflare reads MINIFLARE_WORKERD_V8_FLAGS): the caller's
 * own flags when it sets that variable (empty: V8's defaults, no cap), else the platform's cap.
 */
export const workerdV8Flags = (env: NodeJS.ProcessEnv): string =>
  env.MINIFLARE_WORKERD_V8_FLAGS ?? PLATFORM_V8_FLAGS;

/** Starts tried when another process took one of the stack's ports before it bound them. */
const PORT_TRIES = 3;

/** A start lost one of its ports to another process: starting again on fresh ports will do. */
class PortTaken extends Error {}

const portTaken = (text: string) => /EADDRINUSE|address already in use/i.test(text);

export async function startLocalStack(name: string, opts: StackOptions = {}): Promise<LocalStack> {
  // `freePort` hands out a port that was free a moment ago: with test files starting stacks side
  // by side, another process can bind it first.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(name, attempt === 1 ? opts : { ...opts, workerPort: undefined });
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= PORT_TRIES) throw error;
    }
  }
}

async function startOnce(name: string, opts: StackOptions): Promise<LocalStack> {
  const host = opts.host ?? "wrangler";
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pkcs8 = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const webhookSecret = `${name}-${crypto.randomUUID()}`;
  const [simPort, workerPort, inspectorPort] = [
    await freePort(),
    opts.workerPort ?? (await freePort()),
    await freePort(),
  ];
  const workerUrl = `http://127.0.0.1:${workerPort}`;
  const sim = await startSimulatorServer({
    port: simPort,
    appId: APP_ID,
    appPublicKey: publicKey.export({ type: "spki", format: "pem" }).toString(),
    webhookSecret,
  }).catch((error: NodeJS.ErrnoException) => {
    throw error.code === "EADDRINUSE" ? new PortTaken(error.message) : error;
  });

  const state = process.env.STATE_DIR ?? `${root}.tmp/${name}-state`;
  await rm(state, { recursive: true, force: true });
  await mkdir(state, { recursive: true });
  const log = createWriteStream(`${root}.tmp/${name}-wrangler.log`);
  const vars: Record<string, string> = {
    GITHUB_API_URL: sim.url,
    GITHUB_APP_ID: String(APP_ID),
    GITHUB_APP_PRIVATE_KEY: pkcs8.replace(/\n/g, "\\n"),
    GITHUB_WEBHOOK_SECRET: webhookSecret,
    // OIDC tokens must name the Worker's own URL; the simulator is their issuer.
    PUBLIC_URL: workerUrl,
    OIDC_ISSUER: `${sim.url}/oidc`,
    // `/healthz` names the version and any missing setting (production says only ok or not).
    HEALTH_DETAILS: "1",
    // The status page's GitHub login: the simulator's App client and a fresh session secret.
    GITHUB_APP_CLIENT_ID: `Iv1.sim${APP_ID}`,
    GITHUB_APP_CLIENT_SECRET: SIM_CLIENT_SECRET,
    SESSION_SECRET: randomBytes(32).toString("hex"),
    ...opts.vars,
  };
  // wrangler runs on this same Node: the machine's default `node` may be too old for it.
  // The portable host: the same settings as environment variables, the storage as its data dir.
  const serveCommand: Record<Exclude<LocalHost, "wrangler">, string[]> = {
    node: [process.execPath, "functions/serve.ts"],
    bun: [`${root}node_modules/.bin/bun`, "functions/serve.ts"],
    deno: [`${root}node_modules/.bin/deno`, "run", "--quiet", "-A", "functions/serve.ts"],
  };
  const spawnServe = (target: Exclude<LocalHost, "wrangler">): ChildProcess => {
    const [command, ...prefix] = serveCommand[target];
    return spawn(
      command!,
      [
        ...prefix,
        "--port",
        String(workerPort),
        "--data",
        state,
        "--dotenv",
        `${state}/none.env`,
        "--test-scheduled",
      ],
      {
        cwd: root,
        env: { ...process.env, ...vars, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
  };
  const spawnWorker = (): ChildProcess => {
    const child =
      host !== "wrangler"
        ? spawnServe(host)
        : spawn(
            process.execPath,
            [
              `${root}node_modules/wrangler/bin/wrangler.js`,
              "dev",
              "--ip",
              "127.0.0.1",
              "--port",
              String(workerPort),
              "--persist-to",
              state,
              "--test-scheduled",
              "--show-interactive-dev-session=false",
              "--inspector-port",
              String(inspectorPort),
              ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
            ],
            {
              cwd: root,
              env: {
                // wrangler's local trace collector (a Durable Object of its own inside the same
                // workerd) records every request: memory and CPU that are not switchyard's.
                X_LOCAL_OBSERVABILITY: "false",
                ...process.env,
                MINIFLARE_WORKERD_V8_FLAGS: workerdV8Flags(process.env),
                WRANGLER_SEND_METRICS: "false",
                NO_COLOR: "1",
              },
              stdio: ["ignore", "pipe", "pipe"],
            },
          );
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    // The end of what it printed: why it stopped, if it stops while starting.
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-16_384);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    child.once("exit", (code) => {
      if (!closing && up && child === wrangler) opts.onWorkerExit?.(code);
    });
    return child;
  };
  let output = "";
  let up = false;
  let closing = false;
  let wrangler = spawnWorker();
  // However this process ends, the Worker must not outlive it.
  const killOnExit = () => {
    if (wrangler.exitCode === null) wrangler.kill("SIGKILL");
  };
  process.on("exit", killOnExit);
  const stopWorker = async (signal: NodeJS.Signals): Promise<number | null> => {
    if (wrangler.exitCode !== null || wrangler.signalCode !== null) return null;
    const exited = new Promise<number | null>((r) => wrangler.once("exit", (code) => r(code)));
    wrangler.kill(signal);
    return exited;
  };
  const workerUp = async () => {
    const child = wrangler;
    await waitFor(
      "the Worker to start",
      // Bounded: whoever else holds the port may accept and never answer.
      async () =>
        (await fetch(`${workerUrl}/healthz`, { signal: AbortSignal.timeout(5_000) })).ok
          ? true
          : undefined,
      120_000,
      () => {
        if (child.exitCode !== null || child.signalCode !== null)
          return `it exited (${child.exitCode ?? child.signalCode})`;
        // A host that cannot bind its port may say so and stay up (Node's serve does).
        return portTaken(output) ? "its port is taken" : null;
      },
    );
    up = true;
  };

  const close = async () => {
    closing = true;
    process.off("exit", killOnExit);
    const code = await stopWorker("SIGTERM");
    await sim.close();
    return code;
  };
  const restartWorker = async () => {
    // A crash takes wrangler and its workerd with it; the port must be free before the restart.
    const old = wrangler;
    const exited = new Promise<void>((resolve) => {
      if (old.exitCode !== null || old.signalCode !== null) resolve();
      else old.once("exit", () => resolve());
    });
    for (const pid of [...descendants(old.pid), old.pid]) {
      try {
        if (pid !== undefined) process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await exited;
    wrangler = spawnWorker();
    await workerUp();
  };
  try {
    await workerUp();
  } catch (error) {
    await close();
    const message = `${(error as Error).message}; see .tmp/${name}-wrangler.log`;
    throw portTaken(output) ? new PortTaken(message) : new Error(message);
  }
  return {
    sim,
    workerUrl,
    webhookSecret,
    workerPid: () => wrangler.pid,
    stateDir: state,
    inspectorUrl: host === "wrangler" ? `ws://127.0.0.1:${inspectorPort}/ws` : null,
    restartWorker,
    close,
  };
}
