import examples from "@octokit/webhooks-examples";
import { describe, expect, it } from "vitest";
import {
  AppManifestSchema,
  buildManifest,
  defaultAppName,
  EVENTS_EVERY_APP_RECEIVES,
  githubWebUrl,
  MANIFEST_EVENTS,
  MANIFEST_PERMISSIONS,
  manifestFormTarget,
} from "../../../infra/install/manifest.ts";
import { parseWebhook } from "../../../shared/github/webhooks.ts";

/** Whether the ingress handles an event at all: anything but "event X is not handled". */
function ingressHandles(event: string): boolean {
  const parsed = parseWebhook(event, { action: "probe" });
  return !(parsed.kind === "ignored" && parsed.reason === `event ${event} is not handled`);
}

describe("the App manifest", () => {
  it("subscribes to exactly the events the ingress handles, minus the two every App receives", () => {
    // Every event name GitHub documents with an example, and every name the manifest lists:
    // the ingress's own verdict decides, not a second list.
    const candidates = new Set([...examples.map((e) => e.name), ...MANIFEST_EVENTS]);
    const handled = [...candidates].filter(ingressHandles);
    const expected = handled.filter(
      (e) => !(EVENTS_EVERY_APP_RECEIVES as readonly string[]).includes(e),
    );
    expect([...MANIFEST_EVENTS].sort()).toEqual(expected.sort());
    for (const event of EVENTS_EVERY_APP_RECEIVES) {
      expect(ingressHandles(event)).toBe(true);
      expect(MANIFEST_EVENTS).not.toContain(event);
    }
    // The events the design names are among them.
    expect(MANIFEST_EVENTS).toEqual(
      expect.arrayContaining([
        "issues",
        "issue_comment",
        "label",
        "sub_issues",
        "issue_dependencies",
        "push",
        "repository",
        "check_run",
        "check_suite",
        "status",
        "workflow_run",
        "projects_v2_item",
      ]),
    );
  });

  it("points GitHub at the Worker and back at the local server", () => {
    const manifest = buildManifest({
      name: "switchyard-acme",
      workerUrl: "https://switchyard.acme.workers.dev/",
      redirectUrl: "http://127.0.0.1:4567/callback",
    });
    expect(manifest).toMatchObject({
      name: "switchyard-acme",
      url: "https://switchyard.acme.workers.dev/",
      hook_attributes: { url: "https://switchyard.acme.workers.dev/webhooks/github", active: true },
      redirect_url: "http://127.0.0.1:4567/callback",
      callback_urls: ["https://switchyard.acme.workers.dev/login/callback"],
      public: false,
      default_permissions: {
        issues: "write",
        metadata: "read",
        contents: "read",
        checks: "read",
        statuses: "read",
        actions: "read",
        organization_projects: "read",
      },
    });
    expect(manifest.default_permissions).toEqual(MANIFEST_PERMISSIONS);
    expect(manifest.default_events).toEqual([...MANIFEST_EVENTS]);
  });

  it("refuses manifests GitHub would refuse, naming the field", () => {
    const good = buildManifest({
      name: "x",
      workerUrl: "https://w.example",
      redirectUrl: "http://127.0.0.1:1/callback",
    });
    const listed = AppManifestSchema.safeParse({
      ...good,
      default_events: [...good.default_events, "installation"],
    });
    expect(listed.success).toBe(false);
    expect(listed.error?.issues[0]?.path).toEqual(["default_events"]);
    expect(AppManifestSchema.safeParse({ ...good, name: "x".repeat(35) }).success).toBe(false);
    expect(
      AppManifestSchema.safeParse({ ...good, hook_attributes: { url: "ftp://w.example" } }).success,
    ).toBe(false);
    expect(AppManifestSchema.safeParse({ ...good, surprise: true }).success).toBe(false);
  });

  it("finds GitHub's web pages from the API URL (github.com, Enterprise Server, the simulator)", () => {
    expect(githubWebUrl("https://api.github.com")).toBe("https://github.com");
    expect(githubWebUrl("https://ghe.acme.com/api/v3/")).toBe("https://ghe.acme.com");
    expect(githubWebUrl("http://127.0.0.1:8790")).toBe("http://127.0.0.1:8790");
    expect(manifestFormTarget("https://github.com", "s 1")).toBe(
      "https://github.com/settings/apps/new?state=s%201",
    );
    expect(manifestFormTarget("https://ghe.acme.com", "s", "acme")).toBe(
      "https://ghe.acme.com/organizations/acme/settings/apps/new?state=s",
    );
  });

  it("names the App after the Worker's host", () => {
    expect(defaultAppName("https://switchyard.acme.workers.dev")).toBe("switchyard-acme");
    expect(defaultAppName("https://queue.example.com")).toBe("queue");
    expect(defaultAppName("http://127.0.0.1:8787")).toBe("switchyard");
    expect(defaultAppName(`https://${"a".repeat(40)}.acme.workers.dev`).length).toBe(34);
  });
});
