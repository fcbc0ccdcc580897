// What `npm run deploy` learnt about an environment (its public URL), kept under `.tmp/deploy/`
// of the working directory so `npm run setup` and the next deploy find it. Never a secret.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { z } from "zod";
import type { DeployEnv } from "./secrets.ts";

const DeployRecordSchema = z.object({
  env: z.enum(["staging", "production"]),
  /** The PUBLIC_URL the Worker was last deployed with. */
  publicUrl: z.url(),
  /** Given with --public-url (a custom domain): later deploys keep it. */
  explicit: z.boolean(),
  deployedAt: z.iso.datetime(),
});
export type DeployRecord = z.infer<typeof DeployRecordSchema>;

export function deployRecordPath(env: DeployEnv, cwd = process.cwd()): string {
  return join(cwd, ".tmp", "deploy", `${env}.json`);
}

/** The record, or null when there is none (or it is unreadable: then deploy learns it again). */
export async function readDeployRecord(env: DeployEnv, cwd?: string): Promise<DeployRecord | null> {
  try {
    const parsed = DeployRecordSchema.safeParse(
      JSON.parse(await readFile(deployRecordPath(env, cwd), "utf8")),
    );
    return parsed.success && parsed.data.env === env ? parsed.data : null;
  } catch {
    return null;
  }
}

export async function writeDeployRecord(record: DeployRecord, cwd?: string): Promise<void> {
  const file = deployRecordPath(record.env, cwd);
  await mkdir(join(file, ".."), { recursive: true });
  await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
}
