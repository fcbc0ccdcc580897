import { Hono } from "hono";
import { describeInvalidWebhook, parseWebhook } from "../../shared/github/webhooks.ts";
import { formatInstant } from "../../shared/graph/time.ts";
import { routeWebhook } from "../../shared/ingest/from-webhook.ts";
import { verifySignature } from "../../shared/webhooks/signature.ts";
import { type Env, numberSetting } from "../env.ts";
import { readBodyWithin } from "../http/read-body.ts";

const DEFAULT_LIMIT = 1024 * 1024;
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * `POST /webhooks/github` (spec 6.1): verify the signature over the raw bytes before reading
 * anything, validate, and hand the event to its Durable Object. Never calls GitHub, so the
 * acknowledgement stays far inside GitHub's 10-second limit.
 */
export const webhookRoutes = new Hono<{ Bindings: Env }>().post("/webhooks/github", async (c) => {
  const secret = c.env.GITHUB_WEBHOOK_SECRET;
  if (!secret) {
    return c.json({ error: "webhook ingress needs the GITHUB_WEBHOOK_SECRET setting" }, 503);
  }
  const limit = numberSetting(c.env.WEBHOOK_MAX_BYTES) ?? DEFAULT_LIMIT;
  const body = await readBodyWithin(c.req.raw, limit);
  if (body === null) return c.json({ error: `body over the ${limit}-byte limit` }, 413);
  if (!(await verifySignature(secret, body, c.req.header("x-hub-signature-256")))) {
    return c.json({ error: "missing or invalid X-Hub-Signature-256" }, 401);
  }

  const event = c.req.header("x-github-event");
  const deliveryId = c.req.header("x-github-delivery");
  if (!event) return c.json({ error: "missing X-GitHub-Event header" }, 400);
  if (!deliveryId) return c.json({ error: `${event}: missing X-GitHub-Delivery header` }, 400);
  let json: unknown;
  try {
    json = JSON.parse(utf8.decode(body));
  } catch {
    return c.json({ error: `${event}: body is not UTF-8 JSON` }, 400);
  }
  const parsed = parseWebhook(event, json);
  if (parsed.kind === "ignored") return c.json({ status: "ignored", reason: parsed.reason }, 202);
  if (parsed.kind === "invalid") return c.json({ error: describeInvalidWebhook(parsed) }, 400);

  const receivedMs = Date.now();
  const routed = routeWebhook(parsed, formatInstant(Math.floor(receivedMs / 1000) * 1000));
  if (routed.kind === "skip") return c.json({ status: "ignored", reason: routed.reason }, 202);
  const installation = (id: number) =>
    c.env.INSTALLATION.get(c.env.INSTALLATION.idFromName(String(id)));
  if (routed.kind === "installation") {
    const stub = installation(routed.installationId);
    const outcome = await stub.lifecycle(
      routed.installationId,
      deliveryId,
      routed.change,
      receivedMs,
    );
    return c.json({ status: outcome }, 200);
  }
  if (routed.kind === "project-item") {
    const stub = installation(routed.installationId);
    const outcome = await stub.projectItem(
      routed.installationId,
      deliveryId,
      routed.notice,
      receivedMs,
    );
    return c.json({ status: outcome }, outcome === "ignored" ? 202 : 200);
  }
  const stub = c.env.REPO.get(c.env.REPO.idFromName(String(routed.repo.id)));
  if (routed.kind === "ci") {
    const outcome = await stub.ciEvent(
      { id: deliveryId, event, receivedMs },
      routed.repo,
      routed.fact,
    );
    return c.json({ status: outcome }, outcome === "ignored" ? 202 : 200);
  }
  const outcome = await stub.ingest(
    { id: deliveryId, event, receivedMs },
    routed.repo,
    routed.events,
    {
      ...(routed.repositoryAction ? { repositoryAction: routed.repositoryAction } : {}),
      ...(routed.confirmIssueRemoved ? { confirmIssueRemoved: routed.confirmIssueRemoved } : {}),
    },
  );
  return c.json({ status: outcome }, outcome === "ignored" ? 202 : 200);
});
