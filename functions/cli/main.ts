import type { CliCommand } from "./command.ts";
import { branchNameCommand } from "./commands/branch-name.ts";
import { claimCommand } from "./commands/claim.ts";
import { claimStateCommand } from "./commands/claim-state.ts";
import { classifyCommand } from "./commands/classify.ts";
import { commentCommand } from "./commands/comment.ts";
import { fetchSnapshotCommand } from "./commands/fetch-snapshot.ts";
import { heartbeatCommand } from "./commands/heartbeat.ts";
import { linkCommand } from "./commands/link.ts";
import { produceCommand } from "./commands/produce.ts";
import { queueCommand } from "./commands/queue.ts";
import { releaseCommand } from "./commands/release.ts";
import { scanCommand } from "./commands/scan.ts";
import { workCommand } from "./commands/work.ts";
import { type CliIo, ExitCode, OperationError, UsageError } from "./io.ts";

const commands: CliCommand[] = [
  scanCommand,
  produceCommand,
  fetchSnapshotCommand,
  linkCommand,
  branchNameCommand,
  claimStateCommand,
  classifyCommand,
  queueCommand,
  claimCommand,
  heartbeatCommand,
  releaseCommand,
  commentCommand,
  workCommand,
];

function help(): string {
  const lines = commands.map((c) => `  ${c.usage}`);
  return `usage: switchyard <command> [flags]\n\ncommands:\n${lines.join("\n")}\n`;
}

/**
 * Runs one CLI invocation and returns its exit code: 0 ok, 1 failed operation, 2 bad usage/input
 * (and 130 for an interrupted `work`).
 */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    (name === undefined ? io.stderr : io.stdout)(help());
    return name === undefined ? 2 : 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr(`switchyard: unknown command "${name}"\n\n${help()}`);
    return 2;
  }
  try {
    await command.run(rest, io);
    return 0;
  } catch (error) {
    if (error instanceof ExitCode) {
      if (error.message !== "") io.stderr(`switchyard ${error.message}\n`);
      return error.code;
    }
    if (error instanceof UsageError) {
      io.stderr(`switchyard ${error.message}\n`);
      return 2;
    }
    if (error instanceof OperationError) {
      io.stderr(`switchyard ${error.message}\n`);
      return 1;
    }
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    io.stderr(`switchyard ${name}: unexpected error: ${message}\n`);
    return 1;
  }
}
