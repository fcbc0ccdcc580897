// The simulator and shared/github inside workerd (the Workers runtime): both are Web-standard,
// so the Worker can use the client and workerd tests can run the simulator in-process.
import { describe, expect, inject, it } from "vitest";
import { createGitHubSimulator, simulatorFetch } from "../../infra/github-sim/app.ts";
import { seedSnapshot } from "../../infra/github-sim/seed.ts";
import { GitHubClient } from "../../shared/github/client.ts";
import { fetchFileIfChanged } from "../../shared/github/contents.ts";
import { fetchSnapshot } from "../../shared/github/fetch-snapshot.ts";
import { fetchChanges } from "../../shared/github/incremental.ts";
import { CONFIG_PATH, parseWebhook } from "../../shared/github/webhooks.ts";
import { addBlockedBy, closeIssue } from "../../shared/github/writes.ts";

const T0 = "2026-11-01T00:00:00Z";
const issue = (number: number, extra = {}) => ({
  number,
  title: `Issue ${number}`,
  state: "open" as const,
  stateReason: null,
  createdAt: T0,
  updatedAt: T0,
  closedAt: null,
  labels: [],
  ...extra,
});

describe("shared/github and the simulator in workerd", () => {
  it("authenticates as an App with a PKCS#8 key, fetches, writes, reconciles and emits webhooks", async () => {
    const { pkcs8: privateKey, spki: publicKey } = inject("appKeys");
    const sim = createGitHubSimulator({ appId: 3, appPublicKey: publicKey });
    seedSnapshot(sim.state, {
      repo: "acme/app",
      issues: [issue(1), issue(2, { parent: 1 }), issue(3)],
    });
    const installation = sim.state.install("acme", ["app"], "octocat");
    const client = new GitHubClient({
      auth: { kind: "app", appId: 3, privateKey, installationId: installation.id },
      baseUrl: "http://sim.test",
      fetch: simulatorFetch(sim),
    });
    const { snapshot } = await fetchSnapshot(client, "acme/app");
    expect(snapshot.issues.map((i) => i.parent ?? null)).toEqual([null, 1, null]);
    await addBlockedBy(client, "acme/app", 3, 1);
    await closeIssue(client, "acme/app", 1);
    const changes = await fetchChanges(client, "acme/app", {
      since: "2026-11-02T00:00:00Z",
      etag: null,
      boundary: [],
    });
    expect(changes.issues.map((i) => [i.number, i.state])).toEqual([
      [1, "closed"],
      [3, "open"],
    ]);
    const deliveries = await sim.webhooks.drain();
    const kinds = deliveries.map((d) => `${d.event}.${d.action}`);
    expect(kinds).toContain("issue_dependencies.blocked_by_added");
    expect(kinds).toContain("issues.closed");
    for (const d of deliveries)
      expect(parseWebhook(d.event, JSON.parse(d.body)).kind).toBe("handled");
    expect(sim.tokens.issued).toBe(1);
  });

  it("pushes a config file (WebCrypto SHA-1 ids) and reads it back conditionally", async () => {
    // "t" (the client's token) is the simulator's unrestricted user octocat.
    const sim = createGitHubSimulator({ userTokens: ["t"] });
    seedSnapshot(sim.state, { repo: "acme/app", issues: [issue(1)] });
    sim.state.install("acme", ["app"], "octocat");
    const put = await sim.fetch(
      new Request(`http://sim.test/_sim/repos/acme/app/contents/${CONFIG_PATH}`, {
        method: "PUT",
        body: JSON.stringify({ text: "queue:\n  mode: all\n" }),
      }),
    );
    expect(put.status).toBe(200);
    const pushes = (await sim.webhooks.drain()).filter((d) => d.event === "push");
    expect(pushes.map((d) => parseWebhook(d.event, JSON.parse(d.body)).kind)).toEqual(["handled"]);
    const client = new GitHubClient({
      auth: { kind: "token", token: "t" },
      baseUrl: "http://sim.test",
      fetch: simulatorFetch(sim),
    });
    const found = await fetchFileIfChanged(client, "acme/app", CONFIG_PATH);
    expect(found).toMatchObject({ status: "found", text: "queue:\n  mode: all\n" });
    const etag = found.status === "found" ? found.etag : null;
    expect(await fetchFileIfChanged(client, "acme/app", CONFIG_PATH, { etag })).toEqual({
      status: "not-modified",
      etag,
    });
  });
});
