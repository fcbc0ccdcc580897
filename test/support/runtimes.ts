import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../../", import.meta.url));
const bin = (name: string) => `${root}node_modules/.bin/${name}`;

/** How to start the CLI entry under each runtime we promise to support. */
export const RUNTIMES = {
  node: [bin("node"), "functions/cli/bin.ts"],
  bun: [bin("bun"), "functions/cli/bin.ts"],
  deno: [bin("deno"), "run", "--quiet", "-A", "functions/cli/bin.ts"],
} as const;

export type Runtime = keyof typeof RUNTIMES;

export function spawnCli(runtime: Runtime, args: string[], env: Record<string, string> = {}) {
  const [command, ...prefix] = RUNTIMES[runtime];
  return spawnCollect(command, [...prefix, ...args], env);
}

/** Runs a command from the repository root and collects its exit code and output. */
export function spawnCollect(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1", ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
