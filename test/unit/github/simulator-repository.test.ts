// The simulator's repository lifecycle (rename, transfer, delete, archive, visibility) through the
// control API, with the webhooks GitHub sends for each (checked against GitHub's x-webhooks
// schemas), redirects for moved repositories and issues, and the by-id twins of REST routes.
import { generateKeyPairSync } from "node:crypto";
import { createAppAuth } from "@octokit/auth-app";
import { describe, expect, it } from "vitest";
import { createGitHubSimulator, type GitHubSimulator } from "../../../infra/github-sim/app.ts";
import { checkWebhook } from "../../contract/openapi.ts";
import { issue, REPO } from "./sim-harness.ts";

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const PKCS8 = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const SPKI = publicKey.export({ type: "spki", format: "pem" }).toString();

async function control(sim: GitHubSimulator, method: string, path: string, body?: unknown) {
  const res = await sim.fetch(
    new Request(`http://sim.test/_sim${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function api(
  sim: GitHubSimulator,
  method: string,
  path: string,
  token = "t",
  body?: unknown,
) {
  const res = await sim.fetch(
    new Request(`http://sim.test${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await res.text();
  return {
    status: res.status,
    location: res.headers.get("location"),
    body: text === "" ? null : (JSON.parse(text) as Record<string, unknown>),
  };
}

interface Delivery {
  event: string;
  action: string;
  installation: number;
  payload: Record<string, unknown>;
}

/** Drains the outbox; every payload must validate against GitHub's schema for its event. */
async function drain(sim: GitHubSimulator): Promise<Delivery[]> {
  const deliveries = await sim.webhooks.drain();
  return deliveries.map((d) => {
    const payload = JSON.parse(d.body) as Record<string, unknown>;
    expect(checkWebhook(d.event, d.action, payload)).toBeNull();
    return {
      event: d.event,
      action: d.action,
      installation: (payload.installation as { id: number }).id,
      payload,
    };
  });
}

const kinds = (ds: Delivery[]) => ds.map((d) => `${d.event}.${d.action}@${d.installation}`);

async function seeded() {
  // "t" (the token `api` sends by default) is the unrestricted user octocat.
  const sim = createGitHubSimulator({ appPublicKey: SPKI, userTokens: ["t"] });
  const seed = await control(sim, "POST", "/seed", {
    snapshot: {
      repo: REPO,
      issues: [issue(1), issue(2, { parent: 1 }), issue(3, { blockedBy: [2] })],
    },
  });
  expect(seed.status).toBe(200);
  await sim.webhooks.drain();
  const installationId = seed.body.installationId as number;
  const repoId = seed.body.repoId as number;
  const jwt = (await createAppAuth({ appId: 1, privateKey: PKCS8 })({ type: "app" })).token;
  return { sim, installationId, repoId, jwt };
}

describe("simulator repository lifecycle", () => {
  it("rename: repository.renamed with the old name; the old name redirects to /repositories/{id}", async () => {
    const { sim, installationId, repoId } = await seeded();
    const res = await control(sim, "POST", "/repos/acme/app/rename", {
      name: "rocket",
      actor: "acme",
    });
    expect(res).toMatchObject({ status: 200, body: { id: repoId, full_name: "acme/rocket" } });
    const [renamed, ...rest] = await drain(sim);
    expect(rest).toEqual([]);
    expect(kinds([renamed!])).toEqual([`repository.renamed@${installationId}`]);
    expect(renamed!.payload).toMatchObject({
      changes: { repository: { name: { from: "app" } } },
      repository: { id: repoId, name: "rocket", full_name: "acme/rocket" },
      sender: { login: "acme" },
    });

    const moved = await api(sim, "GET", "/repos/acme/app/issues/2?state=all");
    expect(moved).toEqual({
      status: 301,
      location: `http://sim.test/repositories/${repoId}/issues/2?state=all`,
      body: {
        message: "Moved Permanently",
        url: `http://sim.test/repositories/${repoId}/issues/2?state=all`,
        documentation_url: "https://docs.github.com/v3/#http-redirects",
      },
    });
    expect((await api(sim, "GET", "/repos/acme/app")).location).toBe(
      `http://sim.test/repositories/${repoId}`,
    );
    // Writes get a 307 (the method must be kept), as on GitHub.
    const write = await api(sim, "POST", "/repos/acme/app/issues/1/labels", "t", ["x"]);
    expect(write.status).toBe(307);
    expect(write.location).toBe(`http://sim.test/repositories/${repoId}/issues/1/labels`);
    // GraphQL follows renames unless told not to; the answer carries the databaseId.
    const gql = async (followRenames: boolean) =>
      (
        await api(sim, "POST", "/graphql", "t", {
          query: `query { repository(owner: "acme", name: "app", followRenames: ${followRenames}) { databaseId nameWithOwner } }`,
        })
      ).body;
    expect(await gql(true)).toEqual({
      data: { repository: { databaseId: repoId, nameWithOwner: "acme/rocket" } },
    });
    expect((await gql(false))?.data).toEqual({ repository: null });

    // A new repository with the old name takes it over: no more redirect.
    const reused = await control(sim, "POST", "/repos", { owner: "acme", name: "app" });
    expect(reused.body.id).not.toBe(repoId);
    const fresh = await api(sim, "GET", "/repos/acme/app");
    expect(fresh.status).toBe(200);
    expect(fresh.body?.id).toBe(reused.body.id);
  });

  it("transfer: removed from the old installation, added to the new owner's, repository.transferred there; the id stays", async () => {
    const { sim, installationId, repoId, jwt } = await seeded();
    const beta = await control(sim, "POST", "/installations", {
      account: "beta",
      repositories: "all",
    });
    await sim.webhooks.drain();
    const res = await control(sim, "POST", "/repos/acme/app/transfer", { to: "beta" });
    expect(res.body).toMatchObject({
      id: repoId,
      full_name: "beta/app",
      installationId: beta.body.id,
    });
    const ds = await drain(sim);
    expect(kinds(ds)).toEqual([
      `installation_repositories.removed@${installationId}`,
      `installation_repositories.added@${beta.body.id}`,
      `repository.transferred@${beta.body.id}`,
    ]);
    expect(ds[0]!.payload).toMatchObject({
      repository_selection: "selected",
      repositories_removed: [{ id: repoId, full_name: "acme/app" }],
    });
    expect(ds[1]!.payload).toMatchObject({
      repository_selection: "all",
      repositories_added: [{ id: repoId, full_name: "beta/app" }],
    });
    expect(ds[2]!.payload).toMatchObject({
      changes: { owner: { from: { organization: { login: "acme" } } } },
      repository: { id: repoId, full_name: "beta/app", owner: { login: "beta" } },
      organization: { login: "beta" },
    });
    const moved = await api(sim, "GET", "/repos/acme/app/issues");
    expect(moved.status).toBe(301);
    expect(moved.location).toBe(`http://sim.test/repositories/${repoId}/issues`);
    expect((await api(sim, "GET", `/repositories/${repoId}`)).body).toMatchObject({
      id: repoId,
      full_name: "beta/app",
    });
    // The App's view: the new installation covers it, the old one no longer does.
    const inst = await api(sim, "GET", "/repos/beta/app/installation", jwt);
    expect(inst.body?.id).toBe(beta.body.id);
    expect((await api(sim, "GET", "/repos/acme/app/installation", jwt)).status).toBe(301);
    const token = (
      await api(sim, "POST", `/app/installations/${installationId}/access_tokens`, jwt)
    ).body!.token as string;
    expect((await api(sim, "GET", `/repositories/${repoId}/issues`, token)).status).toBe(404);
  });

  it("transfer to an account without an installation covering it: only the old installation hears of it", async () => {
    const { sim, installationId } = await seeded();
    await control(sim, "POST", "/installations", { account: "beta", repositories: ["other"] });
    await sim.webhooks.drain();
    await control(sim, "POST", "/repos/acme/app/transfer", { to: "beta" });
    expect(kinds(await drain(sim))).toEqual([
      `installation_repositories.removed@${installationId}`,
    ]);
  });

  it("delete: repository.deleted; afterwards 404 by name and by id, and the App's installation lookup 404s", async () => {
    const { sim, installationId, repoId, jwt } = await seeded();
    const res = await control(sim, "DELETE", "/repos/acme/app", { actor: "acme" });
    expect(res.body).toEqual({ deleted: true, id: repoId });
    const ds = await drain(sim);
    expect(kinds(ds)).toEqual([`repository.deleted@${installationId}`]);
    expect(ds[0]!.payload).toMatchObject({ repository: { id: repoId, full_name: "acme/app" } });
    for (const path of ["/repos/acme/app", "/repos/acme/app/issues/1", `/repositories/${repoId}`])
      expect((await api(sim, "GET", path)).status).toBe(404);
    expect((await api(sim, "GET", `/repositories/${repoId}/issues`)).status).toBe(404);
    expect((await api(sim, "GET", "/repos/acme/app/installation", jwt)).status).toBe(404);
    // The name is free again, under a new id.
    const again = await control(sim, "POST", "/repos", { owner: "acme", name: "app" });
    expect(again.body.id).not.toBe(repoId);
  });

  it("archive: repository.archived / unarchived; writes answer 403 while archived, reads 200", async () => {
    const { sim, installationId, repoId } = await seeded();
    await control(sim, "POST", "/repos/acme/app/archive");
    const [archived] = await drain(sim);
    expect(kinds([archived!])).toEqual([`repository.archived@${installationId}`]);
    expect(archived!.payload).toMatchObject({ repository: { id: repoId, archived: true } });
    const child = sim.state.repo("acme", "app")!.issues.get(2)!.id;
    const writes: [string, string, unknown][] = [
      ["POST", "/repos/acme/app/issues", { title: "no" }],
      ["PATCH", "/repos/acme/app/issues/1", { title: "no" }],
      ["POST", "/repos/acme/app/issues/1/comments", { body: "no" }],
      ["POST", "/repos/acme/app/issues/1/labels", { labels: ["x"] }],
      ["DELETE", "/repos/acme/app/issues/1/labels/x", undefined],
      ["POST", "/repos/acme/app/issues/3/sub_issues", { sub_issue_id: child }],
      ["DELETE", "/repos/acme/app/issues/1/sub_issue", { sub_issue_id: child }],
      ["POST", "/repos/acme/app/issues/1/dependencies/blocked_by", { issue_id: child }],
      ["DELETE", `/repos/acme/app/issues/3/dependencies/blocked_by/${child}`, undefined],
      ["POST", `/repositories/${repoId}/issues/1/labels`, { labels: ["x"] }],
    ];
    for (const [method, path, body] of writes) {
      const res = await api(sim, method, path, "t", body);
      expect([path, res.status, res.body?.message]).toEqual([
        path,
        403,
        "Repository was archived so is read-only.",
      ]);
    }
    expect(await drain(sim)).toEqual([]);
    expect((await api(sim, "GET", "/repos/acme/app/issues/1")).status).toBe(200);
    expect((await api(sim, "GET", "/repos/acme/app")).body).toMatchObject({ archived: true });
    const gql = await api(sim, "POST", "/graphql", "t", {
      query: `query { repository(owner: "acme", name: "app") { databaseId isArchived } }`,
    });
    expect(gql.body).toEqual({ data: { repository: { databaseId: repoId, isArchived: true } } });

    await control(sim, "POST", "/repos/acme/app/archive"); // already archived: nothing
    await control(sim, "POST", "/repos/acme/app/unarchive");
    expect(kinds(await drain(sim))).toEqual([`repository.unarchived@${installationId}`]);
    expect((await api(sim, "POST", "/repos/acme/app/issues/1/labels", "t", ["x"])).status).toBe(
      200,
    );
  });

  it("visibility: repository.privatized / publicized with private and visibility", async () => {
    // Repositories start private.
    const { sim, installationId } = await seeded();
    const res = await control(sim, "POST", "/repos/acme/app/visibility", { private: false });
    expect(res.body).toMatchObject({ private: false });
    const [pub] = await drain(sim);
    expect(kinds([pub!])).toEqual([`repository.publicized@${installationId}`]);
    expect(pub!.payload).toMatchObject({ repository: { private: false, visibility: "public" } });
    await control(sim, "POST", "/repos/acme/app/visibility", { private: true });
    const [priv] = await drain(sim);
    expect(kinds([priv!])).toEqual([`repository.privatized@${installationId}`]);
    expect(priv!.payload).toMatchObject({ repository: { private: true, visibility: "private" } });
    expect((await control(sim, "POST", "/repos/acme/app/visibility", {})).status).toBe(400);
  });
});

describe("simulator REST by repository id", () => {
  it("every /repositories/{id} twin answers exactly as its /repos/{owner}/{repo} route", async () => {
    const { sim, repoId, jwt } = await seeded();
    const pairs: [string, string?][] = [
      [""],
      ["/issues?state=all&per_page=2"],
      ["/issues/2"],
      ["/issues/2/comments"],
      ["/issues/2/events"],
      ["/issues/2/labels"],
      ["/issues/1/sub_issues"],
      ["/issues/3/dependencies/blocked_by"],
      ["/issues/2/dependencies/blocking"],
      ["/collaborators/acme/permission"],
      ["/issues/99"],
      ["/installation", jwt],
    ];
    for (const [suffix, token] of pairs) {
      const byName = await api(sim, "GET", `/repos/acme/app${suffix}`, token);
      const byId = await api(sim, "GET", `/repositories/${repoId}${suffix}`, token);
      expect([suffix, byId.status, byId.body]).toEqual([suffix, byName.status, byName.body]);
    }
    // Writes too: the same change, the same webhooks.
    const created = await api(sim, "POST", `/repositories/${repoId}/issues`, "t", {
      title: "by id",
    });
    expect(created).toMatchObject({ status: 201, body: { number: 4 } });
    expect(created.body?.url).toBe("http://sim.test/repos/acme/app/issues/4");
    expect((await drain(sim)).map((d) => `${d.event}.${d.action}`)).toEqual(["issues.opened"]);
    // Counted under their own template; a fault rule for the name path hits the twin too.
    expect(
      sim.counter.snapshot().byEndpoint["POST /repositories/{repository_id}/issues"],
    ).toBeDefined();
    sim.faults.set({
      requests: [{ method: "GET", path: "/repos/acme/app/issues/*", status: 502 }],
    });
    expect((await api(sim, "GET", `/repositories/${repoId}/issues/1`)).status).toBe(502);
    // An unknown id is 404; GraphQL node(id) resolves repositories by node id.
    expect((await api(sim, "GET", "/repositories/999999")).status).toBe(404);
    const nodeId = sim.state.repo("acme", "app")!.nodeId;
    const node = await api(sim, "POST", "/graphql", "t", {
      query: `query { node(id: "${nodeId}") { ... on Repository { databaseId nameWithOwner } } }`,
    });
    expect(node.body).toEqual({
      data: { node: { databaseId: repoId, nameWithOwner: "acme/app" } },
    });
  });
});

describe("simulator moved and deleted issues, uninstalled App", () => {
  it("a transferred issue answers 301 to its new location; a deleted one 410", async () => {
    const { sim } = await seeded();
    await control(sim, "POST", "/repos", { owner: "acme", name: "lib" });
    const lib = sim.state.repo("acme", "lib")!;
    const moved = await control(sim, "POST", "/repos/acme/app/issues/1/transfer", {
      to: "acme/lib",
    });
    const res = await api(sim, "GET", "/repos/acme/app/issues/1");
    const url = `http://sim.test/repositories/${lib.id}/issues/${moved.body.number as number}`;
    expect(res).toEqual({
      status: 301,
      location: url,
      body: {
        message: "Moved Permanently",
        url,
        documentation_url: "https://docs.github.com/v3/#http-redirects",
      },
    });
    expect((await api(sim, "PATCH", "/repos/acme/app/issues/1", "t", { title: "x" })).status).toBe(
      307,
    );
    // Routes under a transferred issue are 404.
    expect((await api(sim, "GET", "/repos/acme/app/issues/1/comments")).status).toBe(404);
    // Following the redirect lands on the issue.
    expect((await api(sim, "GET", new URL(url).pathname)).body).toMatchObject({
      number: moved.body.number,
      url: `http://sim.test/repos/acme/lib/issues/${moved.body.number as number}`,
    });
    // Transferred on again: the old address follows to the last one; deleted there: 410.
    await control(sim, "POST", "/repos", { owner: "acme", name: "tools" });
    const again = await control(
      sim,
      "POST",
      `/repos/acme/lib/issues/${moved.body.number as number}/transfer`,
      { to: "acme/tools" },
    );
    const tools = sim.state.repo("acme", "tools")!;
    expect((await api(sim, "GET", "/repos/acme/app/issues/1")).location).toBe(
      `http://sim.test/repositories/${tools.id}/issues/${again.body.number as number}`,
    );
    await control(sim, "DELETE", `/repos/acme/tools/issues/${again.body.number as number}`);
    expect((await api(sim, "GET", "/repos/acme/app/issues/1")).status).toBe(410);
    await control(sim, "DELETE", "/repos/acme/app/issues/2");
    expect((await api(sim, "GET", "/repos/acme/app/issues/2")).status).toBe(410);
  });

  it("after uninstall: GET /repos/{o}/{r}/installation and GET /app/installations/{id} are 404", async () => {
    const { sim, installationId, jwt } = await seeded();
    const got = await api(sim, "GET", `/app/installations/${installationId}`, jwt);
    expect(got).toMatchObject({ status: 200, body: { id: installationId } });
    expect((await api(sim, "GET", "/repos/acme/app/installation", jwt)).status).toBe(200);
    await control(sim, "DELETE", `/installations/${installationId}`);
    expect((await api(sim, "GET", `/app/installations/${installationId}`, jwt)).status).toBe(404);
    expect((await api(sim, "GET", "/repos/acme/app/installation", jwt)).status).toBe(404);
  });
});
