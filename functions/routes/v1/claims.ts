import { createRoute, z } from "@hono/zod-openapi";
import {
  ClaimGrantSchema,
  ClaimNextRequestSchema,
  ClaimRequestSchema,
  ClaimsResponseSchema,
  ErrorBodySchema,
  HeartbeatRequestSchema,
  HeartbeatResponseSchema,
  IssueParamsSchema,
  ReleaseRequestSchema,
  ReleaseResponseSchema,
  RepoParamsSchema,
} from "../../../shared/fleet/schemas.ts";
import { jsonBody, jsonContent, repoObject, send, v1Router } from "./context.ts";

const errors = {
  400: jsonContent(ErrorBodySchema, "The body or a parameter fails its schema"),
  401: jsonContent(ErrorBodySchema, "No token, or a bad one"),
  403: jsonContent(ErrorBodySchema, "No access to this repository"),
  404: jsonContent(ErrorBodySchema, "The repository is not installed, or the issue is unknown"),
};

/** Grants only: synchronous mirroring where IDD agents work (see Retry-After). */
const mirrorFailed = {
  503: jsonContent(
    ErrorBodySchema,
    "unavailable, reason mirror-failed: IDD agents work on this repository and the grant's claimed-by marker could not be posted; nothing was granted (see Retry-After)",
  ),
};

const claimIssue = createRoute({
  method: "post",
  path: "/v1/repos/{owner}/{repo}/issues/{n}/claim",
  operationId: "claimIssue",
  tags: ["Claims"],
  summary: "Claim one issue: a fencing token, a branch and an expiry",
  security: [{ bearer: [] }],
  request: { params: IssueParamsSchema, body: jsonBody(ClaimRequestSchema) },
  responses: {
    201: jsonContent(ClaimGrantSchema, "The claim"),
    409: jsonContent(
      ErrorBodySchema,
      "Not claimable now: `reason` is held (with `holder`), closed, hold, epic, blocked, stuck, agent-limit, repo-limit, label-limit (with `label`), paused (the circuit breaker: the default branch is red and the issue is not a repair issue) or write-in-flight (a write of the previous claim may still reach GitHub; see Retry-After)",
    ),
    ...errors,
    ...mirrorFailed,
  },
});

const claimNext = createRoute({
  method: "post",
  path: "/v1/repos/{owner}/{repo}/claims",
  operationId: "claimNext",
  tags: ["Claims"],
  summary: "Claim the queue's first available issue, atomically",
  security: [{ bearer: [] }],
  request: { params: RepoParamsSchema, body: jsonBody(ClaimNextRequestSchema) },
  responses: {
    201: jsonContent(ClaimGrantSchema, "The claim, with the queue item it took"),
    204: {
      description:
        "No work available for this agent. While the circuit breaker is red (and no repair issue is available) the answer says so in its headers.",
      headers: z.object({
        "X-Switchyard-Paused": z.string().optional().openapi({
          description:
            "Present while the breaker pauses ordinary work: when it turned red (ISO 8601).",
        }),
        "Retry-After": z.string().optional().openapi({
          description: "With X-Switchyard-Paused: seconds before asking again.",
        }),
      }),
    },
    409: jsonContent(ErrorBodySchema, "agent-limit or repo-limit"),
    ...errors,
    ...mirrorFailed,
  },
});

const heartbeat = createRoute({
  method: "post",
  path: "/v1/repos/{owner}/{repo}/issues/{n}/claim/heartbeat",
  operationId: "heartbeatClaim",
  tags: ["Claims"],
  summary: "Extend a live claim by its TTL",
  security: [{ bearer: [] }],
  request: { params: IssueParamsSchema, body: jsonBody(HeartbeatRequestSchema) },
  responses: {
    200: jsonContent(HeartbeatResponseSchema, "The new expiry"),
    409: jsonContent(
      ErrorBodySchema,
      "stale-fence: the claim is not live (nothing changed); reason preempted (with holder) when an earlier IDD claim holds the issue",
    ),
    ...errors,
  },
});

const release = createRoute({
  method: "post",
  path: "/v1/repos/{owner}/{repo}/issues/{n}/claim/release",
  operationId: "releaseClaim",
  tags: ["Claims"],
  summary: "Release a claim: done, abandoned or failed",
  security: [{ bearer: [] }],
  request: { params: IssueParamsSchema, body: jsonBody(ReleaseRequestSchema) },
  responses: {
    200: jsonContent(ReleaseResponseSchema, "Released"),
    409: jsonContent(
      ErrorBodySchema,
      "stale-fence: the claim is not live (nothing changed); reason preempted (with holder) when an earlier IDD claim holds the issue",
    ),
    ...errors,
  },
});

const list = createRoute({
  method: "get",
  path: "/v1/repos/{owner}/{repo}/claims",
  operationId: "listClaims",
  tags: ["Claims"],
  summary: "The repository's live claims",
  security: [{ bearer: [] }],
  request: { params: RepoParamsSchema },
  responses: { 200: jsonContent(ClaimsResponseSchema, "Live claims, by fence"), ...errors },
});

/** Claims (spec 6.4): grant, claim-next, heartbeat, release, list. */
export const claimRoutes = v1Router()
  .openapi(claimIssue, async (c) => {
    const { n } = c.req.valid("param");
    return send(await repoObject(c.env, c.var.repo.repoId).claim(n, c.req.valid("json")));
  })
  .openapi(claimNext, async (c) =>
    send(await repoObject(c.env, c.var.repo.repoId).claim(null, c.req.valid("json"))),
  )
  .openapi(heartbeat, async (c) => {
    const { n } = c.req.valid("param");
    return send(await repoObject(c.env, c.var.repo.repoId).heartbeat(n, c.req.valid("json")));
  })
  .openapi(release, async (c) => {
    const { n } = c.req.valid("param");
    return send(await repoObject(c.env, c.var.repo.repoId).release(n, c.req.valid("json")));
  })
  .openapi(list, async (c) => send(await repoObject(c.env, c.var.repo.repoId).liveClaims()));
