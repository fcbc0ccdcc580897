// The fault plan: per-test rules that make matching API requests fail, stall or lose their
// response, and make webhook deliveries go missing, repeat or arrive out of order.
import { z } from "zod";

export const RequestFaultSchema = z.strictObject({
  /** HTTP method to match; any when absent. */
  method: z.string().toUpperCase().optional(),
  /** Path glob: `*` matches within one segment, `**` across segments. Any when absent. */
  path: z.string().optional(),
  /** For `POST /graphql`: match the query's operation name. */
  operation: z.string().optional(),
  /** How many matching requests the rule affects (default 1). */
  times: z.number().int().positive().default(1),
  /** Let this many matching requests through before the rule applies (default 0): "the 4th page". */
  skip: z.number().int().min(0).default(0),
  /** Respond with this status (and `body`/`headers`) instead of the real response. */
  status: z.number().int().min(200).max(599).optional(),
  body: z.unknown().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  /** Shorthand for a `retry-after` header, in seconds. */
  retryAfter: z.number().int().min(0).optional(),
  /** Wait this long before answering (a client timeout shorter than this sees a timeout). */
  delayMs: z.number().int().min(0).max(600_000).optional(),
  /** Drop the connection instead of answering (a network error for the client). */
  network: z.boolean().optional(),
  /**
   * `before`: the fault replaces the request, nothing changes. `after`: the request is
   * applied, then its response is lost or replaced (the lost-response case).
   */
  phase: z.enum(["before", "after"]).default("before"),
});

export const WebhookFaultSchema = z.strictObject({
  event: z.string().optional(),
  action: z.string().optional(),
  kind: z.enum(["drop", "duplicate", "reorder"]),
  times: z.number().int().positive().default(1),
});

export const FaultPlanSchema = z.strictObject({
  requests: z.array(RequestFaultSchema).default([]),
  webhooks: z.array(WebhookFaultSchema).default([]),
});

export type RequestFault = z.infer<typeof RequestFaultSchema>;
export type WebhookFault = z.infer<typeof WebhookFaultSchema>;
export type FaultPlanInput = z.input<typeof FaultPlanSchema>;

function globToRegExp(glob: string): RegExp {
  const escaped = glob
    .split("**")
    .map((part) =>
      part
        .split("*")
        .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join("[^/]*"),
    )
    .join(".*");
  return new RegExp(`^${escaped}$`);
}

export class FaultPlan {
  private requests: (RequestFault & { left: number; skipLeft: number; re: RegExp | null })[] = [];
  private webhooks: (WebhookFault & { left: number })[] = [];

  set(plan: FaultPlanInput): void {
    const parsed = FaultPlanSchema.parse(plan);
    this.requests = parsed.requests.map((r) => ({
      ...r,
      left: r.times,
      skipLeft: r.skip,
      re: r.path ? globToRegExp(r.path) : null,
    }));
    this.webhooks = parsed.webhooks.map((w) => ({ ...w, left: w.times }));
  }

  add(plan: FaultPlanInput): void {
    const parsed = FaultPlanSchema.parse(plan);
    this.requests.push(
      ...parsed.requests.map((r) => ({
        ...r,
        left: r.times,
        skipLeft: r.skip,
        re: r.path ? globToRegExp(r.path) : null,
      })),
    );
    this.webhooks.push(...parsed.webhooks.map((w) => ({ ...w, left: w.times })));
  }

  clear(): void {
    this.requests = [];
    this.webhooks = [];
  }

  /** The first live rule matching this request, consumed once. */
  /** `path` may list aliases of one request (a `/repositories/{id}/...` path and its name twin). */
  takeRequestFault(
    method: string,
    path: string | string[],
    operation: string | null,
  ): RequestFault | null {
    const paths = Array.isArray(path) ? path : [path];
    for (const rule of this.requests) {
      if (rule.left <= 0) continue;
      if (rule.method && rule.method !== method) continue;
      if (rule.re && !paths.some((p) => rule.re!.test(p))) continue;
      if (rule.operation && rule.operation !== operation) continue;
      if (rule.skipLeft > 0) {
        rule.skipLeft -= 1;
        continue;
      }
      rule.left -= 1;
      return rule;
    }
    return null;
  }

  takeWebhookFault(event: string, action: string): WebhookFault | null {
    for (const rule of this.webhooks) {
      if (rule.left <= 0) continue;
      if (rule.event && rule.event !== event) continue;
      if (rule.action && rule.action !== action) continue;
      rule.left -= 1;
      return rule;
    }
    return null;
  }

  pending(): { requests: number; webhooks: number } {
    return {
      requests: this.requests.reduce((n, r) => n + r.left, 0),
      webhooks: this.webhooks.reduce((n, w) => n + w.left, 0),
    };
  }
}
