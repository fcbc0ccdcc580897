// The Worker secrets the manifest flow produces, and the two ways they reach the Worker:
// `wrangler secret put NAME --env ENV` with the value on stdin, or, when wrangler is not logged
// in (or with --print), files only the user can read plus the exact commands that put them.
// Values never reach a log or the terminal; only the files hold them.
import { randomBytes } from "node:crypto";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ManifestConversion } from "./manifest.ts";
import { toPkcs8Pem } from "./private-key.ts";
import type { Wrangler } from "./wrangler.ts";

/** The settings `npm run setup` writes (functions/env.ts names them for the Worker). */
export const SETUP_SECRET_NAMES = [
  "GITHUB_APP_ID",
  "GITHUB_APP_PRIVATE_KEY",
  "GITHUB_WEBHOOK_SECRET",
  "GITHUB_APP_CLIENT_ID",
  "GITHUB_APP_CLIENT_SECRET",
  "SESSION_SECRET",
] as const;
export type SetupSecretName = (typeof SETUP_SECRET_NAMES)[number];
export type SetupSecrets = Record<SetupSecretName, string>;

/**
 * The secrets for a converted App: its id, its key as PKCS#8, its webhook secret (one generated
 * here when GitHub returned none: `generatedWebhookSecret` says so), its OAuth client, and a
 * fresh random SESSION_SECRET for the status page's cookies.
 */
export function secretsFor(app: ManifestConversion): {
  secrets: SetupSecrets;
  generatedWebhookSecret: boolean;
} {
  const generatedWebhookSecret = app.webhook_secret === null;
  return {
    generatedWebhookSecret,
    secrets: {
      GITHUB_APP_ID: String(app.id),
      GITHUB_APP_PRIVATE_KEY: toPkcs8Pem(app.pem),
      GITHUB_WEBHOOK_SECRET: app.webhook_secret ?? randomBytes(32).toString("hex"),
      GITHUB_APP_CLIENT_ID: app.client_id,
      GITHUB_APP_CLIENT_SECRET: app.client_secret,
      SESSION_SECRET: randomBytes(32).toString("hex"),
    },
  };
}

export type DeployEnv = "staging" | "production";

/** Puts each secret with wrangler; stops at the first failure and names it (never the value). */
export async function putSecrets(
  wrangler: Wrangler,
  secrets: SetupSecrets,
  env: DeployEnv,
): Promise<{ ok: true } | { ok: false; name: SetupSecretName; message: string }> {
  for (const name of SETUP_SECRET_NAMES) {
    const result = await wrangler(["secret", "put", name, "--env", env], { input: secrets[name] });
    if (result.code !== 0) {
      const detail = result.spawnError ?? lastLines(`${result.stderr}\n${result.stdout}`);
      return {
        ok: false,
        name,
        message: `wrangler secret put ${name} --env ${env} failed: ${detail}`,
      };
    }
  }
  return { ok: true };
}

/** Writes one file per secret, readable by the user only (directory 0700, files 0600). */
export async function writeSecretFiles(dir: string, secrets: SetupSecrets): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  for (const name of SETUP_SECRET_NAMES) {
    const file = join(dir, name);
    await writeFile(file, secrets[name], { mode: 0o600 });
    await chmod(file, 0o600); // an existing file keeps its mode otherwise
  }
}

/** `'…'` when a path needs quoting for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The commands that put the secrets from the files of `writeSecretFiles`. */
export function secretPutCommands(dir: string, env: DeployEnv): string[] {
  return SETUP_SECRET_NAMES.map(
    (name) => `npx wrangler secret put ${name} --env ${env} < ${shellQuote(join(dir, name))}`,
  );
}

function lastLines(text: string): string {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  return lines.slice(-3).join(" / ") || "no output";
}
