import { Hono } from "hono";
import type { Env } from "../env.ts";
import { directory } from "../objects/directory-object.ts";
import { VERSION } from "../version.ts";

const SETTINGS = ["GITHUB_WEBHOOK_SECRET", "GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY"] as const;

/** `GET /healthz`: version, whether Durable Object storage answers, and which secrets are set. */
export const health = new Hono<{ Bindings: Env }>().get("/healthz", async (c) => {
  let storage: "ok" | "unreachable" = "unreachable";
  try {
    if (await directory(c.env).ping()) storage = "ok";
  } catch {
    storage = "unreachable";
  }
  const missing = SETTINGS.filter((k) => !c.env[k]);
  return c.json(
    {
      status: storage === "ok" ? "ok" : "degraded",
      version: VERSION,
      storage,
      missingSettings: missing,
    },
    storage === "ok" ? 200 : 503,
  );
});
