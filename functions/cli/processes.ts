// The door `switchyard work` runs commands through: spawn a child with inherited stdio, stop it,
// and hear SIGINT/SIGTERM sent to the CLI. node:child_process and node:process exist on Node,
// Bun and Deno alike; tests inject a fake.
import { spawn } from "node:child_process";
import process from "node:process";

export type StopSignal = "SIGTERM" | "SIGKILL";
export type InterruptSignal = "SIGINT" | "SIGTERM";

export interface ChildExit {
  /** The exit code, or null when a signal ended it (or it never started). */
  code: number | null;
  signal: string | null;
  /** Set when the command could not be started at all (not found, not executable). */
  error?: Error;
}

export interface ChildHandle {
  readonly pid: number | undefined;
  kill(signal: StopSignal): void;
  /** Resolves once the child has exited or failed to start; never rejects. */
  readonly exited: Promise<ChildExit>;
}

export interface ProcessIo {
  /** Starts `command` (no shell) with `env` and this process's stdin, stdout and stderr. */
  spawn(command: string, args: readonly string[], env: Record<string, string>): ChildHandle;
  /** Calls `handler` on each SIGINT or SIGTERM sent to this process; returns the unsubscribe. */
  onInterrupt(handler: (signal: InterruptSignal) => void): () => void;
}

export const nodeProcesses: ProcessIo = {
  spawn(command, args, env) {
    const child = spawn(command, [...args], { stdio: "inherit", env, shell: false });
    const exited = new Promise<ChildExit>((resolve) => {
      child.once("error", (error) => resolve({ code: null, signal: null, error }));
      child.once("exit", (code, signal) => resolve({ code, signal }));
    });
    return {
      pid: child.pid,
      kill(signal) {
        try {
          child.kill(signal);
        } catch {
          // already gone
        }
      },
      exited,
    };
  },
  onInterrupt(handler) {
    const onInt = () => handler("SIGINT");
    const onTerm = () => handler("SIGTERM");
    process.on("SIGINT", onInt);
    process.on("SIGTERM", onTerm);
    return () => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
    };
  },
};
