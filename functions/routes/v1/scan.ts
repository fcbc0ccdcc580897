import { createRoute, z } from "@hono/zod-openapi";
import { ApiErrorSchema } from "../../../shared/auth/schemas.ts";
import { RepoParamsSchema } from "../../../shared/fleet/schemas.ts";
import { jsonContent, repoObject, send, v1Router } from "./context.ts";

const ScanResponseSchema = z.object({
  scheduled: z.enum(["reconcile", "reconcile-full"]),
  at: z.string(),
});

const scan = createRoute({
  method: "post",
  path: "/v1/repos/{owner}/{repo}/scan",
  operationId: "requestScan",
  tags: ["Graph"],
  summary: "Reconcile now (incremental; full when a day has passed), at most once a minute",
  security: [{ bearer: [] }],
  request: { params: RepoParamsSchema },
  responses: {
    202: jsonContent(ScanResponseSchema, "The reconcile is scheduled to run now"),
    401: jsonContent(ApiErrorSchema, "No token, or a bad one"),
    403: jsonContent(ApiErrorSchema, "No access to this repository"),
    404: jsonContent(ApiErrorSchema, "The repository is not installed"),
    429: jsonContent(ApiErrorSchema, "Asked less than a minute ago (see Retry-After)"),
  },
});

/** `POST /v1/repos/{owner}/{repo}/scan` (spec 6.4): reconcile now, rate-limited. */
export const scanRoutes = v1Router().openapi(scan, async (c) =>
  send(await repoObject(c.env, c.var.repo.repoId).requestScan()),
);
