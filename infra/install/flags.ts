// Flag parsing for `npm run setup` and `npm run deploy`: node:util parses (unknown flags and
// stray arguments are errors), zod validates and gives the types; a bad flag is named.
import { parseArgs } from "node:util";
import { z } from "zod";
import { firstIssue } from "../../shared/validation.ts";

/** Bad usage: the message names the flag; exit code 2. */
export class FlagError extends Error {
  override name = "FlagError";
}

export type FlagSpec = Record<string, { type: "string" | "boolean" }>;

export function parseFlags<S extends z.ZodType>(
  command: string,
  argv: string[],
  spec: FlagSpec,
  schema: S,
): z.infer<S> {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: argv, options: spec, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new FlagError(`${command}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = schema.safeParse(values);
  if (!parsed.success) {
    const issue = firstIssue(parsed.error);
    throw new FlagError(`${command}: --${issue.path}: ${issue.message}`);
  }
  return parsed.data;
}

export const httpUrlFlag = z.url({
  protocol: /^https?$/,
  message: "expected an http(s) URL, e.g. https://switchyard.acme.workers.dev",
});

export const envFlag = z
  .enum(["staging", "production"], { message: 'expected "staging" or "production"' })
  .default("production");
