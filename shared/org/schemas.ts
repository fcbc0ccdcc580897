// Request and response bodies of the org routes (`/v1/orgs/{owner}/...`, spec 6.4): the routes
// validate with them, docs/api.md and the OpenAPI document describe them.
import { z } from "zod";
import {
  AgentIdSchema,
  CapabilitiesSchema,
  ClaimGrantSchema,
  LiveClaimSchema,
  MachineSchema,
  QueueLimitSchema,
  ReplySchema,
  TtlSecondsSchema,
} from "../fleet/schemas.ts";
import { ITEM_KINDS } from "./head.ts";
import { ORG_ORDERS } from "./pick.ts";

export const OwnerParamsSchema = z.object({
  owner: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/, "must be a GitHub owner name"),
});

const RepoNameSchema = z
  .string()
  .regex(/^([A-Za-z0-9][A-Za-z0-9-]{0,38}\/)?[A-Za-z0-9._-]{1,100}$/, "must be a repository name");

export const OrgOrderSchema = z.enum(ORG_ORDERS, {
  error: "must be fair, impact, number or priority",
});
export const ItemKindSchema = z.enum(ITEM_KINDS, {
  error: "must be reply, kick, rollup or ready",
});

const commaList = (item: RegExp, what: string) =>
  z
    .string()
    .regex(new RegExp(`^${item.source}(,${item.source})*$`), `must be comma-separated ${what}`);

/** `GET /v1/orgs/{owner}/queue?capabilities=&kinds=&limit=&order=&repos=&machine=` */
export const OrgQueueQuerySchema = z.object({
  machine: MachineSchema.optional(),
  capabilities: commaList(/[A-Za-z0-9][A-Za-z0-9._-]{0,63}/, "capabilities")
    .optional()
    .describe("Comma-separated capabilities the caller has (absent: none)."),
  kinds: commaList(/(reply|kick|rollup|ready)/, "kinds: reply, kick, rollup, ready")
    .optional()
    .describe("Comma-separated kinds to list (absent: all)."),
  limit: QueueLimitSchema,
  order: OrgOrderSchema.optional().describe("`fair` (default), `impact`, `number` or `priority`."),
  repos: commaList(/[A-Za-z0-9._-]{1,100}/, "repository names")
    .optional()
    .describe("Comma-separated repository names of the owner to keep to (absent: all)."),
});

/** `POST /v1/orgs/{owner}/claims` */
export const OrgClaimRequestSchema = z
  .strictObject({
    agentId: AgentIdSchema,
    machine: MachineSchema.optional(),
    capabilities: CapabilitiesSchema.optional(),
    kinds: z.array(ItemKindSchema).min(1, "at least one kind").max(4).optional(),
    order: OrgOrderSchema.optional(),
    ttlSeconds: TtlSecondsSchema.optional(),
    repos: z.array(RepoNameSchema).min(1).max(100).optional(),
  })
  .meta({ id: "OrgClaimRequest" });
export type OrgClaimRequestBody = z.infer<typeof OrgClaimRequestSchema>;

export const OrgQueueItemSchema = z.object({
  repo: z.string(),
  number: z.number().int(),
  title: z.string(),
  url: z.string(),
  reason: z.string(),
  kind: ItemKindSchema,
  reply: ReplySchema.optional().describe(
    "The unanswered trusted input it carries (a reply item's, or a work item's); `kinds=reply` matches it",
  ),
  requires: z.array(z.string()),
  impact: z.number().int(),
  priority: z.number().nullable(),
  attempts: z.number().int(),
});

export const OrgQueueResponseSchema = z
  .object({
    owner: z.string().nullable(),
    order: OrgOrderSchema,
    total: z.number().int(),
    items: z.array(OrgQueueItemSchema),
    more: z
      .array(z.string())
      .describe("Repositories holding more available work than they pushed to the owner."),
  })
  .meta({ id: "OrgQueue" });

export const OrgClaimGrantSchema = ClaimGrantSchema.extend({
  repo: z.string().describe("`owner/name`: heartbeat, release and write on its routes."),
}).meta({ id: "OrgClaimGrant" });

export const OrgClaimsResponseSchema = z
  .object({ claims: z.array(LiveClaimSchema.extend({ repo: z.string() })) })
  .meta({ id: "OrgClaims" });
