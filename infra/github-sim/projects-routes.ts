// The control API of organizations' Projects (v2): make a project with a single-select field,
// add issues to it, set and clear their values, remove them. Each change to an item emits the
// `projects_v2_item` webhook GitHub sends (projects.ts); GraphQL reads them (projects-graphql.ts).
import type { Context } from "hono";
import { z } from "zod";
import type { GitHubSimulator } from "./app.ts";
import { input, RepoName } from "./control.ts";
import type { SimProject, SimProjectItem } from "./model.ts";

const Actor = z.string().min(1).default("octocat");
const FieldSpec = z.object({ name: z.string().min(1), options: z.array(z.string().min(1)).min(1) });

export function registerProjectRoutes(sim: GitHubSimulator): void {
  const { app, state } = sim;
  const { projects } = state;

  const projectOf = (c: Context) =>
    projects.requireProject(c.req.param("org")!, Number(c.req.param("number")));
  const itemView = (project: SimProject, item: SimProjectItem) => {
    const issue = state.issuesById.get(item.issueId);
    const values: Record<string, string> = {};
    for (const field of project.fields) {
      const value = item.values.get(field.id);
      const option = field.options.find((o) => o.id === value?.optionId);
      if (option) values[field.name] = option.name;
    }
    return {
      id: item.id,
      node_id: item.nodeId,
      content_node_id: item.contentNodeId,
      issue: issue
        ? `${state.repoOf(issue).owner}/${state.repoOf(issue).name}#${issue.number}`
        : null,
      values,
    };
  };
  const projectView = (project: SimProject) => ({
    id: project.nodeId,
    databaseId: project.id,
    number: project.number,
    title: project.title,
    fields: project.fields.map((f) => ({
      id: f.nodeId,
      name: f.name,
      options: f.options.map((o) => ({ id: o.id, name: o.name })),
    })),
    items: project.items.map((i) => itemView(project, i)),
  });

  app.post("/_sim/orgs/:org/projects", async (c) => {
    const body = await input(
      c,
      z
        .object({
          number: z.number().int().positive().optional(),
          title: z.string().min(1).default("Roadmap"),
          // One field (`field` + `options`) or several (`fields`).
          field: z.string().min(1).optional(),
          options: z.array(z.string().min(1)).min(1).optional(),
          fields: z.array(FieldSpec).optional(),
          actor: Actor,
        })
        .refine(
          (b) => (b.field !== undefined) === (b.options !== undefined),
          "field and options go together",
        ),
    );
    const fields = [
      ...(body.field && body.options ? [{ name: body.field, options: body.options }] : []),
      ...(body.fields ?? []),
    ];
    const project = projects.create(c.req.param("org"), { ...body, fields }, body.actor);
    return c.json(projectView(project), 201);
  });

  app.get("/_sim/orgs/:org/projects/:number", (c) => c.json(projectView(projectOf(c))));

  app.post("/_sim/orgs/:org/projects/:number/items", async (c) => {
    const body = await input(
      c,
      z.object({
        repo: RepoName,
        issue: z.number().int().positive(),
        field: z.string().min(1).optional(),
        value: z.string().min(1).optional(),
        actor: Actor,
      }),
    );
    const project = projectOf(c);
    const [owner, name] = body.repo.split("/") as [string, string];
    const issue = state.requireIssue(state.requireRepo(owner, name), body.issue);
    const item = projects.addItem(project, issue, body.actor);
    if (body.value !== undefined)
      projects.setValue(project, item, projects.field(project, body.field), body.value, body.actor);
    return c.json(itemView(project, item), 201);
  });

  app.put("/_sim/orgs/:org/projects/:number/items/:item/value", async (c) => {
    const body = await input(
      c,
      z.object({
        field: z.string().min(1).optional(),
        value: z.string().min(1).nullable(),
        // GitHub leaves `from`/`to` out of some `edited` deliveries: a client must re-read then.
        omitValues: z.boolean().default(false),
        actor: Actor,
      }),
    );
    const project = projectOf(c);
    const item = projects.requireItem(project, c.req.param("item"));
    projects.setValue(project, item, projects.field(project, body.field), body.value, body.actor, {
      omitValues: body.omitValues,
    });
    return c.json(itemView(project, item));
  });

  app.delete("/_sim/orgs/:org/projects/:number/items/:item", async (c) => {
    const body = await input(c, z.object({ actor: Actor }));
    const project = projectOf(c);
    projects.deleteItem(project, projects.requireItem(project, c.req.param("item")), body.actor);
    return c.json({ deleted: true });
  });
}
