// Projects (v2) in the simulator: an organization project with a single-select field, issues
// added as items and their values set through the control API, `projects_v2_item` webhooks to
// the organization's installation (no repository), and GraphQL reads of the field's values,
// refused without the `organization_projects` permission.
import { describe, expect, it } from "vitest";
import { createGitHubSimulator, type GitHubSimulator } from "../../../infra/github-sim/app.ts";
import { EXAMPLE_PROJECT_QUERY } from "../../../infra/github-sim/projects-graphql.ts";
import { call, control, deliveries } from "./sim-call.ts";

async function world() {
  const sim = createGitHubSimulator();
  const app = sim.state.createRepo("acme", "app");
  sim.state.createRepo("acme", "secret");
  for (const n of [1, 2]) sim.state.createIssue(app, { title: `Issue ${n}` }, "acme");
  sim.state.createIssue(sim.state.repo("acme", "secret")!, { title: "Hidden" }, "acme");
  // The App sees acme/app only: an item from acme/secret is redacted to it.
  const inst = sim.state.install("acme", ["app"], "octocat");
  const token = sim.tokens.mint(inst.id, sim.now()).token;
  const project = await control(sim, "POST", "/orgs/acme/projects", {
    number: 3,
    title: "Roadmap",
    field: "Priority",
    options: ["Urgent", "High", "Low"],
  });
  expect(project.status).toBe(201);
  await deliveries(sim);
  return { sim, app, inst, token, project: project.body };
}

const query = (sim: GitHubSimulator, token: string, variables: Record<string, unknown>) =>
  call(sim, "POST", "/graphql", {
    token,
    body: {
      query: EXAMPLE_PROJECT_QUERY,
      variables: { org: "acme", number: 3, field: "Priority", ...variables },
    },
  });

describe("projects_v2_item webhooks", () => {
  it("announce an item added with a value, changed (with and without from/to), cleared and removed", async () => {
    const { sim, app, inst, project } = await world();
    const item = await control(sim, "POST", "/orgs/acme/projects/3/items", {
      repo: "acme/app",
      issue: 1,
      value: "Urgent",
    });
    expect(item.body).toMatchObject({ issue: "acme/app#1", values: { Priority: "Urgent" } });
    const path = `/orgs/acme/projects/3/items/${item.body.id}/value`;
    await control(sim, "PUT", path, { value: "High", omitValues: true });
    await control(sim, "PUT", path, { value: "High" }); // unchanged: nothing
    await control(sim, "PUT", path, { value: null });
    await control(sim, "DELETE", `/orgs/acme/projects/3/items/${item.body.node_id}`);
    const ds = await deliveries(sim);
    expect(ds.map((d) => `${d.event}.${d.action}`)).toEqual([
      "projects_v2_item.created",
      "projects_v2_item.edited",
      "projects_v2_item.edited",
      "projects_v2_item.edited",
      "projects_v2_item.deleted",
    ]);
    const issue = app.issues.get(1)!;
    for (const d of ds) {
      expect(d.payload).not.toHaveProperty("repository");
      expect(d.payload.organization.login).toBe("acme");
      expect(d.payload.installation.id).toBe(inst.id);
      expect(d.payload.projects_v2_item).toMatchObject({
        id: item.body.id,
        node_id: item.body.node_id,
        project_node_id: project.id,
        content_node_id: issue.nodeId,
        content_type: "Issue",
      });
    }
    const [urgent, high] = project.fields[0].options;
    const field = {
      field_node_id: project.fields[0].id,
      field_type: "single_select",
      field_name: "Priority",
      project_number: 3,
    };
    expect(ds[1]!.payload.changes.field_value).toEqual({
      ...field,
      from: null,
      to: { id: urgent.id, name: "Urgent", color: "GRAY", description: "" },
    });
    expect(ds[2]!.payload.changes.field_value).toEqual(field);
    expect(ds[3]!.payload.changes.field_value).toMatchObject({
      from: { id: high.id, name: "High" },
      to: null,
    });
  });

  it("go only to an installation on the organization with organization_projects", async () => {
    const { sim, inst } = await world();
    await control(sim, "PUT", `/installations/${inst.id}/permissions`, {
      permissions: { organization_projects: null },
    });
    await control(sim, "POST", "/orgs/acme/projects/3/items", {
      repo: "acme/app",
      issue: 1,
      value: "Low",
    });
    expect(await deliveries(sim)).toEqual([]);
    await control(sim, "POST", "/orgs/beta/projects", { number: 1, field: "P", options: ["a"] });
    sim.state.createIssue(sim.state.createRepo("beta", "web"), { title: "x" }, "beta");
    await control(sim, "POST", "/orgs/beta/projects/1/items", {
      repo: "beta/web",
      issue: 1,
      value: "a",
    });
    expect(await deliveries(sim)).toEqual([]); // no installation on beta
  });

  it("refuses what the project does not have", async () => {
    const { sim } = await world();
    const bad = (body: Record<string, unknown>) =>
      control(sim, "POST", "/orgs/acme/projects/3/items", { repo: "acme/app", issue: 1, ...body });
    expect((await bad({ value: "Someday" })).status).toBe(422);
    expect((await bad({ field: "Size", value: "Urgent" })).status).toBe(422);
    expect((await bad({ issue: 99 })).status).toBe(404);
    expect(
      (await control(sim, "POST", "/orgs/acme/projects/9/items", { repo: "acme/app", issue: 1 }))
        .status,
    ).toBe(404);
    expect(
      (await control(sim, "POST", "/orgs/acme/projects", { number: 3, field: "x", options: ["y"] }))
        .status,
    ).toBe(422);
    expect((await control(sim, "POST", "/orgs/acme/projects", { field: "x" })).status).toBe(400);
  });
});

