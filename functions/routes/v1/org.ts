// The org routes (spec 6.4): one queue for an installation owner's repositories. The owner's
// object (functions/objects/owner/) picks; each repository's own object grants. Heartbeats,
// releases and writes stay on the repository routes the grant's `repo` names.
import { createRoute } from "@hono/zod-openapi";
import { keyExpiresMs } from "../../../shared/auth/keys.ts";
import {
  ApiErrorSchema,
  CreatedKeySchema,
  KeyIdSchema,
  KeyListSchema,
} from "../../../shared/auth/schemas.ts";
import { parseCapabilityList } from "../../../shared/fleet/schemas.ts";
import type { ItemKind } from "../../../shared/org/head.ts";
import { CreateOwnerKeyRequestSchema, mintOwnerKey } from "../../../shared/org/owner-keys.ts";
import {
  OrgClaimGrantSchema,
  OrgClaimRequestSchema,
  OrgClaimsResponseSchema,
  OrgQueueQuerySchema,
  OrgQueueResponseSchema,
  OwnerParamsSchema,
} from "../../../shared/org/schemas.ts";
import { ownerKeysObject, ownerObject } from "../../objects/owner/owner-object.ts";
import { jsonBody, jsonContent, send, v1Router } from "./context.ts";
import { mayManageKeys, type OrgV1, orgScope } from "./org-auth.ts";

const errors = {
  400: jsonContent(ApiErrorSchema, "A parameter or the body fails its schema"),
  401: jsonContent(ApiErrorSchema, "No token, or a bad, expired or revoked one"),
  403: jsonContent(
    ApiErrorSchema,
    "The credential may not do this: repository-scoped (a repository's key, an OIDC token), a classic token on the queue, not an active organization owner, or the App lacks `members: read`",
  ),
  404: jsonContent(ApiErrorSchema, "switchyard's App is not installed on this owner"),
};

const tags = ["Organizations"];
const security = [{ bearer: [] }];

const queue = createRoute({
  method: "get",
  path: "/v1/orgs/{owner}/queue",
  operationId: "getOrgQueue",
  tags,
  summary: "Claimable work across the owner's repositories the caller may use, each with `repo`",
  security,
  request: { params: OwnerParamsSchema, query: OrgQueueQuerySchema },
  responses: { 200: jsonContent(OrgQueueResponseSchema, "The org queue"), ...errors },
});

const claimNext = createRoute({
  method: "post",
  path: "/v1/orgs/{owner}/claims",
  operationId: "claimNextInOrg",
  tags,
  summary: "Claim the first available item across the owner's repositories, atomically",
  security,
  request: { params: OwnerParamsSchema, body: jsonBody(OrgClaimRequestSchema) },
  responses: {
    201: jsonContent(OrgClaimGrantSchema, "The grant, as the repository's, plus its `repo`"),
    204: { description: "No work available for this agent" },
    ...errors,
  },
});

const claims = createRoute({
  method: "get",
  path: "/v1/orgs/{owner}/claims",
  operationId: "listOrgClaims",
  tags,
  summary: "Live claims across the owner's repositories the caller may use",
  security,
  request: { params: OwnerParamsSchema },
  responses: {
    200: jsonContent(OrgClaimsResponseSchema, "Live claims, each with `repo`"),
    ...errors,
  },
});

const createKey = createRoute({
  method: "post",
  path: "/v1/orgs/{owner}/keys",
  operationId: "createOwnerKey",
  tags,
  summary: "Mint an owner key (active organization owners, with a GitHub user token)",
  security,
  request: { params: OwnerParamsSchema, body: jsonBody(CreateOwnerKeyRequestSchema) },
  responses: {
    201: jsonContent(
      CreatedKeySchema,
      "The new key (`syk_o<installationId>_...`), shown this once",
    ),
    ...errors,
  },
});

