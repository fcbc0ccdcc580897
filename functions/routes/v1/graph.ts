import { createRoute, z } from "@hono/zod-openapi";
import { ApiErrorSchema } from "../../../shared/auth/schemas.ts";
import { ReplySchema } from "../../../shared/fleet/schemas.ts";
import {
  decodeCursor,
  GRAPH_LISTS,
  MAX_PAGE_LIMIT,
  type PageCursor,
} from "../../../shared/graph/pages.ts";
import { jsonContent, repoObject, v1Router } from "./context.ts";

/** The graph route's query; the auth middleware checks it too, before any Durable Object. */
export const GraphQuerySchema = z
  .object({
    // Rotates `ready` the way `switchyard scan --machine` does (spec 3.2).
    machine: z
      .string()
      .min(1, "machine must be 1 to 200 characters")
      .max(200, "machine must be 1 to 200 characters")
      .optional(),
    list: z
      .enum(GRAPH_LISTS, { message: `must be one of ${GRAPH_LISTS.join(", ")}` })
      .optional()
      .describe("One long list to page through; without it, the first page of each."),
    limit: z.coerce
      .number()
      .int("must be an integer")
      .min(1, "must be at least 1")
      .max(MAX_PAGE_LIMIT, `must be at most ${MAX_PAGE_LIMIT}`)
      .optional()
      .describe("Items per page of each long list (default 100)."),
    cursor: z
      .string()
      .refine(
        (text) => decodeCursor(text) !== null,
        "not a cursor of this API (pass `next` as given)",
      )
      .optional()
      .describe("The `next` of the previous page of `list`."),
  })
  .superRefine((query, ctx) => {
    if (query.cursor === undefined) return;
    const cursor = decodeCursor(query.cursor);
    if (cursor === null) return;
    if (query.list === undefined) {
      ctx.addIssue({ code: "custom", path: ["list"], message: "a cursor needs its list" });
    } else if (cursor.l !== query.list) {
      ctx.addIssue({
        code: "custom",
        path: ["cursor"],
        message: `a cursor of list ${cursor.l}, not ${query.list}`,
      });
    }
  });

const PageInfoSchema = z.object({
  total: z.number().int(),
  next: z.string().nullable().describe("The cursor of the next page, null on the last"),
});

/** Where the repository's first full reconcile stands (issue 25; shared/budget/reconcile-permits.ts). */
const FirstReconcileSchema = z
  .discriminatedUnion("state", [
    z.object({ state: z.literal("done"), at: z.string() }),
    z.object({ state: z.literal("running") }),
    z.object({ state: z.literal("waiting"), position: z.number().int().min(1).nullable() }),
  ])
  .meta({
    description:
      "The first full reconcile: `done` (when), `running`, or `waiting` for the installation's permit (`position` 1 is the next granted; null: not asked yet). Until it is done the graph holds only what webhooks brought.",
  });

const InstallProgressSchema = z
  .object({
    reconciled: z.number().int(),
    waiting: z.number().int(),
    inFlight: z.number().int(),
    usedThisHour: z.number().int(),
    budgetPerHour: z.number().int(),
    etaMs: z.number().int(),
  })
  .meta({
    description:
      "The installation's pacing of full reconciles: repositories with a full reconcile behind them, waiting and in flight; the requests reconciles spent this hour and the budget they may spend an hour (GitHub's limit less the reserve for webhooks); the estimated time until the rest are done",
  });

/** An entry of the `replies` list (shared/queue/reply-list.ts). */
const ReplyEntrySchema = ReplySchema.extend({
  number: z.number().int(),
  claim: z
    .object({
      agentId: z.string(),
      kind: z.enum(["work", "reply", "idd"]),
      until: z.string(),
    })
    .nullable()
    .describe(
      "Who holds the issue now: a switchyard claim (`work` or `reply`, until it expires) or a live IDD marker (`idd`, until it goes stale); null: nobody",
    ),
}).meta({
  description:
    "An issue whose trusted human input waits for an agent's answer (`GET .../queue?kinds=reply` serves the same inputs as work)",
});

const graph = createRoute({
  method: "get",
  path: "/v1/repos/{owner}/{repo}/graph",
  operationId: "getGraph",
  tags: ["Graph"],
  summary:
    "The scan of the stored graph (long lists paged) plus watermarks, delivery counters and the config",
  security: [{ bearer: [] }],
  request: {
    params: z.object({ owner: z.string().min(1), repo: z.string().min(1) }),
    query: GraphQuerySchema,
  },
  responses: {
    200: jsonContent(
      z.union([
        z
          .looseObject({
            stats: z.object({ issues: z.number(), open: z.number(), edges: z.number() }),
            pages: z.object({
              kicks: PageInfoSchema,
              blocked: PageInfoSchema,
              ready: PageInfoSchema,
              rollupCandidates: PageInfoSchema,
              replies: PageInfoSchema,
            }),
            replies: z.array(ReplyEntrySchema),
            firstReconcile: FirstReconcileSchema,
            installation: InstallProgressSchema.nullable(),
          })
          .meta({
            description:
              "Without `list`: the output of `switchyard scan` (docs/graph.md; `kicks` are those of the closes learned since the producer watermark) with `blocked`, `ready`, `kicks` and `rollupCandidates` cut to their first page, plus `replies` (the issues whose trusted human input waits for an agent's answer, first page; `pages` has each list's total and next cursor), `watermarks`, `deliveries`, `config`, `parkedWrites` (the 100 most recent) and `parkedWritesCount`",
          }),
        z
          .object({
            list: z.enum(GRAPH_LISTS),
            now: z.string(),
            items: z.array(z.unknown()),
            next: z.string().nullable(),
            total: z.number().int(),
            stats: z.object({ issues: z.number(), open: z.number(), edges: z.number() }),
          })
          .meta({ description: "With `list`: one page of that list" }),
      ]),
      "The graph",
    ),
    400: jsonContent(ApiErrorSchema, "A query parameter fails its schema (the message names it)"),
    401: jsonContent(
      ApiErrorSchema,
      "No token, a malformed header, or a bad, expired or revoked token",
    ),
    403: jsonContent(ApiErrorSchema, "The token has no access to this repository"),
    404: jsonContent(ApiErrorSchema, "The repository is not installed (answered only after auth)"),
  },
});

/**
 * `GET /v1/repos/{owner}/{repo}/graph[?machine=&limit=]`: the scan of the stored graph plus its
 * watermarks, long lists cut to their first page;
 * `?list=blocked|ready|kicks|rollupCandidates|replies&limit=&cursor=`:
 * one page of one list. Both are served from the scan kept since the last graph change.
 */
export const graphRoutes = v1Router().openapi(graph, async (c) => {
  const { machine, list, limit, cursor } = c.req.valid("query");
  const object = repoObject(c.env, c.var.repo.repoId);
  if (list !== undefined) {
    const decoded: PageCursor | undefined =
      cursor === undefined ? undefined : (decodeCursor(cursor) ?? undefined);
    const request = {
      list,
      ...(limit !== undefined ? { limit } : {}),
      ...(decoded ? { cursor: decoded } : {}),
    };
    return c.json(await object.graphPage(request, Date.now(), machine), 200);
  }
  return c.json(await object.graph(Date.now(), machine, limit), 200);
});
