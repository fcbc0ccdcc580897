import { branchName, renderBranchPattern, slugify } from "../../../shared/idd/branch-name.ts";
import { parseFlags, requireFlag } from "../args.ts";
import type { CliCommand } from "../command.ts";
import { UsageError, writeJson } from "../io.ts";

const NAME = "branch-name";

function positiveInteger(flag: string, value: string): number {
  if (!/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${NAME}: --${flag} must be a positive integer, got "${value}"`);
  }
  return Number(value);
}

export const branchNameCommand: CliCommand = {
  async run(argv, io) {
    const flags = parseFlags(NAME, argv, {
      number: { type: "string" },
      title: { type: "string" },
      pattern: { type: "string" },
      phase: { type: "string" },
    });
    const number = positiveInteger("number", requireFlag(NAME, "number", flags.number));
    // An empty title is valid input (its slug is `task`); only a missing flag is an error.
    if (flags.title === undefined) throw new UsageError(`${NAME}: --title is required`);
    const title = flags.title;
    const phase = flags.phase === undefined ? null : positiveInteger("phase", flags.phase);
    let branch: string;
    try {
      branch = renderBranchPattern({ number, title, pattern: flags.pattern, phase });
    } catch (error) {
      if (error instanceof RangeError) throw new UsageError(`${NAME}: ${error.message}`);
      throw error;
    }
    writeJson(io, {
      number,
      title,
      slug: slugify(title),
      branch,
      iddBranch: branchName(number, title),
    });
  },
};