describe("GraphQL", () => {
  it("reads the project's field and each item's issue and single-select value", async () => {
    const { sim, app, token, project } = await world();
    await control(sim, "POST", "/orgs/acme/projects/3/items", {
      repo: "acme/app",
      issue: 2,
      value: "High",
    });
    await control(sim, "POST", "/orgs/acme/projects/3/items", { repo: "acme/app", issue: 1 });
    await control(sim, "POST", "/orgs/acme/projects/3/items", {
      repo: "acme/secret",
      issue: 1,
      value: "Urgent",
    });
    const r = await query(sim, token, {});
    expect(r.body.errors).toBeUndefined();
    const p = r.body.data.organization.projectV2;
    expect(p.id).toBe(project.id);
    expect(p.field).toEqual({
      id: project.fields[0].id,
      name: "Priority",
      options: project.fields[0].options,
    });
    expect(p.items.pageInfo.hasNextPage).toBe(false);
    const high = project.fields[0].options[1];
    expect(
      p.items.nodes.map((n: { content: unknown; fieldValueByName: unknown }) => [
        n.content,
        n.fieldValueByName,
      ]),
    ).toEqual([
      [
        {
          id: app.issues.get(2)!.nodeId,
          number: 2,
          repository: { databaseId: app.id, nameWithOwner: "acme/app" },
        },
        { name: "High", optionId: high.id },
      ],
      [
        {
          id: app.issues.get(1)!.nodeId,
          number: 1,
          repository: { databaseId: app.id, nameWithOwner: "acme/app" },
        },
        null,
      ],
      // acme/secret is outside the installation: its issue is redacted, its value still shows.
      [null, { name: "Urgent", optionId: project.fields[0].options[0].id }],
    ]);
    // An item's node id (from a webhook) reads the item back.
    const nodeQuery = `query($id: ID!) { node(id: $id) { ... on ProjectV2Item { type project { number } fieldValues(first: 5) { nodes { ... on ProjectV2ItemFieldSingleSelectValue { name } } } } } }`;
    const node = await call(sim, "POST", "/graphql", {
      token,
      body: { query: nodeQuery, variables: { id: p.items.nodes[0].id } },
    });
    expect(node.body.data.node).toEqual({
      type: "ISSUE",
      project: { number: 3 },
      fieldValues: { nodes: [{ name: "High" }] },
    });
  });

  it("answers FORBIDDEN without organization_projects, NOT_FOUND for an unknown project or organization", async () => {
    const { sim, inst, token } = await world();
    await control(sim, "PUT", `/installations/${inst.id}/permissions`, {
      permissions: { organization_projects: null },
    });
    const refused = await query(sim, token, {});
    expect(refused.status).toBe(200);
    expect(refused.body.data.organization.projectV2).toBeNull();
    expect(refused.body.errors).toMatchObject([
      {
        type: "FORBIDDEN",
        message: "Resource not accessible by integration",
        path: ["organization", "projectV2"],
      },
    ]);
    await control(sim, "PUT", `/installations/${inst.id}/permissions`, {
      permissions: { organization_projects: "read" },
    });
    const missing = await query(sim, token, { number: 4 });
    expect(missing.body.errors).toMatchObject([
      { type: "NOT_FOUND", message: "Could not resolve to a ProjectV2 with the number 4." },
    ]);
    const unknown = await query(sim, token, { org: "nowhere" });
    expect(unknown.body.data.organization).toBeNull();
    expect(unknown.body.errors).toMatchObject([{ type: "NOT_FOUND" }]);
  });

  it("shows a user token the projects of organizations it is an active member of", async () => {
    const { sim } = await world();
    await control(sim, "POST", "/users", {
      login: "ada",
      token: "ghu_ada",
      repos: { "acme/app": "read" },
    });
    expect((await query(sim, "ghu_ada", {})).body.errors).toMatchObject([{ type: "NOT_FOUND" }]);
    await control(sim, "POST", "/orgs/acme/members", { login: "ada", role: "member" });
    expect((await query(sim, "ghu_ada", {})).body.data.organization.projectV2.field.name).toBe(
      "Priority",
    );
  });
});
