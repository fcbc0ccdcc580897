// switchyard's webhook ingress schemas against GitHub's real payload examples
// (@octokit/webhooks-examples) and the simulator's payloads for the events without examples.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  describeInvalidWebhook,
  parseWebhook,
  WEBHOOK_SCHEMAS,
} from "../../shared/github/webhooks.ts";
import { emitEveryWebhook } from "./emit-every-webhook.ts";

interface ExampleSet {
  name: string;
  examples: Record<string, unknown>[];
}

const EXAMPLES: ExampleSet[] = JSON.parse(
  readFileSync(
    new URL(
      "../../node_modules/@octokit/webhooks-examples/api.github.com/index.json",
      import.meta.url,
    ),
    "utf8",
  ),
);

/** Events whose payloads carry no `action`. */
const NO_ACTION = new Set(["push", "status"]);

const handledExamples = EXAMPLES.flatMap((set) =>
  set.examples
    .filter((e) => {
      const byAction = (WEBHOOK_SCHEMAS as Record<string, Record<string, unknown>>)[set.name];
      return (
        byAction !== undefined &&
        (NO_ACTION.has(set.name) || Object.hasOwn(byAction, String(e.action)))
      );
    })
    .map((e, i) => [`${set.name}.${String(e.action ?? "")} #${i}`, set.name, e] as const),
);

/** Pulls the value at a dotted path out and puts `value` there (undefined deletes). */
function mutate(payload: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(payload) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy;
}

function mutations(
  event: string,
): { path: (string | number)[]; value: unknown; expectPath: string }[] {
  switch (event) {
    case "installation":
    case "installation_repositories":
      return [
        { path: ["installation", "id"], value: "42", expectPath: "installation.id" },
        { path: ["sender"], value: undefined, expectPath: "sender" },
      ];
    case "push":
      return [
        { path: ["repository", "id"], value: undefined, expectPath: "repository.id" },
        { path: ["commits"], value: "none", expectPath: "commits" },
      ];
    case "repository":
      return [
        { path: ["repository", "id"], value: "42", expectPath: "repository.id" },
        { path: ["sender"], value: undefined, expectPath: "sender" },
      ];
    case "check_run":
      return [
        { path: ["check_run", "id"], value: "12", expectPath: "check_run.id" },
        { path: ["repository"], value: undefined, expectPath: "repository" },
      ];
    case "check_suite":
      return [
        { path: ["check_suite", "head_sha"], value: 7, expectPath: "check_suite.head_sha" },
        { path: ["repository"], value: undefined, expectPath: "repository" },
      ];
    case "status":
      return [
        { path: ["state"], value: "red", expectPath: "state" },
        { path: ["branches"], value: undefined, expectPath: "branches" },
      ];
    case "workflow_run":
      return [
        {
          path: ["workflow_run", "workflow_id"],
          value: "x",
          expectPath: "workflow_run.workflow_id",
        },
        { path: ["repository"], value: undefined, expectPath: "repository" },
      ];
    case "projects_v2_item":
      return [
        {
          path: ["projects_v2_item", "project_node_id"],
          value: 5,
          expectPath: "projects_v2_item.project_node_id",
        },
        {
          path: ["projects_v2_item", "updated_at"],
          value: "yesterday",
          expectPath: "projects_v2_item.updated_at",
        },
      ];
    case "label":
      return [
        { path: ["label", "name"], value: 7, expectPath: "label.name" },
        {
          path: ["repository", "full_name"],
          value: "no-slash",
          expectPath: "repository.full_name",
        },
      ];
    default:
      return [
        { path: ["issue", "number"], value: "12", expectPath: "issue.number" },
        { path: ["issue", "state"], value: "merged", expectPath: "issue.state" },
        { path: ["repository"], value: undefined, expectPath: "repository" },
      ];
  }
}

