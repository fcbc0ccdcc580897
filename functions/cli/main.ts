import type { CommandEntry } from "./command.ts";
import { type CliIo, ExitCode, OperationError, UsageError } from "./io.ts";

// Each command's module is imported only when that command runs (see CommandEntry).
const commands: CommandEntry[] = [
  {
    name: "scan",
    usage:
      "scan --snapshot FILE | --repo OWNER/NAME [--api-url URL] [--now ISO] [--window-hours N] [--machine NAME] [--config switchyard.yml]",
    load: async () => (await import("./commands/scan.ts")).scanCommand,
  },
  {
    name: "produce",
    usage:
      "produce --snapshot FILE | --repo OWNER/NAME [--api-url URL] [--mode events|all] [--approval-label L] [--dry-run] [--now ISO] [--window-hours N]",
    load: async () => (await import("./commands/produce.ts")).produceCommand,
  },
  {
    name: "fetch-snapshot",
    usage:
      "fetch-snapshot --repo OWNER/NAME [--api-url URL] [--comments]   (token from GITHUB_TOKEN)",
    load: async () => (await import("./commands/fetch-snapshot.ts")).fetchSnapshotCommand,
  },
  {
    name: "link",
    usage:
      "link --repo OWNER/NAME --parent N --child M | --issue N --blocked-by M [--remove] [--api-url URL]",
    load: async () => (await import("./commands/link.ts")).linkCommand,
  },
  {
    name: "branch-name",
    usage: "branch-name --number N --title TITLE [--pattern PATTERN] [--phase K]",
    load: async () => (await import("./commands/branch-name.ts")).branchNameCommand,
  },
  {
    name: "claim-state",
    usage:
      "claim-state --comments FILE [--now ISO] [--stale-hours N] [--trusted a,b] [--claim-id ID] [--nonce N] [--handoff-mode disabled|human-gated] [--handoff-authorized a,b] [--open-pr N]",
    load: async () => (await import("./commands/claim-state.ts")).claimStateCommand,
  },
  {
    name: "classify",
    usage: "classify --comments FILE   (a comment list, or {body, labels, author, comments})",
    load: async () => (await import("./commands/classify.ts")).classifyCommand,
  },
  {
    name: "queue",
    usage:
      "queue --server URL --repo OWNER/NAME [--machine M] [--capabilities a,b] [--limit N] [--order number|impact|priority] [--kinds kick,rollup,ready,reply]",
    load: async () => (await import("./commands/queue.ts")).queueCommand,
  },
  {
    name: "claim",
    usage:
      "claim --server URL --repo OWNER/NAME --agent-id ID [--issue N [--kind work|reply]] [--ttl-seconds N] [--machine M] [--capabilities a,b] [--kinds kick,...,reply]   (no --issue: the queue's next issue, null when empty)",
    load: async () => (await import("./commands/claim.ts")).claimCommand,
  },
  {
    name: "heartbeat",
    usage: "heartbeat --server URL --repo OWNER/NAME --issue N --claim-id ID --fence N",
    load: async () => (await import("./commands/heartbeat.ts")).heartbeatCommand,
  },
  {
    name: "release",
    usage:
      "release --server URL --repo OWNER/NAME --issue N --claim-id ID --fence N --outcome done|abandoned|failed [--note TEXT]",
    load: async () => (await import("./commands/release.ts")).releaseCommand,
  },
  {
    name: "comment",
    usage:
      "comment --server URL --repo OWNER/NAME --issue N --claim-id ID --fence N --body TEXT | --body-file FILE",
    load: async () => (await import("./commands/comment.ts")).commentCommand,
  },
  {
    name: "work",
    usage:
      "work --server URL --repo OWNER/NAME --agent-id ID [--once] [--machine M] [--capabilities a,b] [--kinds kick,rollup,ready,reply] [--ttl-seconds N] [--heartbeat-seconds N] [--grace-seconds N] -- COMMAND [ARGS...]",
    load: async () => (await import("./commands/work.ts")).workCommand,
  },
  {
    name: "serve",
    usage:
      "serve [--port N] [--hostname H] [--data DIR] [--dotenv FILE] [--synchronous full|normal] [--test-scheduled]   (the Worker self-hosted on SQLite; docs/self-hosting.md)",
    load: async () => (await import("./commands/serve.ts")).serveCommand,
  },
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
    await (await command.load()).run(rest, io);
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
