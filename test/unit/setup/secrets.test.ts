import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  SETUP_SECRET_NAMES,
  secretPutCommands,
  secretsFor,
  shellQuote,
  writeSecretFiles,
} from "../../../infra/install/secrets.ts";

const pem = generateKeyPairSync("rsa", { modulusLength: 2048 })
  .privateKey.export({ type: "pkcs1", format: "pem" })
  .toString();
const app = {
  id: 4242,
  name: "switchyard-acme",
  html_url: "https://github.com/apps/switchyard-acme",
  client_id: "Iv23abc",
  client_secret: "cs-secret",
  webhook_secret: "wh-secret",
  pem,
};
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("the secrets setup writes", () => {
  it("are settings the Worker reads (functions/env.ts)", async () => {
    const envTs = await readFile(new URL("../../../functions/env.ts", import.meta.url), "utf8");
    for (const name of SETUP_SECRET_NAMES)
      expect(envTs).toMatch(new RegExp(`\\b${name}\\?: string`));
  });

  it("come from the converted App, the key as PKCS#8, with a fresh session secret", () => {
    const first = secretsFor(app);
    expect(first.generatedWebhookSecret).toBe(false);
    expect(first.secrets).toMatchObject({
      GITHUB_APP_ID: "4242",
      GITHUB_WEBHOOK_SECRET: "wh-secret",
      GITHUB_APP_CLIENT_ID: "Iv23abc",
      GITHUB_APP_CLIENT_SECRET: "cs-secret",
    });
    expect(first.secrets.GITHUB_APP_PRIVATE_KEY).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(first.secrets.SESSION_SECRET).toMatch(/^[0-9a-f]{64}$/);
    expect(secretsFor(app).secrets.SESSION_SECRET).not.toBe(first.secrets.SESSION_SECRET);
    const none = secretsFor({ ...app, webhook_secret: null });
    expect(none.generatedWebhookSecret).toBe(true);
    expect(none.secrets.GITHUB_WEBHOOK_SECRET).toMatch(/^[0-9a-f]{64}$/);
  });

  it("go to files only the user can read, with the commands that put them", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "switchyard-secrets-")), "it's here");
    dirs.push(join(dir, ".."));
    const { secrets } = secretsFor(app);
    await writeSecretFiles(dir, secrets);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    for (const name of SETUP_SECRET_NAMES) {
      const file = join(dir, name);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(await readFile(file, "utf8")).toBe(secrets[name]);
    }
    const commands = secretPutCommands(dir, "staging");
    expect(commands).toHaveLength(SETUP_SECRET_NAMES.length);
    expect(commands[0]).toBe(
      `npx wrangler secret put GITHUB_APP_ID --env staging < ${shellQuote(join(dir, "GITHUB_APP_ID"))}`,
    );
    expect(shellQuote("a/b c")).toBe("'a/b c'");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(commands.join("\n")).not.toContain("cs-secret");
  });
});
