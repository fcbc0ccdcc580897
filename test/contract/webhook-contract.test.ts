// Every webhook the simulator emits, checked against GitHub's published x-webhooks schema, and
// accepted by switchyard's own ingress schemas (shared/github/webhooks.ts).
import { describe, expect, it } from "vitest";
import { CONTRACT_WEBHOOKS } from "../../infra/github-sim/contract/operations.ts";
import { parseWebhook } from "../../shared/github/webhooks.ts";
import { emitEveryWebhook } from "./emit-every-webhook.ts";
import { checkWebhook, webhookKey } from "./openapi.ts";

/**
 * What the simulator emits that switchyard leaves alone on purpose: a new label changes no
 * issue; `check_suite.requested` goes to the suite's own App (switchyard runs no checks) and
 * carries no verdict.
 */
const DELIBERATELY_IGNORED = new Set(["label.created", "check_suite.requested"]);

describe("webhook payloads match GitHub's OpenAPI description", () => {
  it("for every event and action the simulator emits", async () => {
    const deliveries = await emitEveryWebhook();
    const seen = new Set<string>();
    const problems: string[] = [];
    for (const d of deliveries) {
      const key = webhookKey(d.event, d.action);
      seen.add(key);
      const payload = JSON.parse(d.body);
      const problem = checkWebhook(d.event, d.action, payload);
      if (problem) problems.push(problem);
      const parsed = parseWebhook(d.event, payload);
      if (parsed.kind === "invalid")
        problems.push(`switchyard rejects ${key}: ${parsed.path}: ${parsed.message}`);
      if (!DELIBERATELY_IGNORED.has(`${d.event}.${d.action}`) && parsed.kind !== "handled") {
        problems.push(`switchyard ignores ${key}`);
      }
    }
    expect(problems).toEqual([]);
    expect(CONTRACT_WEBHOOKS.filter((k) => !seen.has(k))).toEqual([]);
  }, 30_000); // compiling GitHub's schemas for every event takes seconds on a loaded machine
});
