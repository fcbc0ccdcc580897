import { evaluateSweep } from "../../../shared/idd/sweep.ts";
import { ValidationError } from "../../../shared/validation.ts";
import { parseFlags, requireFlag } from "../args.ts";
import type { CliCommand } from "../command.ts";
import { UsageError, writeJson } from "../io.ts";
import { readJsonFile } from "../read-json.ts";

const NAME = "classify";

export const classifyCommand: CliCommand = {
  async run(argv, io) {
    const flags = parseFlags(NAME, argv, { comments: { type: "string" } });
    const path = requireFlag(NAME, "comments", flags.comments);
    const input = await readJsonFile(io, NAME, path);
    try {
      writeJson(io, evaluateSweep(input));
    } catch (error) {
      if (error instanceof ValidationError)
        throw new UsageError(`${NAME}: ${path}: ${error.message}`);
      throw error;
    }
  },
};
