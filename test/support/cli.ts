import { readFile } from "node:fs/promises";
import { main } from "../../functions/cli/main.ts";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with real file reads and a fixed clock. */
export async function runCli(
  argv: string[],
  options: { env?: Record<string, string>; now?: string; fetch?: typeof fetch } = {},
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    readFile: (path) => readFile(path, "utf8"),
    env: options.env ?? {},
    now: () => new Date(options.now ?? "2026-11-29T12:00:00Z"),
    fetch: options.fetch ?? (() => Promise.reject(new Error("no network in this test"))),
  });
  return { code, stdout, stderr };
}
