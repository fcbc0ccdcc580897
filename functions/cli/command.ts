import type { CliIo } from "./io.ts";

/** What a command module exports: its behaviour. Its name and usage line live in main.ts. */
export interface CliCommand {
  run(argv: string[], io: CliIo): Promise<void>;
}

/**
 * A command as `main` knows it before running it: name, help line, and how to load its module.
 * Loading only the command being run keeps startup from paying for every other command's
 * dependencies (octokit, yaml, markdown parsing, schemas).
 */
export interface CommandEntry {
  name: string;
  /** One line for `switchyard help`. */
  usage: string;
  load(): Promise<CliCommand>;
}
