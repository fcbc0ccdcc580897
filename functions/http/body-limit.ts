import { bodyLimit } from "hono/body-limit";
import { FLEET_BODY_MAX_BYTES } from "../../shared/fleet/limits.ts";

/**
 * The fleet API's body limit (shared/fleet/limits.ts) as middleware: a declared length over it
 * is refused at once, a streamed body as soon as it passes it (hono's `bodyLimit` counts and
 * stops reading), so a request costs at most the limit in memory on any host.
 */
export const fleetBodyLimit = bodyLimit({
  maxSize: FLEET_BODY_MAX_BYTES,
  onError: (c) =>
    c.json(
      { error: "too-large", message: `the request body is over ${FLEET_BODY_MAX_BYTES} bytes` },
      413,
    ),
});
