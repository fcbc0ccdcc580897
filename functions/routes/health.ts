import { Hono } from "hono";
import type { Env } from "../env.ts";
import { directory } from "../objects/directory/directory-object.ts";
import { VERSION } from "../version.ts";

const SETTINGS = ["GITHUB_WEBHOOK_SECRET", "GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY"] as const;

/**
 * `GET /healthz`: `200 {"ok": true}` when Durable Object storage answers, `503 {"ok": false}`
 * otherwise, and nothing more: the version and which settings are missing are said only when
 * the setting `HEALTH_DETAILS` is `1` (the local stack sets it), never to anyone who asks.
 */
export const health = new Hono<{ Bindings: Env }>().get("/healthz", async (c) => {
  let ok = false;
  try {
    ok = (await directory(c.env).ping()) === true;
  } catch {
    ok = false;
  }
  const details =
    c.env.HEALTH_DETAILS?.trim() === "1"
      ? { version: VERSION, missingSettings: SETTINGS.filter((k) => !c.env[k]) }
      : {};
  return c.json({ ok, ...details }, ok ? 200 : 503);
});
