import type { CliIo } from "./io.ts";

export interface CliCommand {
  name: string;
  /** One line for `switchyard help`. */
  usage: string;
  run(argv: string[], io: CliIo): Promise<void>;
}
