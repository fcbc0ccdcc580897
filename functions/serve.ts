#!/usr/bin/env node
import { resolve } from "node:path";
import process from "node:process";
/**
 * `switchyard serve`: the Worker (functions/worker.ts) as one self-hosted process on Node, Bun
 * or Deno: the webhook route, the fleet API, the status page, the cron every 15 minutes, and
 * the Durable Objects on SQLite under `--data` (functions/host/). See docs/self-hosting.md.
 *
 *   node functions/serve.ts --port 8787 --data ./data
 *   bun functions/serve.ts ...      deno run -A functions/serve.ts ...
 */
import { parseArgs } from "node:util";
import { parseTrustedProxies } from "../shared/auth/client-address.ts";
import { CRON, OBJECT_BINDINGS } from "./host/bindings.ts";
import type { WorkerModule } from "./host/boundary.ts";
import { startCron } from "./host/cron-tick.ts";
import { PortableHost } from "./host/host.ts";
import { serveHttp } from "./host/http-node.ts";
import { installCloudflareWorkersShim, runtimeName } from "./host/runtime.ts";
import { loadSettings } from "./host/settings.ts";
import { loadSqliteDriver } from "./host/sqlite-driver.ts";

export const SERVE_USAGE =
  "serve [--port N] [--hostname H] [--data DIR] [--dotenv FILE] [--synchronous full|normal] [--trusted-proxies N] [--test-scheduled]   (settings: the Worker's names, from the environment or .env)";

export interface RunningServe {
  url: string;
  port: number;
  host: PortableHost;
  /** Graceful stop: in-flight requests and alarm runs finish, databases close. */
  stop(): Promise<void>;
}

export class ServeUsageError extends Error {
  override name = "ServeUsageError";
}

function options(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        port: { type: "string" },
        hostname: { type: "string" },
        data: { type: "string" },
        dotenv: { type: "string" },
        synchronous: { type: "string" },
        "trusted-proxies": { type: "string" },
        "test-scheduled": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new ServeUsageError(
      `serve: ${(error as Error).message}\nusage: switchyard ${SERVE_USAGE}`,
    );
  }
}

/** Starts the server (for the CLI, tests and this file's own `main`). */
export async function startServe(
  argv: string[],
  log: (message: string, error?: unknown) => void = (m, e) =>
    e === undefined ? console.error(m) : console.error(m, e),
): Promise<RunningServe> {
  const flags = options(argv);
  const port = Number(flags.port ?? process.env.PORT ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ServeUsageError(`serve: --port must be a port number (0-65535), got ${flags.port}`);
  }
  const hostname = flags.hostname ?? "127.0.0.1";
  const synchronous = flags.synchronous ?? process.env.SWITCHYARD_SYNCHRONOUS ?? "full";
  if (synchronous !== "full" && synchronous !== "normal") {
    throw new ServeUsageError(`serve: --synchronous must be full or normal, got ${synchronous}`);
  }
  const trustedProxies = parseTrustedProxies(
    flags["trusted-proxies"] ?? process.env.SWITCHYARD_TRUSTED_PROXIES,
  );
  if (typeof trustedProxies === "string") {
    throw new ServeUsageError(`serve: --trusted-proxies ${trustedProxies}`);
  }
  const dataDir = resolve(flags.data ?? process.env.SWITCHYARD_DATA ?? "data");
  const settings = loadSettings({
    envFile: flags.dotenv ?? ".env",
    environment: process.env,
  });

  installCloudflareWorkersShim();
  const workerUrl = new URL("./worker.ts", import.meta.url).href;
  const [worker, driver] = await Promise.all([
    import(workerUrl) as Promise<WorkerModule<never>>,
    loadSqliteDriver(),
  ]);
  const host = await PortableHost.start({
    dataDir,
    driver,
    worker,
    bindings: OBJECT_BINDINGS,
    settings,
    log,
    synchronous,
  });
  const testScheduled = flags["test-scheduled"] === true;
  const http = await serveHttp(
    async (request) => {
      // As `wrangler dev --test-scheduled`: fire the cron by hand (tests, demos).
      if (testScheduled && new URL(request.url).pathname === "/__scheduled") {
        await host.scheduled(Date.now(), new URL(request.url).searchParams.get("cron") ?? CRON);
        return new Response("Ran scheduled event\n");
      }
      return host.fetch(request);
    },
    { port, hostname, log, trustedProxies },
  );
  const cron = startCron((at, cronText) => host.scheduled(at, cronText), log);
  let stopping: Promise<void> | null = null;
  return {
    url: `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${http.port}`,
    port: http.port,
    host,
    stop() {
      stopping ??= (async () => {
        await http.close();
        await cron.stop();
        await host.close();
      })();
      return stopping;
    },
  };
}

/** Runs until SIGINT or SIGTERM, then stops gracefully (a second signal exits at once). */
export async function runServe(argv: string[]): Promise<void> {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(`usage: switchyard ${SERVE_USAGE}`);
    return;
  }
  const running = await startServe(argv);
  console.log(
    `switchyard serve: listening on ${running.url} (${runtimeName()}, data in ${resolve(
      options(argv).data ?? process.env.SWITCHYARD_DATA ?? "data",
    )})`,
  );
  await new Promise<void>((done) => {
    // One handler for both signals and all deliveries (Deno also runs a listener added while
    // a signal is being dispatched, so a second handler cannot be swapped in).
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals++;
      if (signals > 1) process.exit(signal === "SIGINT" ? 130 : 143);
      console.log("switchyard serve: stopping (finishing requests and alarm runs)");
      void running.stop().then(done);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
  console.log("switchyard serve: stopped");
}

const isMain =
  (import.meta as { main?: boolean }).main ??
  (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, "/")));
if (isMain) {
  runServe(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof ServeUsageError ? error.message : error);
    process.exit(error instanceof ServeUsageError ? 2 : 1);
  });
}
