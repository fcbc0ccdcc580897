import { createRoute } from "@hono/zod-openapi";
import type { ZodType } from "zod";
import {
  CloseRequestSchema,
  CloseResponseSchema,
  CommentRequestSchema,
  CommentResponseSchema,
  ErrorBodySchema,
  IssueParamsSchema,
  LabelsRequestSchema,
  LabelsResponseSchema,
  SubIssueRequestSchema,
  SubIssueResponseSchema,
} from "../../../shared/fleet/schemas.ts";
import type { FencedOp } from "../../objects/repo/fenced-write.ts";
import { jsonBody, jsonContent, repoObject, send, v1Router } from "./context.ts";

const errors = {
  400: jsonContent(ErrorBodySchema, "The body fails its schema, or names a label switchyard owns"),
  401: jsonContent(ErrorBodySchema, "No token, or a bad one"),
  403: jsonContent(ErrorBodySchema, "No access to this repository"),
  404: jsonContent(ErrorBodySchema, "The repository is not installed"),
  409: jsonContent(
    ErrorBodySchema,
    "stale-fence (nothing written; between the calls of a labels or sub-issue write, the message says what was written), or a held issue (close)",
  ),
  429: jsonContent(
    ErrorBodySchema,
    "The installation's write budget is spent, or GitHub rate-limited the write (see Retry-After)",
  ),
  502: jsonContent(ErrorBodySchema, "GitHub refused the write, or did not answer it"),
  504: jsonContent(
    ErrorBodySchema,
    "deadline: the write's deadline (its claim's expiry plus the settle margin) came first",
  ),
};

const fenced = <S extends ZodType, R extends ZodType>(
  path: string,
  operationId: string,
  summary: string,
  request: S,
  ok: 200 | 201,
  response: R,
) =>
  createRoute({
    method: "post",
    path: `/v1/repos/{owner}/{repo}/issues/{n}/${path}`,
    operationId,
    tags: ["Fenced writes"],
    summary,
    security: [{ bearer: [] }],
    request: { params: IssueParamsSchema, body: jsonBody(request) },
    responses: { [ok]: jsonContent(response, "Written on GitHub"), ...errors },
  });

const comment = fenced(
  "comments",
  "postComment",
  "Comment on the issue with the App's token",
  CommentRequestSchema,
  201,
  CommentResponseSchema,
);
const labels = fenced(
  "labels",
  "changeLabels",
  "Add or remove labels (not the ones switchyard owns)",
  LabelsRequestSchema,
  200,
  LabelsResponseSchema,
);
const close = fenced(
  "close",
  "closeIssue",
  "Close the issue (not a held one)",
  CloseRequestSchema,
  200,
  CloseResponseSchema,
);
const subIssue = fenced(
  "sub-issues",
  "createSubIssue",
  "Open an issue and link it as a sub-issue (idempotent with idempotencyKey)",
  SubIssueRequestSchema,
  201,
  SubIssueResponseSchema,
);

/** Fenced writes (spec 6.4): done on GitHub only while `{claimId, fence}` is the live claim. */
export const writeRoutes = v1Router()
  .openapi(comment, async (c) => {
    const { n } = c.req.valid("param");
    const { claimId, fence, body } = c.req.valid("json");
    return write(c, n, { claimId, fence }, { kind: "comment", body });
  })
  .openapi(labels, async (c) => {
    const { n } = c.req.valid("param");
    const { claimId, fence, add, remove } = c.req.valid("json");
    return write(
      c,
      n,
      { claimId, fence },
      { kind: "labels", add: add ?? [], remove: remove ?? [] },
    );
  })
  .openapi(close, async (c) => {
    const { n } = c.req.valid("param");
    const { claimId, fence, reason } = c.req.valid("json");
    return write(c, n, { claimId, fence }, { kind: "close", reason });
  })
  .openapi(subIssue, async (c) => {
    const { n } = c.req.valid("param");
    const { claimId, fence, title, body, idempotencyKey } = c.req.valid("json");
    return write(
      c,
      n,
      { claimId, fence },
      {
        kind: "sub-issue",
        title,
        ...(body !== undefined ? { body } : {}),
        ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      },
    );
  });

async function write(
  c: { env: import("../../env.ts").Env; var: { repo: { repoId: number } } },
  n: number,
  fence: { claimId: string; fence: number },
  op: FencedOp,
) {
  return send(await repoObject(c.env, c.var.repo.repoId).write(n, fence, op));
}
