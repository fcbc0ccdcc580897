#!/usr/bin/env node
// `npm run deploy`: `wrangler deploy --env staging|production` (wrangler.toml's environments),
// then the URLs a maintainer needs: the webhook URL GitHub posts to and the status page.
// The Worker's PUBLIC_URL (the OIDC audience, links) is passed as `--var`: the workers.dev URL
// wrangler printed last time (a first deploy learns it and deploys once more with it), or
// `--public-url` for a custom domain (remembered). Exit 0 deployed, 1 wrangler failed, 2 bad usage.
import process from "node:process";
import { z } from "zod";
import { readDeployRecord, writeDeployRecord } from "./deploy-record.ts";
import { envFlag, FlagError, httpUrlFlag, parseFlags } from "./flags.ts";
import { normalizeWorkerUrl, WEBHOOK_PATH } from "./manifest.ts";
import { deployedUrl, runWrangler, type WranglerResult } from "./wrangler.ts";

const USAGE = `usage: npm run deploy -- [--env production|staging] [--public-url URL] [--dry-run]

  --env         the wrangler.toml environment (default production)
  --public-url  the Worker's public URL when it is not the workers.dev one (a custom domain)
  --dry-run     build and check the Worker and its bindings, upload nothing`;

const FLAGS = {
  env: { type: "string" },
  "public-url": { type: "string" },
  "dry-run": { type: "boolean" },
  help: { type: "boolean" },
} as const;

const DeployFlagsSchema = z.object({
  env: envFlag,
  "public-url": httpUrlFlag.optional(),
  "dry-run": z.boolean().default(false),
  help: z.boolean().default(false),
});

const say = (line: string) => process.stdout.write(`${line}\n`);

async function deploy(env: string, publicUrl: string | undefined, dryRun: boolean) {
  const args = ["deploy", "--env", env];
  if (publicUrl) args.push("--var", `PUBLIC_URL:${publicUrl}`);
  if (dryRun) args.push("--dry-run");
  process.stderr.write(`$ wrangler ${args.join(" ")}\n`);
  const result: WranglerResult = await runWrangler(args, { echo: process.stderr });
  if (result.code !== 0) {
    throw new Error(
      result.spawnError ?? `wrangler ${args.join(" ")} exited with ${result.code ?? "a signal"}`,
    );
  }
  return deployedUrl(`${result.stdout}\n${result.stderr}`);
}

async function main(argv: string[]): Promise<number> {
  const flags = parseFlags("deploy", argv, FLAGS, DeployFlagsSchema);
  if (flags.help) {
    say(USAGE);
    return 0;
  }
  const env = flags.env;
  if (flags["dry-run"]) {
    await deploy(env, flags["public-url"], true);
    say(`Dry run of ${env}: the Worker builds and its bindings are above; nothing was uploaded.`);
    return 0;
  }
  const record = await readDeployRecord(env);
  const explicit = flags["public-url"]
    ? normalizeWorkerUrl(flags["public-url"])
    : record?.explicit
      ? record.publicUrl
      : undefined;
  let publicUrl = explicit ?? record?.publicUrl;
  const printed = await deploy(env, publicUrl, false);
  if (!explicit && printed && printed !== publicUrl) {
    say(`PUBLIC_URL becomes ${printed} (the URL wrangler printed): deploying once more with it.`);
    await deploy(env, printed, false);
    publicUrl = printed;
  }
  if (!publicUrl) {
    process.stderr.write(
      "deploy: wrangler printed no workers.dev URL (is workers_dev off?); run again with --public-url URL\n",
    );
    return 1;
  }
  await writeDeployRecord({
    env,
    publicUrl,
    explicit: explicit !== undefined,
    deployedAt: new Date().toISOString(),
  });
  say(`Deployed switchyard (${env}): ${publicUrl}`);
  say(`  webhook URL:  ${publicUrl}${WEBHOOK_PATH}`);
  say(`  status page:  ${publicUrl}/`);
  say(`Next: npm run setup -- --env ${env}   (creates the GitHub App for this Worker)`);
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof FlagError) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`deploy: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
