// Every REST operation the simulator serves, exercised through the client and by direct calls;
// every response body checked against GitHub's published OpenAPI schema for its status, and
// every request body the client sends checked against the operation's request schema.
import { generateKeyPairSync } from "node:crypto";
import { createAppAuth } from "@octokit/auth-app";
import { describe, expect, it } from "vitest";
import { createGitHubSimulator, simulatorFetch } from "../../infra/github-sim/app.ts";
import { seedFiles } from "../../infra/github-sim/contents.ts";
import { CONTRACT_OPERATIONS } from "../../infra/github-sim/contract/operations.ts";
import { GITHUB_ACTIONS } from "../../infra/github-sim/model.ts";
import { SIM_CLIENT_SECRET } from "../../infra/github-sim/oauth.ts";
import { seedSnapshot } from "../../infra/github-sim/seed.ts";
import { buildManifest } from "../../infra/install/manifest.ts";
import { GitHubClient } from "../../shared/github/client.ts";
import { fetchFileIfChanged, fetchFileText } from "../../shared/github/contents.ts";
import { fetchSnapshot } from "../../shared/github/fetch-snapshot.ts";
import { fetchChanges } from "../../shared/github/incremental.ts";
import * as writes from "../../shared/github/writes.ts";
import { checkRequestBody, checkResponse, templateFor } from "./openapi.ts";

interface Exchange {
  method: string;
  /** Addressed as `/repositories/{id}/...` (checked as its `/repos/{owner}/{repo}` twin). */
  byId: boolean;
  template: string;
  status: number;
  body: unknown;
  problem: string | null;
}

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const PKCS8 = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const SPKI = publicKey.export({ type: "spki", format: "pem" }).toString();

