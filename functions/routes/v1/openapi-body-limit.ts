import { FLEET_BODY_MAX_BYTES } from "../../../shared/fleet/limits.ts";

type Response = { description: string; content?: Record<string, unknown> };
type Operation = { requestBody?: unknown; responses?: Record<string, Response> };
type Document = { paths?: Record<string, Record<string, Operation>> };

/**
 * The body limit is middleware (functions/http/body-limit.ts) in front of every route, so no
 * route declares its 413 itself; this adds it to each operation that takes a body, with the
 * same error body as the operation's 400, so generated clients know the answer exists.
 */
export function declareBodyLimit<D extends object>(doc: D): D {
  for (const ops of Object.values((doc as Document).paths ?? {})) {
    for (const op of Object.values(ops)) {
      if (!op.requestBody || !op.responses || op.responses["413"]) continue;
      op.responses["413"] = {
        description: `too-large: the request body is over ${FLEET_BODY_MAX_BYTES} bytes (refused before the caller is proven)`,
        ...(op.responses["400"]?.content ? { content: op.responses["400"].content } : {}),
      };
    }
  }
  return doc;
}
