import { type CliIo, UsageError } from "./io.ts";

/** Reads an input file; an unreadable one is a usage error (exit 2) naming the file. */
export async function readTextFile(io: CliIo, command: string, path: string): Promise<string> {
  try {
    return await io.readFile(path);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(`${command}: cannot read ${path}: ${reason}`);
  }
}

/** Reads and parses a JSON input file; unreadable or malformed input is a usage error (exit 2). */
export async function readJsonFile(io: CliIo, command: string, path: string): Promise<unknown> {
  return parseJsonText(command, path, await readTextFile(io, command, path));
}

/** Parses the JSON text of an input file; malformed text is a usage error (exit 2). */
export function parseJsonText(command: string, path: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(`${command}: ${path} is not valid JSON: ${reason}`);
  }
}
