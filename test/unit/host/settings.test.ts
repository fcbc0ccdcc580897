// The portable host's configuration stays the Worker's: the same bindings as wrangler.toml, the
// same setting names as functions/env.ts, read from the environment or a .env file.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CRON, OBJECT_BINDINGS } from "../../../functions/host/bindings.ts";
import { nextTick } from "../../../functions/host/cron-tick.ts";
import { loadSettings, parseDotenv, SETTING_NAMES } from "../../../functions/host/settings.ts";

const root = new URL("../../../", import.meta.url);

describe("the host's configuration", () => {
  it("binds the objects wrangler.toml binds and fires the cron it names", () => {
    const toml = readFileSync(new URL("wrangler.toml", root), "utf8");
    const top = toml.slice(0, toml.indexOf("[env."));
    const bindings = Object.fromEntries(
      [
        ...top.matchAll(
          /\[\[durable_objects\.bindings\]\]\s*name = "(\w+)"\s*class_name = "(\w+)"/g,
        ),
      ].map((m) => [m[1], m[2]]),
    );
    expect(bindings).toEqual(OBJECT_BINDINGS);
    expect(top).toContain(`crons = ["${CRON}"]`);
  });

  it("reads every string setting of the Worker's Env, and only those", () => {
    const env = readFileSync(new URL("functions/env.ts", root), "utf8");
    const names = [...env.matchAll(/^\s+([A-Z][A-Z0-9_]+)\?: string;/gm)].map((m) => m[1]);
    expect([...SETTING_NAMES].sort()).toEqual(names.sort());
    const settings = loadSettings({
      environment: { GITHUB_APP_ID: "7", PATH: "/bin", HEALTH_DETAILS: "" },
    });
    expect(settings).toEqual({ GITHUB_APP_ID: "7", GITHUB_API_URL: "https://api.github.com" });
  });

  it("parses .env files, quotes and multi-line keys included", () => {
    const parsed = parseDotenv(
      [
        "# a comment",
        "export GITHUB_APP_ID=12 # trailing comment",
        "GITHUB_WEBHOOK_SECRET='s3cr#t'",
        'GITHUB_APP_PRIVATE_KEY="-----BEGIN PRIVATE KEY-----',
        "abc",
        '-----END PRIVATE KEY-----"',
        'SESSION_SECRET="a\\nb"',
        "not a line",
        "PUBLIC_URL=https://switchyard.example.com",
      ].join("\n"),
    );
    expect(parsed).toEqual({
      GITHUB_APP_ID: "12",
      GITHUB_WEBHOOK_SECRET: "s3cr#t",
      GITHUB_APP_PRIVATE_KEY: "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----",
      SESSION_SECRET: "a\nb",
      PUBLIC_URL: "https://switchyard.example.com",
    });
  });

  it("ticks at every quarter hour of the clock", () => {
    expect(nextTick(Date.UTC(2026, 0, 1, 10, 0))).toBe(Date.UTC(2026, 0, 1, 10, 15));
    expect(nextTick(Date.UTC(2026, 0, 1, 10, 14, 59))).toBe(Date.UTC(2026, 0, 1, 10, 15));
    expect(nextTick(Date.UTC(2026, 0, 1, 23, 50))).toBe(Date.UTC(2026, 0, 2, 0, 0));
  });
});
