import { createRoute } from "@hono/zod-openapi";
import { ApiErrorSchema } from "../../../shared/auth/schemas.ts";
import {
  parseCapabilityList,
  parseKindList,
  QueueQuerySchema,
  QueueResponseSchema,
  RepoParamsSchema,
} from "../../../shared/fleet/schemas.ts";
import { jsonContent, repoObject, send, v1Router } from "./context.ts";

const queue = createRoute({
  method: "get",
  path: "/v1/repos/{owner}/{repo}/queue",
  operationId: "getQueue",
  tags: ["Queue"],
  summary:
    "Claimable work in the order of spec 6.4's table (number, impact or priority); while the circuit breaker is red it carries `paused`",
  security: [{ bearer: [] }],
  request: { params: RepoParamsSchema, query: QueueQuerySchema },
  responses: {
    200: jsonContent(QueueResponseSchema, "The queue, filtered for this caller"),
    400: jsonContent(ApiErrorSchema, "A query parameter fails its schema"),
    401: jsonContent(ApiErrorSchema, "No token, or a bad one"),
    403: jsonContent(ApiErrorSchema, "No access to this repository"),
    404: jsonContent(ApiErrorSchema, "The repository is not installed"),
  },
});

/** `GET /v1/repos/{owner}/{repo}/queue`: the claimable issues, in the caller's order. */
export const queueRoutes = v1Router().openapi(queue, async (c) => {
  const q = c.req.valid("query");
  const result = await repoObject(c.env, c.var.repo.repoId).workQueue({
    limit: q.limit,
    capabilities: parseCapabilityList(q.capabilities),
    ...(q.machine !== undefined ? { machine: q.machine } : {}),
    ...(q.order !== undefined ? { order: q.order } : {}),
    ...(q.kinds !== undefined ? { kinds: parseKindList(q.kinds) } : {}),
  });
  return send(result);
});