const listKeys = createRoute({
  method: "get",
  path: "/v1/orgs/{owner}/keys",
  operationId: "listOwnerKeys",
  tags,
  summary: "List the owner keys (never their secrets)",
  security,
  request: { params: OwnerParamsSchema },
  responses: {
    200: jsonContent(KeyListSchema, "Every owner key, revoked and expired ones included"),
    ...errors,
  },
});

const revokeKey = createRoute({
  method: "delete",
  path: "/v1/orgs/{owner}/keys/{id}",
  operationId: "revokeOwnerKey",
  tags,
  summary: "Revoke an owner key (active organization owners, with a GitHub user token)",
  security,
  request: { params: OwnerParamsSchema.extend({ id: KeyIdSchema }) },
  responses: {
    204: { description: "Revoked (revoking again changes nothing)" },
    ...errors,
    404: jsonContent(ApiErrorSchema, "No owner key with this id, or the App is not installed"),
  },
});

const refusal = (failure: {
  status: 401 | 403 | 404 | 429 | 503;
  error: string;
  message: string;
}) => send({ status: failure.status, body: { error: failure.error, message: failure.message } });

const list = (value: string | undefined) => (value === undefined ? undefined : value.split(","));

/** The org routes; `orgAuth` (org-auth.ts) runs before each and sets `c.var.org`. */
export const orgRoutes = v1Router<OrgV1>()
  .openapi(queue, async (c) => {
    const scope = await orgScope(c);
    if ("ok" in scope) return refusal(scope);
    const q = c.req.valid("query");
    return send(
      await ownerObject(c.env, c.var.org.owner).workQueue(scope, {
        limit: q.limit,
        capabilities: parseCapabilityList(q.capabilities),
        ...(q.kinds !== undefined ? { kinds: list(q.kinds) as ItemKind[] } : {}),
        ...(q.order !== undefined ? { order: q.order } : {}),
        ...(q.repos !== undefined ? { repos: list(q.repos)! } : {}),
      }),
    );
  })
  .openapi(claimNext, async (c) => {
    const scope = await orgScope(c);
    if ("ok" in scope) return refusal(scope);
    return send(await ownerObject(c.env, c.var.org.owner).claimNext(scope, c.req.valid("json")));
  })
  .openapi(claims, async (c) => {
    const scope = await orgScope(c);
    if ("ok" in scope) return refusal(scope);
    return send(await ownerObject(c.env, c.var.org.owner).claims(scope));
  })
  .openapi(createKey, async (c) => {
    const refused = await mayManageKeys(c, "manage");
    if (refused) return refusal(refused);
    const { installationId, caller } = c.var.org;
    const body = c.req.valid("json");
    const { key, hash } = await mintOwnerKey(installationId);
    const createdMs = Date.now();
    const created = await ownerKeysObject(c.env, installationId).createKey({
      id: crypto.randomUUID(),
      name: body.name,
      hash,
      installationId,
      createdBy: caller.kind === "user" ? caller.login : "unknown",
      createdMs,
      expiresMs: keyExpiresMs(createdMs, body.expiresInDays),
    });
    return c.json(
      {
        id: created.id,
        name: created.name,
        key,
        createdAt: created.createdAt,
        expiresAt: created.expiresAt,
      },
      201,
    );
  })
  .openapi(listKeys, async (c) => {
    const refused = await mayManageKeys(c, "list");
    if (refused) return refusal(refused);
    const keys = ownerKeysObject(c.env, c.var.org.installationId);
    return c.json({ keys: await keys.listKeys() }, 200);
  })
  .openapi(revokeKey, async (c) => {
    const refused = await mayManageKeys(c, "manage");
    if (refused) return refusal(refused);
    const { id } = c.req.valid("param");
    const caller = c.var.org.caller;
    const revoked = await ownerKeysObject(c.env, c.var.org.installationId).revokeKey(
      id,
      caller.kind === "user" ? caller.login : "unknown",
    );
    if (!revoked)
      return send({
        status: 404,
        body: { error: "not-found", message: "no owner key with this id" },
      });
    return c.body(null, 204);
  });
