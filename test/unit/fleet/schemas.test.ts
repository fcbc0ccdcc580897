// The request schemas the Worker's routes and the client share: each field's bounds, from
// docs/api.md, at and just past each edge.
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  ClaimNextRequestSchema,
  ClaimRequestSchema,
  CloseRequestSchema,
  CommentRequestSchema,
  CreateKeyRequestSchema,
  LabelsRequestSchema,
  parseCapabilityList,
  parseKindList,
  QueueQuerySchema,
  ReleaseRequestSchema,
  SubIssueRequestSchema,
} from "../../../shared/fleet/schemas.ts";

const fenced = { claimId: "c-1", fence: 3 };

function accepts(schema: z.ZodType, value: unknown) {
  const result = schema.safeParse(value);
  expect(result.success, JSON.stringify(result.error?.issues)).toBe(true);
}

function rejects(schema: z.ZodType, value: unknown, field: string) {
  const result = schema.safeParse(value);
  expect(result.success).toBe(false);
  expect(result.error?.issues[0]?.path[0]).toBe(field);
}

describe("fleet request schemas", () => {
  it("claim: agentId is one marker token, ttlSeconds 60..86400, unknown keys rejected", () => {
    accepts(ClaimRequestSchema, { agentId: "A-z_0.9" });
    accepts(ClaimRequestSchema, { agentId: "a".repeat(64), ttlSeconds: 60, machine: "m" });
    accepts(ClaimRequestSchema, { agentId: "a", ttlSeconds: 86_400 });
    rejects(ClaimRequestSchema, { agentId: "" }, "agentId");
    rejects(ClaimRequestSchema, { agentId: "a".repeat(65) }, "agentId");
    rejects(ClaimRequestSchema, { agentId: "a/b" }, "agentId");
    rejects(ClaimRequestSchema, { agentId: "a-->" }, "agentId");
    rejects(ClaimRequestSchema, { agentId: "a", ttlSeconds: 59 }, "ttlSeconds");
    rejects(ClaimRequestSchema, { agentId: "a", ttlSeconds: 86_401 }, "ttlSeconds");
    rejects(ClaimRequestSchema, { agentId: "a", ttlSeconds: 60.5 }, "ttlSeconds");
    rejects(ClaimRequestSchema, { agentId: "a", machine: "" }, "machine");
    const typo = ClaimRequestSchema.safeParse({ agentId: "a", ttl: 60 });
    expect(typo.success).toBe(false);
  });

  it("claim-next: capabilities are tokens", () => {
    accepts(ClaimNextRequestSchema, { agentId: "a", capabilities: ["gpu", "rust-1.80"] });
    accepts(ClaimNextRequestSchema, { agentId: "a", capabilities: [] });
    rejects(ClaimNextRequestSchema, { agentId: "a", capabilities: ["-x"] }, "capabilities");
    rejects(ClaimNextRequestSchema, { agentId: "a", capabilities: ["a b"] }, "capabilities");
  });

  it("kinds: claim-next takes a list of queue kinds, a claim one claim kind, the queue a comma list", () => {
    accepts(ClaimNextRequestSchema, { agentId: "a", kinds: ["reply"] });
    accepts(ClaimNextRequestSchema, { agentId: "a", kinds: ["kick", "rollup", "ready", "reply"] });
    rejects(ClaimNextRequestSchema, { agentId: "a", kinds: [] }, "kinds");
    rejects(ClaimNextRequestSchema, { agentId: "a", kinds: ["work"] }, "kinds");
    accepts(ClaimRequestSchema, { agentId: "a", kind: "reply" });
    accepts(ClaimRequestSchema, { agentId: "a", kind: "work" });
    rejects(ClaimRequestSchema, { agentId: "a", kind: "kick" }, "kind");
    accepts(QueueQuerySchema, { kinds: "reply" });
    accepts(QueueQuerySchema, { kinds: "kick,rollup,reply" });
    rejects(QueueQuerySchema, { kinds: "reply," }, "kinds");
    rejects(QueueQuerySchema, { kinds: "replies" }, "kinds");
    expect(parseKindList("kick,reply")).toEqual(["kick", "reply"]);
    expect(parseKindList(undefined)).toBeUndefined();
  });

  it("release: outcome done|abandoned|failed, note at most 2000 characters", () => {
    for (const outcome of ["done", "abandoned", "failed"]) {
      accepts(ReleaseRequestSchema, { ...fenced, outcome });
    }
    accepts(ReleaseRequestSchema, { ...fenced, outcome: "done", note: "x".repeat(2000) });
    rejects(ReleaseRequestSchema, { ...fenced, outcome: "ok" }, "outcome");
    rejects(ReleaseRequestSchema, { ...fenced, outcome: "done", note: "x".repeat(2001) }, "note");
    rejects(ReleaseRequestSchema, { claimId: "c", fence: 0, outcome: "done" }, "fence");
    rejects(ReleaseRequestSchema, { claimId: "", fence: 1, outcome: "done" }, "claimId");
  });

  it("comment: body 1..65440 characters (GitHub's 65536 less room for the write's marker)", () => {
    accepts(CommentRequestSchema, { ...fenced, body: "x" });
    accepts(CommentRequestSchema, { ...fenced, body: "x".repeat(65_440) });
    rejects(CommentRequestSchema, { ...fenced, body: "" }, "body");
    rejects(CommentRequestSchema, { ...fenced, body: "x".repeat(65_441) }, "body");
  });

  it("labels: at least one label, at most 20 per list, names of 1..50 characters", () => {
    accepts(LabelsRequestSchema, { ...fenced, add: ["bug"] });
    accepts(LabelsRequestSchema, { ...fenced, remove: ["x".repeat(50)] });
    accepts(LabelsRequestSchema, { ...fenced, add: [], remove: ["bug"] });
    accepts(LabelsRequestSchema, {
      ...fenced,
      add: Array.from({ length: 20 }, (_, i) => `l${i}`),
    });
    rejects(LabelsRequestSchema, { ...fenced }, "add");
    rejects(LabelsRequestSchema, { ...fenced, add: [], remove: [] }, "add");
    rejects(LabelsRequestSchema, { ...fenced, add: Array.from({ length: 21 }, () => "l") }, "add");
    rejects(LabelsRequestSchema, { ...fenced, remove: [""] }, "remove");
    rejects(LabelsRequestSchema, { ...fenced, add: ["x".repeat(51)] }, "add");
  });

  it("close: reason completed|not_planned", () => {
    accepts(CloseRequestSchema, { ...fenced, reason: "completed" });
    accepts(CloseRequestSchema, { ...fenced, reason: "not_planned" });
    rejects(CloseRequestSchema, { ...fenced, reason: "duplicate" }, "reason");
    rejects(CloseRequestSchema, { ...fenced }, "reason");
  });

  it("sub-issue: title 1..256, body at most 65436 (room for the key's marker), idempotencyKey 1..128 token characters", () => {
    accepts(SubIssueRequestSchema, { ...fenced, title: "t".repeat(256) });
    accepts(SubIssueRequestSchema, {
      ...fenced,
      title: "t",
      body: "b".repeat(65_436),
      idempotencyKey: "k".repeat(128),
    });
    rejects(SubIssueRequestSchema, { ...fenced, title: "" }, "title");
    rejects(SubIssueRequestSchema, { ...fenced, title: "t".repeat(257) }, "title");
    rejects(SubIssueRequestSchema, { ...fenced, title: "t", body: "b".repeat(65_437) }, "body");
    rejects(SubIssueRequestSchema, { ...fenced, title: "t", idempotencyKey: "" }, "idempotencyKey");
    rejects(
      SubIssueRequestSchema,
      { ...fenced, title: "t", idempotencyKey: "k".repeat(129) },
      "idempotencyKey",
    );
    rejects(
      SubIssueRequestSchema,
      { ...fenced, title: "t", idempotencyKey: "a/b" },
      "idempotencyKey",
    );
  });

  it("queue query: limit 1..100 (default 20), order number|impact|priority, comma-separated capabilities", () => {
    expect(QueueQuerySchema.parse({})).toEqual({ limit: 20 });
    expect(
      QueueQuerySchema.parse({ limit: "100", order: "impact", capabilities: "gpu,rust" }),
    ).toEqual({ limit: 100, order: "impact", capabilities: "gpu,rust" });
    rejects(QueueQuerySchema, { limit: "0" }, "limit");
    rejects(QueueQuerySchema, { limit: "101" }, "limit");
    rejects(QueueQuerySchema, { limit: "ten" }, "limit");
    rejects(QueueQuerySchema, { order: "age" }, "order");
    rejects(QueueQuerySchema, { capabilities: "gpu,,rust" }, "capabilities");
    expect(parseCapabilityList("gpu,rust")).toEqual(["gpu", "rust"]);
    expect(parseCapabilityList(undefined)).toEqual([]);
  });

  it("keys: a name, and an optional expiry in days (at most 365)", () => {
    accepts(CreateKeyRequestSchema, { name: "ci" });
    accepts(CreateKeyRequestSchema, { name: "ci", expiresInDays: 90 });
    rejects(CreateKeyRequestSchema, { name: "" }, "name");
    rejects(CreateKeyRequestSchema, { name: "   " }, "name");
    rejects(CreateKeyRequestSchema, { name: "ci", expiresInDays: 0 }, "expiresInDays");
    rejects(CreateKeyRequestSchema, { name: "ci", expiresInDays: 366 }, "expiresInDays");
  });
});
