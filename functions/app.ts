import { OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import { type Env, publicUrl } from "./env.ts";
import { fleetBodyLimit } from "./http/body-limit.ts";
import { health } from "./routes/health.ts";
import { loginRoutes } from "./routes/status/login.ts";
import { statusPages } from "./routes/status/pages.ts";
import { refuse, repoAuth } from "./routes/v1/auth.ts";
import { claimRoutes } from "./routes/v1/claims.ts";
import { graphRoutes } from "./routes/v1/graph.ts";
import { KeyCallRefused } from "./routes/v1/key-calls.ts";
import { keyRoutes } from "./routes/v1/keys.ts";
import { declareBodyLimit } from "./routes/v1/openapi-body-limit.ts";
import { orgRoutes } from "./routes/v1/org.ts";
import { orgAuth } from "./routes/v1/org-auth.ts";
import { queueRoutes } from "./routes/v1/queue.ts";
import { scanRoutes } from "./routes/v1/scan.ts";
import { writeRoutes } from "./routes/v1/writes.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import { VERSION } from "./version.ts";

/** The Worker's HTTP surface; each route module owns one concern. */
export const app = new OpenAPIHono<{ Bindings: Env }>();

app.route("/", health).route("/", webhookRoutes);
// The status pages and their GitHub login (docs/status-page.md): HTML, server-rendered.
app.route("/", loginRoutes).route("/", statusPages);
// A body over the fleet API's limit is 413 before anything else (no caller proven, no object asked).
app.use("/v1/*", fleetBodyLimit);
// Every repository route proves the caller first (spec 6.4); routes read `c.var.caller/repo`.
app.use("/v1/repos/:owner/:repo/*", repoAuth);
app
  .route("/", graphRoutes)
  .route("/", queueRoutes)
  .route("/", claimRoutes)
  .route("/", writeRoutes)
  .route("/", keyRoutes)
  .route("/", scanRoutes);
// The org queue (spec 6.4): its own auth (owner keys, user tokens; repository-scoped refused).
app.use("/v1/orgs/:owner/*", orgAuth);
app.route("/", orgRoutes);

// The fleet API's description (spec 6.4), generated from the route schemas; both are public.
app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
  type: "http",
  scheme: "bearer",
  description:
    "A GitHub user token with push or admin on the repository (`ghp_`/`gho_` with the `repo` scope, or `public_repo` on a public repository; a `ghu_` issued to switchyard's own App; `github_pat_` and `ghs_` are refused), a fleet key (`syk_...`), or a GitHub Actions OIDC token whose audience is the Worker's PUBLIC_URL",
});
// Generators and linters need a server to call (clients are generated from this document), so
// it names the Worker: PUBLIC_URL, else the origin the document was asked from.
const description = (url: string) => ({
  openapi: "3.1.0",
  info: {
    title: "switchyard fleet API",
    version: VERSION,
    description:
      "Claimable work for agent fleets from a repository's issue graph. See docs/api.md.",
    // OpenAPI 3.1's SPDX identifier; the generator's 3.0-era types do not list it.
    license: { name: "MIT", identifier: "MIT" },
  },
  servers: [{ url }],
});
app.get("/openapi.json", (c) =>
  c.json(
    declareBodyLimit(
      app.getOpenAPI31Document(description(publicUrl(c.env) ?? new URL(c.req.url).origin)),
    ),
  ),
);
app.get("/docs", Scalar({ url: "/openapi.json", pageTitle: "switchyard fleet API" }));

app.notFound((c) =>
  c.json(
    {
      error: "not-found",
      message: `no route for ${c.req.method} ${new URL(c.req.url).pathname}`,
    },
    404,
  ),
);
app.onError((error, c) => {
  // A fleet key's call the RepoObject refused (key-calls.ts): the refusal is the answer.
  if (error instanceof KeyCallRefused) return refuse(c, error.failure);
  console.error("unhandled error", error);
  return c.json({ error: "internal", message: "internal error" }, 500);
});
