import type { ProcessIo } from "./processes.ts";

/** What a CLI command may touch. Injected so tests run commands in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readFile(path: string): Promise<string>;
  env: Readonly<Record<string, string | undefined>>;
  now(): Date;
  fetch: typeof fetch;
  /** Child processes and signals, for `work` (default: this process, see processes.ts). */
  processes?: ProcessIo;
}

/** Bad usage or bad input: exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** A well-formed request that failed while running (network, GitHub, server): exit code 1. */
export class OperationError extends Error {
  override name = "OperationError";
}

export function writeJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** A command that ends with its own exit code (`work` interrupted: 130), after its message. */
export class ExitCode extends Error {
  override name = "ExitCode";
  readonly code: number;
  constructor(code: number, message = "") {
    super(message);
    this.code = code;
  }
}