describe("REST responses match GitHub's OpenAPI description", () => {
  it("for every operation the simulator implements", async () => {
    // "t" is the simulator's unrestricted user octocat (any other unknown token answers 401).
    const sim = createGitHubSimulator({ appId: 7, appPublicKey: SPKI, userTokens: ["t"] });
    const inner = simulatorFetch(sim);
    const exchanges: Exchange[] = [];
    const recording: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const url = new URL(request.url);
      const reqText = init?.body ? String(init.body) : "";
      const response = await inner(input, init);
      const template = templateFor(request.method, url.pathname);
      if (template) {
        const text = await response.clone().text();
        const body = text === "" ? null : JSON.parse(text);
        const problem =
          checkResponse(request.method, template, response.status, body) ??
          (reqText && response.status < 300
            ? checkRequestBody(request.method, template, JSON.parse(reqText))
            : null);
        exchanges.push({
          method: request.method,
          byId: url.pathname.startsWith("/repositories/"),
          template,
          status: response.status,
          body,
          problem,
        });
      }
      return response;
    };

    seedSnapshot(sim.state, {
      repo: "acme/app",
      issues: [1, 2, 3, 4, 5].map((n) => ({
        number: n,
        title: `Issue ${n}`,
        state: n === 5 ? "closed" : "open",
        stateReason: n === 5 ? "completed" : null,
        createdAt: "2026-11-01T00:00:00Z",
        updatedAt: "2026-11-01T00:00:00Z",
        closedAt: n === 5 ? "2026-11-02T00:00:00Z" : null,
        labels: n === 1 ? ["agent:ready", "agent:processing"] : [],
        parent: n === 2 ? 1 : undefined,
        blockedBy: n === 3 ? [2, "acme/lib#1"] : undefined,
      })),
    });
    await seedFiles(sim.state, sim.state.repo("acme", "app")!, {
      ".github/switchyard.yml": "queue:\n  mode: all\n",
      ".github/workflows/ci.yml": "on: push\n",
      "big.txt": "x".repeat(1024 * 1024 + 1),
    });
    const installation = sim.state.install("acme", ["app", "lib"], "octocat");
    const user = new GitHubClient({
      auth: { kind: "token", token: "t" },
      baseUrl: "http://sim.test",
      fetch: recording,
    });
    const app = new GitHubClient({
      auth: { kind: "app", appId: 7, privateKey: PKCS8, installationId: installation.id },
      baseUrl: "http://sim.test",
      fetch: recording,
    });
    const { token: jwt } = await createAppAuth({ appId: 7, privateKey: PKCS8 })({ type: "app" });
    const raw = async (method: string, path: string, token: string, body?: unknown) => {
      await recording(`http://sim.test${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    };

    // The client's own traffic.
    await fetchSnapshot(app, "acme/app");
    const changes = await fetchChanges(app, "acme/app", {
      since: "2026-11-01T00:00:00Z",
      etag: null,
      boundary: [],
    });
    await fetchChanges(app, "acme/app", changes.watermark); // 304
    await writes.addLabels(app, "acme/app", 4, ["agent:ready"]);
    await writes.removeLabel(app, "acme/app", 4, "agent:ready");
    await writes.removeLabel(app, "acme/app", 4, "agent:ready"); // 404 Label does not exist
    await writes.createComment(app, "acme/app", 4, "hello");
    await writes.closeIssue(app, "acme/app", 4, "not_planned");
    await writes.addSubIssue(app, "acme/app", 1, 4);
    await writes.removeSubIssue(app, "acme/app", 1, 4);
    await writes.addBlockedBy(app, "acme/app", 4, 2);
    await writes.removeBlockedBy(app, "acme/app", 4, 2);
    await writes.getIssue(user, "acme/app", 99).catch(() => undefined); // 404
    const config = await fetchFileIfChanged(app, "acme/app", ".github/switchyard.yml");
    if (config.status !== "found") throw new Error("the seeded config file was not found");
    await fetchFileIfChanged(app, "acme/app", ".github/switchyard.yml", { etag: config.etag }); // 304
    await fetchFileText(app, "acme/app", "absent.yml"); // 404
    await fetchFileText(app, "acme/app", ".github").catch(() => undefined); // a directory
    await fetchFileText(app, "acme/app", "big.txt").catch(() => undefined); // no content over 1 MB
    await fetchFileText(app, "acme/app", "big.txt", "no-such-branch").catch(() => undefined); // 404

    // Everything else the simulator serves.
    await raw("GET", "/app", jwt);
    await raw("GET", "/app/installations", jwt);
    await raw("GET", "/repos/acme/app/installation", jwt);
    // @octokit/auth-app signs /app routes with the App JWT by itself.
    const minted = await app.send<{ token: string }>({
      operation: "mint an installation token",
      route: "POST /app/installations/{installation_id}/access_tokens",
      params: { installation_id: installation.id },
      idempotent: false,
    });
    await raw("GET", "/installation/repositories", minted.data.token);
    await raw("GET", "/rate_limit", "t");
    await raw("GET", "/repos/acme/app", "t");
    await raw("POST", "/repos/acme/app/issues", "t", { title: "From the API", labels: ["bug"] });
    await raw("GET", "/repos/acme/app/issues/1", "t");
    await raw("PATCH", "/repos/acme/app/issues/1", "t", { title: "Renamed" });
    await raw("PATCH", "/repos/acme/app/issues/1", "t", { state: "closed", state_reason: "bogus" }); // 422
    await raw("GET", "/repos/acme/app/issues/1/comments", "t");
    await raw("GET", "/repos/acme/app/issues/1/events", "t");
    await raw("GET", "/repos/acme/app/issues/1/labels", "t");
    await raw("GET", "/repos/acme/app/issues/1/sub_issues", "t");
    await raw("GET", "/repos/acme/app/issues/3/dependencies/blocked_by", "t");
    await raw("GET", "/repos/acme/app/issues/2/dependencies/blocking", "t");
    await raw("POST", "/repos/acme/app/issues/1/sub_issues", "t", {
      sub_issue_id: sim.state.repo("acme", "app")!.issues.get(2)!.id,
    }); // 422

    // A registered user: `permissions` on the repository, comments as a collaborator; the
    // collaborator permission of each kind of login the simulator knows, and of an unknown one.
    const alice = sim.state.registerUser("alice", "alice-token", { "acme/app": "maintain" });
    // Her user token for the App (what the status page's login gets): it lists installations.
    sim.state.addUserToken(alice, "ghu_alice");
    sim.state.registerUser("bob", "bob-token", { "acme/app": "triage" });
    await raw("GET", "/repos/acme/app", "alice-token");
    await raw("GET", "/repos/acme/lib", "alice-token"); // 404: no role on it
    await raw("POST", "/repos/acme/app/issues/1/comments", "alice-token", { body: "on it" });
    await raw("POST", "/repos/acme/app/issues/1/comments", "bob-token", { body: "me too" });
    await raw("GET", "/repos/acme/app/issues/1/comments", "alice-token");
    for (const login of ["alice", "bob", "acme", "switchyard-sim[bot]", "nobody-here"])
      await raw("GET", `/repos/acme/app/collaborators/${login}/permission`, minted.data.token);

    await raw("GET", `/app/installations/${installation.id}`, jwt);
    await raw("GET", "/app/installations/424242", jwt); // 404
    // A user token's view of the App's installations (the status page's `/`).
    await raw("GET", "/user/installations", "ghu_alice");
    await raw("GET", `/user/installations/${installation.id}/repositories`, "ghu_alice");
    await raw("GET", "/user/installations", "alice-token"); // 403: not a token of the App
    await raw("GET", "/user/installations/424242/repositories", "ghu_alice"); // 404

    // The App checks a user token with its client credentials (Basic auth).
    const basic = (id: string, secret: string) => ({
      authorization: `Basic ${btoa(`${id}:${secret}`)}`,
    });
    const checkToken = (body: unknown) =>
      recording("http://sim.test/applications/Iv1.sim7/token", {
        method: "POST",
        headers: { ...basic("Iv1.sim7", SIM_CLIENT_SECRET), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    await checkToken({ access_token: "ghu_alice" });
    await checkToken({ access_token: "alice-token" }); // 404: not a user token of the App
    await checkToken({}); // 422

    // Organization memberships, read with the App's installation token (members: read).
    sim.state.orgs.setMember("acme", "alice", "admin", "active");
    await raw("GET", "/orgs/acme/memberships/alice", minted.data.token);
    await raw("GET", "/orgs/acme/memberships/nobody-here", minted.data.token); // 404
    await raw("GET", "/orgs/beta/memberships/alice", minted.data.token); // 403: another organization

    // CI on the default branch: a failing check run, a status, a workflow run.
    const ciRepo = sim.state.repo("acme", "app")!;
    const head = ciRepo.head!;
    sim.state.ci.createRun(ciRepo, {
      sha: head,
      name: "test",
      app: GITHUB_ACTIONS,
      ownApp: false,
      status: "in_progress",
      conclusion: "failure",
    });
    sim.state.ci.createStatus(ciRepo, {
      sha: head,
      context: "ci/legacy",
      state: "success",
      creator: "acme",
    });
    sim.state.ci.createWorkflowRun(ciRepo, {
      sha: head,
      name: "CI",
      event: "push",
      status: "in_progress",
      conclusion: null,
      actor: "acme",
    });
    for (const path of [
      "/branches/main",
      "/branches/no-such-branch", // 404
      "/commits/main",
      `/commits/${head.slice(0, 7)}/check-runs`,
      "/commits/main/check-suites",
      "/commits/main/status",
      "/commits/0000000/status", // 404
      "/commits/main/statuses",
      "/commits/0000000", // 422
      "/actions/runs",
    ])
      await raw("GET", `/repos/acme/app${path}`, minted.data.token);

    // GitHub's undocumented by-id twins of every repository route, checked as their twins.
    const appRepo = sim.state.repo("acme", "app")!;
    const byId = `/repositories/${appRepo.id}`;
    const tok = minted.data.token;
    const idOf = (n: number) => appRepo.issues.get(n)!.id;
    await raw("GET", byId, tok);
    await raw("GET", `${byId}/installation`, jwt);
    await raw("GET", `${byId}/collaborators/acme/permission`, tok);
    await raw("GET", `${byId}/contents/.github/switchyard.yml`, tok);
    await raw("GET", `${byId}/issues`, tok);
    await raw("POST", `${byId}/issues`, tok, { title: "By id" }); // #7
    await raw("GET", `${byId}/issues/7`, tok);
    await raw("PATCH", `${byId}/issues/7`, tok, { body: "edited by id" });
    await raw("POST", `${byId}/issues/7/comments`, tok, { body: "by id" });
    await raw("GET", `${byId}/issues/7/comments`, tok);
    await raw("POST", `${byId}/issues/7/labels`, tok, { labels: ["by-id"] });
    await raw("GET", `${byId}/issues/7/labels`, tok);
    await raw("DELETE", `${byId}/issues/7/labels/by-id`, tok);
    await raw("GET", `${byId}/issues/7/events`, tok);
    await raw("POST", `${byId}/issues/7/sub_issues`, tok, { sub_issue_id: idOf(6) });
    await raw("GET", `${byId}/issues/7/sub_issues`, tok);
    await raw("DELETE", `${byId}/issues/7/sub_issue`, tok, { sub_issue_id: idOf(6) });
    await raw("POST", `${byId}/issues/7/dependencies/blocked_by`, tok, { issue_id: idOf(6) });
    await raw("GET", `${byId}/issues/7/dependencies/blocked_by`, tok);
    await raw("GET", `${byId}/issues/6/dependencies/blocking`, tok);
    await raw("DELETE", `${byId}/issues/7/dependencies/blocked_by/${idOf(6)}`, tok);
    for (const path of [
      "/branches/main",
      "/commits/main",
      "/commits/main/check-runs",
      "/commits/main/check-suites",
      "/commits/main/status",
      "/commits/main/statuses",
      "/actions/runs",
    ])
      await raw("GET", `${byId}${path}`, tok);
    await raw("GET", "/repositories/999999/issues", tok); // 404

    // Moved things answer 301 with GitHub's body (documented for these operations).
    const old = sim.state.createRepo("acme", "old-name");
    sim.state.changeInstallationRepos(installation, ["old-name"], [], "octocat");
    sim.state.renameRepo(old, "new-name", "acme");
    await raw("GET", "/repos/acme/old-name", tok);
    sim.state.transferIssue(appRepo.issues.get(7)!, sim.state.repo("acme", "lib")!, "acme");
    await raw("GET", "/repos/acme/app/issues/7", tok);

    // The App manifest flow, last (a conversion gives the simulator's App a new key): the
    // new-App form answers with a one-time code, which converts once.
    const manifest = buildManifest({
      name: "contract-app",
      workerUrl: "https://switchyard.example.workers.dev",
      redirectUrl: "http://127.0.0.1:9/callback",
    });
    const form = await recording("http://sim.test/settings/apps/new?state=s1", {
      method: "POST",
      body: new URLSearchParams({ manifest: JSON.stringify(manifest) }),
    });
    const code = new URL(form.headers.get("location") ?? "http://x/").searchParams.get("code");
    await raw("POST", `/app-manifests/${code}/conversions`, "t");
    await raw("POST", `/app-manifests/${code}/conversions`, "t"); // 404: a code converts once
    sim.webhooks.pushUrl = null;

    const problems = exchanges.filter((e) => e.problem !== null).map((e) => e.problem);
    expect(problems).toEqual([]);
    const covered = new Set(
      exchanges.filter((e) => e.status < 300).map((e) => `${e.method} ${e.template}`),
    );
    const missing = CONTRACT_OPERATIONS.map((o) => `${o.method} ${o.path}`).filter(
      (k) => !covered.has(k),
    );
    expect(missing).toEqual([]);
    const coveredById = new Set(
      exchanges.filter((e) => e.byId && e.status < 300).map((e) => `${e.method} ${e.template}`),
    );
    const missingById = CONTRACT_OPERATIONS.filter((o) =>
      o.path.startsWith("/repos/{owner}/{repo}"),
    )
      .map((o) => `${o.method} ${o.path}`)
      .filter((k) => !coveredById.has(k));
    expect(missingById).toEqual([]);
    expect(exchanges.filter((e) => e.status === 301).map((e) => e.template)).toEqual([
      "/repos/{owner}/{repo}",
      "/repos/{owner}/{repo}/issues/{issue_number}",
    ]);
    // Error answers are checked too.
    expect(exchanges.some((e) => e.status === 404)).toBe(true);
    expect(exchanges.some((e) => e.status === 422)).toBe(true);
    expect(exchanges.some((e) => e.status === 304)).toBe(true);
    const statusesOf = (template: string) =>
      exchanges.filter((e) => e.template === template && !e.byId).map((e) => e.status);
    expect(statusesOf("/applications/{client_id}/token")).toEqual([200, 404, 422]);
    expect(statusesOf("/orgs/{org}/memberships/{username}")).toEqual([200, 404, 403]);
    expect(statusesOf("/repos/{owner}/{repo}/branches/{branch}")).toEqual([200, 404]);
    expect(statusesOf("/repos/{owner}/{repo}/commits/{ref}")).toEqual([200, 422]);
    expect(statusesOf("/repos/{owner}/{repo}/commits/{ref}/status")).toEqual([200, 404]);
    expect(statusesOf("/user/installations")).toEqual([200, 403]);
    const runs = exchanges.find((e) => e.template.endsWith("/check-runs"))?.body;
    expect(runs).toMatchObject({
      total_count: 1,
      check_runs: [{ name: "test", conclusion: "failure" }],
    });
    const permissionLevels = exchanges.filter((e) => e.template.endsWith("/permission") && !e.byId);
    expect(permissionLevels.map((e) => e.status)).toEqual([200, 200, 200, 200, 404]);
    const repoAsAlice = exchanges.find(
      (e) =>
        e.template === "/repos/{owner}/{repo}" &&
        e.status === 200 &&
        "permissions" in (e.body as object),
    );
    expect(repoAsAlice?.body).toMatchObject({
      permissions: { admin: false, maintain: true, push: true, triage: true, pull: true },
    });
  }, 30_000); // a long scenario with an RSA key and ajv compiles; slow on a loaded machine
});
