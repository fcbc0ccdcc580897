#!/usr/bin/env node
// The `switchyard` executable. Runs unchanged under Node 22.18+ (type stripping), Bun and Deno.
import { readFile } from "node:fs/promises";
import process from "node:process";
import { main } from "./main.ts";

const code = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  readFile: (path) => readFile(path, "utf8"),
  env: process.env,
  now: () => new Date(),
  fetch: (input, init) => fetch(input, init),
});
process.exitCode = code;
