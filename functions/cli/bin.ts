#!/usr/bin/env node
// The `switchyard` executable. Runs unchanged under Node 22.18+ (type stripping), Bun and Deno.
import { readFile } from "node:fs/promises";
import * as nodeModule from "node:module";
import process from "node:process";

// Node keeps the compiled (and type-stripped) modules on disk, so a run after the first skips
// most of the startup work; a no-op where unsupported (Bun, Deno, older Node).
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
// Imported after the cache is on, so the CLI's own modules are served from it.
const { main } = await import("./main.ts");

const code = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  // Read whole, then decoded once: Node's readFile(path, "utf8") decodes chunk by chunk into a
  // string that JSON.parse must first copy whole (22 MB more heap for a 100k-issue snapshot).
  readFile: async (path) => (await readFile(path)).toString("utf8"),
  env: process.env,
  now: () => new Date(),
  fetch: (input, init) => fetch(input, init),
});
process.exitCode = code;