describe("webhook schemas (shared/github/webhooks.ts)", () => {
  it("cover examples of every handled event", () => {
    const events = new Set(handledExamples.map(([, event]) => event));
    expect([...events].sort()).toEqual([
      "check_run",
      "check_suite",
      "installation",
      "installation_repositories",
      "issue_comment",
      "issues",
      "label",
      "projects_v2_item",
      "push",
      "repository",
      "status",
      "workflow_run",
    ]);
  });

  it.each(handledExamples)("accept the official example %s", (_name, event, example) => {
    const result = parseWebhook(event, example);
    expect(result.kind === "invalid" ? describeInvalidWebhook(result) : result.kind).not.toMatch(
      /^invalid/,
    );
  });

  it.each(handledExamples)(
    "reject mutated copies of %s, naming the first bad path",
    (_name, event, example) => {
      for (const m of mutations(event)) {
        const result = parseWebhook(event, mutate(example, m.path, m.value));
        expect(result.kind).toBe("invalid");
        if (result.kind !== "invalid") return;
        expect(result.path).toBe(m.expectPath);
        const text = describeInvalidWebhook(result);
        expect(text).toContain(
          NO_ACTION.has(event)
            ? `invalid ${event} payload`
            : `invalid ${event}.${String(example.action)}`,
        );
        expect(text).toContain(m.expectPath);
      }
    },
  );

  it("accept the simulator's sub_issues and issue_dependencies payloads (no official examples exist)", async () => {
    const deliveries = await emitEveryWebhook();
    const kinds = deliveries.filter(
      (d) => d.event === "sub_issues" || d.event === "issue_dependencies",
    );
    expect(kinds).toHaveLength(8);
    for (const d of kinds) {
      expect(parseWebhook(d.event, JSON.parse(d.body)).kind).toBe("handled");
      const broken = parseWebhook(
        d.event,
        mutate(
          JSON.parse(d.body),
          [d.event === "sub_issues" ? "sub_issue_id" : "blocking_issue_id"],
          "1",
        ),
      );
      expect(broken.kind).toBe("invalid");
    }
  });

  it("accept the simulator's push payloads (to main, touching the config file)", async () => {
    const pushes = (await emitEveryWebhook()).filter((d) => d.event === "push");
    expect(pushes).toHaveLength(3);
    for (const d of pushes) {
      const payload = JSON.parse(d.body);
      expect(parseWebhook("push", payload)).toMatchObject({ kind: "handled", event: "push" });
      for (const m of mutations("push")) {
        expect(parseWebhook("push", mutate(payload, m.path, m.value))).toMatchObject({
          kind: "invalid",
          path: m.expectPath,
        });
      }
    }
  });

  it("ignores events and actions switchyard does not handle", () => {
    const star = EXAMPLES.find((s) => s.name === "star")!.examples[0];
    expect(parseWebhook("star", star)).toMatchObject({ kind: "ignored", event: "star" });
    const assigned = EXAMPLES.find((s) => s.name === "issues")!.examples.find(
      (e) => e.action === "assigned",
    );
    expect(parseWebhook("issues", assigned)).toMatchObject({ kind: "ignored", action: "assigned" });
    expect(parseWebhook("label", { action: "created" })).toMatchObject({ kind: "ignored" });
  });

  it("handles every push to the default branch (its head, and maybe the config), no other branch's", () => {
    const push = (ref: string, files: string[]) => ({
      ref,
      after: "abc",
      repository: { id: 1, name: "app", full_name: "acme/app", default_branch: "main" },
      commits: [{ id: "abc", added: [], modified: files, removed: [] }],
    });
    expect(parseWebhook("push", push("refs/heads/main", [".github/switchyard.yml"])).kind).toBe(
      "handled",
    );
    expect(parseWebhook("push", push("refs/heads/main", ["README.md"])).kind).toBe("handled");
    expect(parseWebhook("push", push("refs/heads/dev", [".github/switchyard.yml"])).kind).toBe(
      "ignored",
    );
  });

  it("names a missing action as invalid for a handled event", () => {
    expect(parseWebhook("issues", { issue: {} })).toMatchObject({
      kind: "invalid",
      path: "action",
    });
  });
});
