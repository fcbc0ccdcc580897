import { createRoute, z } from "@hono/zod-openapi";
import { ApiErrorSchema } from "../../../shared/auth/schemas.ts";
import { jsonContent, repoObject, v1Router } from "./context.ts";

/** The graph route's query; the auth middleware checks it too, before any Durable Object. */
export const GraphQuerySchema = z.object({
  // Rotates `ready` the way `switchyard scan --machine` does (spec 3.2).
  machine: z
    .string()
    .min(1, "machine must be 1 to 200 characters")
    .max(200, "machine must be 1 to 200 characters")
    .optional(),
});

const graph = createRoute({
  method: "get",
  path: "/v1/repos/{owner}/{repo}/graph",
  tags: ["Graph"],
  summary: "The scan of the stored graph plus watermarks, delivery counters and the config",
  security: [{ bearer: [] }],
  request: {
    params: z.object({ owner: z.string().min(1), repo: z.string().min(1) }),
    query: GraphQuerySchema,
  },
  responses: {
    200: jsonContent(
      z.looseObject({}).meta({
        description:
          "The output of `switchyard scan` (docs/graph.md; `kicks` are those of the closes learned since the producer watermark) plus `watermarks`, `deliveries`, `config`, `parkedWrites` (the 100 most recent) and `parkedWritesCount`",
      }),
      "The graph",
    ),
    400: jsonContent(ApiErrorSchema, "A query parameter fails its schema"),
    401: jsonContent(
      ApiErrorSchema,
      "No token, a malformed header, or a bad, expired or revoked token",
    ),
    403: jsonContent(ApiErrorSchema, "The token has no access to this repository"),
    404: jsonContent(ApiErrorSchema, "The repository is not installed (answered only after auth)"),
  },
});

/** `GET /v1/repos/{owner}/{repo}/graph[?machine=]`: the scan of the stored graph plus its watermarks. */
export const graphRoutes = v1Router().openapi(graph, async (c) => {
  const { machine } = c.req.valid("query");
  return c.json(await repoObject(c.env, c.var.repo.repoId).graph(Date.now(), machine), 200);
});
