#!/usr/bin/env node
// `npm run setup`: creates switchyard's GitHub App from its manifest and gives the deployed
// Worker the App's credentials (setup-flow.ts). Exit 0 when the App exists and its secrets are
// set or printed, 1 when the flow failed, 2 on bad usage, 130 when interrupted.
import process from "node:process";
import { createInterface } from "node:readline/promises";
import { z } from "zod";
import { readDeployRecord } from "./deploy-record.ts";
import { envFlag, FlagError, httpUrlFlag, parseFlags } from "./flags.ts";
import { defaultAppName, normalizeWorkerUrl } from "./manifest.ts";
import { startSetup } from "./setup-flow.ts";
import { runWrangler } from "./wrangler.ts";

const USAGE = `usage: npm run setup -- [--url WORKER_URL] [--env production|staging] [--api-url URL]
                     [--org ORG] [--name NAME] [--port N] [--print] [--secrets-dir DIR]

  --url          the deployed Worker's URL (default: what \`npm run deploy\` recorded; asked otherwise)
  --env          the Worker environment whose secrets are set (default production)
  --api-url      GitHub's API: https://api.github.com (default), https://HOST/api/v3 for GitHub
                 Enterprise Server, or the simulator's URL
  --org          create the App in this organization instead of your account
  --name         the App's name (default from the Worker's host; GitHub lets you change it)
  --port         the local setup page's port (default: any free one)
  --print        do not run wrangler: write the secrets to files and print the commands
  --secrets-dir  where those files go (default .tmp/setup-ENV)`;

const FLAGS = {
  url: { type: "string" },
  env: { type: "string" },
  "api-url": { type: "string" },
  org: { type: "string" },
  name: { type: "string" },
  port: { type: "string" },
  print: { type: "boolean" },
  "secrets-dir": { type: "string" },
  help: { type: "boolean" },
} as const;

const SetupFlagsSchema = z.object({
  url: httpUrlFlag.optional(),
  env: envFlag,
  "api-url": httpUrlFlag.default("https://api.github.com"),
  org: z
    .string()
    .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$/, "expected an organization login")
    .optional(),
  name: z.string().min(1).max(34, "GitHub App names have at most 34 characters").optional(),
  port: z
    .string()
    .regex(/^\d{1,5}$/, "expected a port number")
    .transform(Number)
    .pipe(z.number().max(65535, "expected a port number"))
    .default(0),
  print: z.boolean().default(false),
  "secrets-dir": z.string().min(1).optional(),
  help: z.boolean().default(false),
});

const say = (line: string) => process.stdout.write(`${line}\n`);

async function workerUrlFrom(flag: string | undefined, env: "staging" | "production") {
  if (flag) return normalizeWorkerUrl(flag);
  const record = await readDeployRecord(env);
  if (record) {
    say(`Worker (${env}, from the last \`npm run deploy\`): ${record.publicUrl}`);
    return normalizeWorkerUrl(record.publicUrl);
  }
  if (!process.stdin.isTTY) {
    throw new FlagError(
      "setup: --url is required (the deployed Worker's URL, printed by `npm run deploy`)",
    );
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = (
      await rl.question("The deployed Worker's URL (printed by `npm run deploy`): ")
    ).trim();
    const parsed = httpUrlFlag.safeParse(answer);
    if (!parsed.success)
      throw new FlagError(`setup: ${JSON.stringify(answer)} is not an http(s) URL`);
    return normalizeWorkerUrl(parsed.data);
  } finally {
    rl.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const flags = parseFlags("setup", argv, FLAGS, SetupFlagsSchema);
  if (flags.help) {
    say(USAGE);
    return 0;
  }
  const workerUrl = await workerUrlFrom(flags.url, flags.env);
  const running = await startSetup(
    {
      workerUrl,
      apiUrl: flags["api-url"].replace(/\/+$/, ""),
      name: flags.name ?? defaultAppName(workerUrl),
      ...(flags.org ? { org: flags.org } : {}),
      env: flags.env,
      port: flags.port,
      print: flags.print,
      secretsDir: flags["secrets-dir"] ?? `.tmp/setup-${flags.env}`,
    },
    { say, wrangler: runWrangler },
  );
  const interrupted = new Promise<number>((resolve) => {
    const stop = () => resolve(130);
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  say(`Open ${running.url} in a browser to create the GitHub App (Ctrl-C to stop).`);
  try {
    return await Promise.race([running.done.then(() => 0), interrupted]);
  } catch (error) {
    process.stderr.write(`setup: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await running.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof FlagError) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`setup: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
