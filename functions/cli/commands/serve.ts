import type { CliCommand } from "../command.ts";
import { UsageError } from "../io.ts";

/**
 * `switchyard serve`: the Worker as a self-hosted process (functions/serve.ts). Loaded only for
 * this command: the Worker, its objects and the SQLite driver are imported when it runs.
 */
export const serveCommand: CliCommand = {
  async run(argv) {
    const { runServe, ServeUsageError } = await import("../../serve.ts");
    try {
      await runServe(argv);
    } catch (error) {
      if (error instanceof ServeUsageError) throw new UsageError(error.message);
      throw error;
    }
  },
};
