// The process boundary to wrangler: every call of `npm run setup` and `npm run deploy` goes
// through `runWrangler`. `SWITCHYARD_WRANGLER` names another executable to run instead (the tests'
// stub records its arguments and stdin); by default the project's own wrangler runs on this Node.
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";

const WRANGLER_JS = fileURLToPath(
  new URL("../../node_modules/wrangler/bin/wrangler.js", import.meta.url),
);

export interface WranglerResult {
  /** The exit code; null when killed by a signal or when it could not be started. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why it could not be started, if it could not. */
  spawnError?: string;
}

export interface WranglerRun {
  /** Written to wrangler's stdin, then closed (secret values: never echoed, never logged). */
  input?: string;
  /** Copy wrangler's stdout and stderr to this stream as they arrive (our stderr for deploys). */
  echo?: NodeJS.WritableStream;
}

export type Wrangler = (args: string[], run?: WranglerRun) => Promise<WranglerResult>;

/** The executable and leading arguments that start wrangler. */
export function wranglerInvocation(env: NodeJS.ProcessEnv = process.env): {
  command: string;
  args: string[];
} {
  const override = env.SWITCHYARD_WRANGLER;
  if (override) return { command: override, args: [] };
  // wrangler needs a newer Node than the machine's default may be: the one running us.
  return { command: process.execPath, args: [WRANGLER_JS] };
}

/** Runs wrangler to completion; never rejects (a failure to start is `code: null`). */
export const runWrangler: Wrangler = (args, run = {}) => {
  const { command, args: lead } = wranglerInvocation();
  return new Promise((resolve) => {
    const child = spawn(command, [...lead, ...args], {
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      run.echo?.write(chunk);
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      run.echo?.write(chunk);
    });
    let spawnError: string | undefined;
    child.once("error", (error) => {
      spawnError = `could not run ${command}: ${error.message}`;
    });
    // wrangler may exit before reading all of stdin; the value is not needed then.
    child.stdin.on("error", () => undefined);
    child.stdin.end(run.input ?? "");
    child.once("close", (code) =>
      resolve({
        code: spawnError ? null : code,
        stdout,
        stderr,
        ...(spawnError ? { spawnError } : {}),
      }),
    );
  });
};

/** Whether wrangler is logged in to Cloudflare (`wrangler whoami --json` exits 0). */
export async function wranglerLoggedIn(wrangler: Wrangler): Promise<boolean> {
  const result = await wrangler(["whoami", "--json"]);
  return result.code === 0;
}

/**
 * The URL `wrangler deploy` lists for the Worker: the first line that is only an `https://` URL
 * (wrangler prints the workers.dev URL indented under "Deployed … triggers"), without a trailing
 * slash; null when there is none (workers.dev off and no route printed).
 */
export function deployedUrl(output: string): string | null {
  for (const line of output.split("\n")) {
    const m = /^\s*(https:\/\/\S+?)\/?\s*$/.exec(line);
    if (m) return m[1]!;
  }
  return null;
}
