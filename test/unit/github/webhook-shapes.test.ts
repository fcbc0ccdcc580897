// GitHub signs a webhook's body but not its `X-GitHub-Event` header: a real payload of one event
// must never be accepted under another event's name (spec 6.1), and every real payload of a
// handled event must still be accepted under its own.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { parseWebhook, WEBHOOK_SCHEMAS } from "../../../shared/github/webhooks.ts";

const require = createRequire(import.meta.url);
const examples = require("@octokit/webhooks-examples/api.github.com/index.json") as Array<{
  name: string;
  examples: Array<Record<string, unknown>>;
}>;

const handled = Object.keys(WEBHOOK_SCHEMAS);
const all = examples.flatMap((e) =>
  e.examples.map((body, i) => ({ event: e.name, action: body.action ?? null, i, body })),
);

describe("webhook shapes", () => {
  it("accepts every real example of a handled event and action under its own name", () => {
    const own = all.filter((x) => handled.includes(x.event));
    expect(own.length).toBeGreaterThan(20);
    for (const x of own) {
      const parsed = parseWebhook(x.event, x.body);
      expect(parsed.kind, `${x.event}.${x.action} #${x.i}: ${JSON.stringify(parsed)}`).not.toBe(
        "invalid",
      );
    }
  });

  it("never handles a real example under another event's name", () => {
    let tried = 0;
    for (const x of all) {
      for (const event of handled) {
        if (event === x.event) continue;
        tried += 1;
        const parsed = parseWebhook(event, x.body);
        expect(parsed.kind, `${x.event}.${x.action} #${x.i} sent as ${event}`).not.toBe("handled");
      }
    }
    expect(tried).toBeGreaterThan(1000);
  });
});
