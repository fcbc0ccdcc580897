// Fleet keys (spec 6.4): minted by a repository admin, shown once, stored only as a hash (by
// the repository's RepoObject), revocable, expiring (default 90 days, at most 365), valid for
// their repository only. Creating and revoking are audited with who and which token kind.
import { createRoute, z } from "@hono/zod-openapi";
import { keyExpiresMs, mintKey } from "../../../shared/auth/keys.ts";
import {
  ApiErrorSchema,
  CreatedKeySchema,
  CreateKeyRequestSchema,
  KeyIdSchema,
  KeyListSchema,
} from "../../../shared/auth/schemas.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import { keyAdmin, refuse } from "./auth.ts";
import { jsonContent, repoObject, v1Router } from "./context.ts";

const RepoParams = z.object({
  owner: z.string().min(1).meta({ example: "acme" }),
  repo: z.string().min(1).meta({ example: "rocket" }),
});

const errors = {
  401: jsonContent(
    ApiErrorSchema,
    "No token, a malformed header, or a bad, expired or revoked token",
  ),
  403: jsonContent(ApiErrorSchema, "The caller may not do this on this repository"),
  404: jsonContent(ApiErrorSchema, "The repository is not installed (answered only after auth)"),
  429: jsonContent(ApiErrorSchema, "GitHub rate-limits the caller's permission check"),
  503: jsonContent(ApiErrorSchema, "GitHub did not answer the caller's permission check"),
};

const createKey = createRoute({
  method: "post",
  path: "/v1/repos/{owner}/{repo}/keys",
  operationId: "createKey",
  tags: ["Keys"],
  summary: "Mint a fleet key (repository admins, with a GitHub user token)",
  security: [{ bearer: [] }],
  request: {
    params: RepoParams,
    body: { content: { "application/json": { schema: CreateKeyRequestSchema } }, required: true },
  },
  responses: {
    201: jsonContent(CreatedKeySchema, "The new key; `key` is shown this once"),
    400: jsonContent(ApiErrorSchema, "The body fails its schema"),
    ...errors,
  },
});

const listKeys = createRoute({
  method: "get",
  path: "/v1/repos/{owner}/{repo}/keys",
  operationId: "listKeys",
  tags: ["Keys"],
  summary: "List the repository's fleet keys (never their secrets)",
  security: [{ bearer: [] }],
  request: { params: RepoParams },
  responses: {
    200: jsonContent(KeyListSchema, "Every key, revoked and expired ones included"),
    ...errors,
  },
});

const revokeKey = createRoute({
  method: "delete",
  path: "/v1/repos/{owner}/{repo}/keys/{id}",
  operationId: "revokeKey",
  tags: ["Keys"],
  summary: "Revoke a fleet key (repository admins, with a GitHub user token)",
  security: [{ bearer: [] }],
  request: { params: RepoParams.extend({ id: KeyIdSchema }) },
  responses: {
    204: { description: "Revoked (revoking again changes nothing)" },
    ...errors,
    404: jsonContent(ApiErrorSchema, "No key with this id, or the repository is not installed"),
  },
});

export const keyRoutes = v1Router()
  .openapi(createKey, async (c) => {
    // Admin proven within the last minute: a key outlives a remembered answer by months.
    const admin = await keyAdmin(c, true);
    if (!admin.ok) return refuse(c, admin);
    const { caller } = admin;
    const body = c.req.valid("json");
    const { repoId } = c.var.repo;
    const { key, hash } = await mintKey(repoId);
    const createdMs = Date.now();
    const expiresMs = keyExpiresMs(createdMs, body.expiresInDays);
    const created = await repoObject(c.env, repoId).createKey({
      id: crypto.randomUUID(),
      name: body.name,
      hash,
      createdBy: caller.login,
      tokenKind: caller.tokenKind,
      createdMs,
      expiresMs,
    });
    return c.json(
      {
        id: created.id,
        name: created.name,
        key,
        createdAt: created.createdAt,
        expiresAt: formatInstant(expiresMs),
      },
      201,
    );
  })
  .openapi(listKeys, async (c) => {
    return c.json({ keys: await repoObject(c.env, c.var.repo.repoId).listKeys() }, 200);
  })
  .openapi(revokeKey, async (c) => {
    const admin = await keyAdmin(c, false);
    if (!admin.ok) return refuse(c, admin);
    const { id } = c.req.valid("param");
    const revoked = await repoObject(c.env, c.var.repo.repoId).revokeKey(id, Date.now(), {
      by: admin.caller.login,
      tokenKind: admin.caller.tokenKind,
    });
    if (!revoked) return c.json({ error: "not-found", message: "no key with this id" }, 404);
    return c.body(null, 204);
  });
