import { describe, expect, it } from "vitest";
import { parseConfigYaml } from "../../../shared/config/parse.ts";
import { ConfigSchema, DEFAULT_CONFIG } from "../../../shared/config/schema.ts";

describe(".github/switchyard.yml", () => {
  it("an empty file means every default", () => {
    expect(parseConfigYaml("")).toEqual({ ok: true, config: DEFAULT_CONFIG });
    expect(DEFAULT_CONFIG.labels.ready).toBe("agent:ready");
    expect(DEFAULT_CONFIG.queue.mode).toBe("events");
    expect(DEFAULT_CONFIG.kicks.windowHours).toBe(2);
    expect(DEFAULT_CONFIG.claims.branchPattern).toBe("issue/{number}-{slug}");
    expect(DEFAULT_CONFIG.idd.staleHours).toBe(24);
    expect(DEFAULT_CONFIG.idd.mirrorClaims).toBe(true);
  });

  it("the defaults without zod (shared/config/defaults.ts) are what the schema makes of {}", () => {
    // Key for key, absent keys too: a default added to the schema alone fails here.
    expect(ConfigSchema.parse({})).toStrictEqual(DEFAULT_CONFIG);
  });

  it("merges given keys over the defaults", () => {
    const result = parseConfigYaml(
      "queue:\n  mode: all\n  approvalLabel: idd:ready\nlabels:\n  hold: frozen\n",
    );
    expect(result.ok && result.config.queue).toEqual({
      mode: "all",
      approvalLabel: "idd:ready",
      order: "number",
      replies: "answers",
      replyAuthors: "write",
    });
    expect(result.ok && result.config.labels).toEqual({ ...DEFAULT_CONFIG.labels, hold: "frozen" });
  });

  it("queue.replies and queue.replyAuthors: answers and write by default, a login list", () => {
    expect(DEFAULT_CONFIG.queue.replies).toBe("answers");
    expect(DEFAULT_CONFIG.queue.replyAuthors).toBe("write");
    const result = parseConfigYaml(
      "queue:\n  replies: all\n  replyAuthors: [alice, ' Bob ', 'ci-helper[bot]']\n",
    );
    expect(result.ok && result.config.queue.replies).toBe("all");
    expect(result.ok && result.config.queue.replyAuthors).toEqual([
      "alice",
      "Bob",
      "ci-helper[bot]",
    ]);
  });

  it.each([
    ["queue: [unclosed", /not valid YAML/],
    ["queue:\n  mode: sometimes\n", /queue\.mode/],
    ["labels:\n  redy: x\n", /labels: Unrecognized key/],
    ["kicks:\n  windowHours: -1\n", /kicks\.windowHours/],
    ["- just\n- a list\n", /\(root\)/],
    ["queue:\n  replies: some\n", /queue\.replies/],
    ["queue:\n  replyAuthors: everyone\n", /queue\.replyAuthors/],
    [
      "queue:\n  replyAuthors: ['not a login']\n",
      /queue\.replyAuthors\[0\]: expected a GitHub login/,
    ],
  ])("rejects %j with a message naming what is wrong", (text, message) => {
    const result = parseConfigYaml(text);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(message);
  });
});
