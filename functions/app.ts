import { Hono } from "hono";
import type { Env } from "./env.ts";
import { health } from "./routes/health.ts";
import { graphRoutes } from "./routes/v1/graph.ts";
import { webhookRoutes } from "./routes/webhooks.ts";

/** The Worker's HTTP surface; each route module owns one concern. */
export const app = new Hono<{ Bindings: Env }>()
  .route("/", health)
  .route("/", webhookRoutes)
  .route("/", graphRoutes)
  .notFound((c) =>
    c.json({ error: `no route for ${c.req.method} ${new URL(c.req.url).pathname}` }, 404),
  )
  .onError((error, c) => {
    console.error("unhandled error", error);
    return c.json({ error: "internal error" }, 500);
  });
