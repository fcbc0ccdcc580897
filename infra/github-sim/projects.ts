// Projects (v2) of organizations: projects with single-select fields, issues added to them as
// items, and the `projects_v2_item` webhooks GitHub sends as items change (created, edited
// with `changes.field_value`, deleted). GitHub sends these for organization projects only, to
// the organization's installation (with `organization_projects` permission, permissions.ts);
// they carry the organization and no repository. Owned by SimState (`state.projects`).
import { SimHttpError } from "./errors.ts";
import {
  nodeId,
  OPTION_COLORS,
  type SimIssue,
  type SimProject,
  type SimProjectField,
  type SimProjectItem,
  type SimProjectOption,
} from "./model.ts";
import { renderUser } from "./render.ts";
import type { SimState } from "./state.ts";

/** An option as `changes.field_value.from`/`to` carry it (GitHub's single-select option). */
function optionPayload(option: SimProjectOption) {
  return {
    id: option.id,
    name: option.name,
    color: option.color,
    description: option.description,
  };
}

export class ProjectsState {
  projects: SimProject[] = [];
  private readonly state: SimState;

  constructor(state: SimState) {
    this.state = state;
  }

  reset(): void {
    this.projects = [];
  }

  ofOrg(org: string): SimProject[] {
    return this.projects.filter((p) => p.org.toLowerCase() === org.toLowerCase());
  }

  project(org: string, number: number): SimProject | undefined {
    return this.ofOrg(org).find((p) => p.number === number);
  }

  requireProject(org: string, number: number): SimProject {
    const project = this.project(org, number);
    if (!project) throw new SimHttpError(404, `control API: ${org} has no project ${number}`);
    return project;
  }

  /** A project with single-select fields (options coloured in turn). No webhook. */
  create(
    org: string,
    input: {
      number?: number;
      title: string;
      fields: { name: string; options: string[] }[];
    },
    creator: string,
  ): SimProject {
    const number = input.number ?? Math.max(0, ...this.ofOrg(org).map((p) => p.number)) + 1;
    if (this.project(org, number))
      throw new SimHttpError(422, `control API: ${org} already has a project ${number}`);
    const now = this.state.now();
    const id = this.state.newId();
    const fields: SimProjectField[] = input.fields.map((f) => {
      const fieldId = this.state.newId();
      return {
        id: fieldId,
        nodeId: nodeId("PVTSSF", fieldId),
        name: f.name,
        options: f.options.map((name, i) => ({
          // Eight hex digits, as GitHub's option ids; distinct per simulator.
          id: ((this.state.newId() * 2654435761) >>> 0).toString(16).padStart(8, "0"),
          name,
          color: OPTION_COLORS[i % OPTION_COLORS.length]!,
          description: "",
        })),
        createdAt: now,
      };
    });
    const project: SimProject = {
      id,
      nodeId: nodeId("PVT", id),
      org,
      number,
      title: input.title,
      fields,
      items: [],
      creator,
      createdAt: now,
      updatedAt: now,
    };
    this.projects.push(project);
    return project;
  }

  field(project: SimProject, name: string | undefined): SimProjectField {
    const field =
      name === undefined && project.fields.length === 1
        ? project.fields[0]
        : project.fields.find((f) => f.name.toLowerCase() === name?.toLowerCase());
    if (!field)
      throw new SimHttpError(
        422,
        `control API: field: project ${project.number} has no field ${name ?? "(name one: it has several)"}`,
      );
    return field;
  }

  /** The item with this database id or node id. */
  requireItem(project: SimProject, ref: string): SimProjectItem {
    const item = project.items.find((i) => String(i.id) === ref || i.nodeId === ref);
    if (!item)
      throw new SimHttpError(404, `control API: project ${project.number} has no item ${ref}`);
    return item;
  }

  /** Adds `issue` (`projects_v2_item.created`); an issue already there is that item. */
  addItem(project: SimProject, issue: SimIssue, sender: string): SimProjectItem {
    const existing = project.items.find((i) => i.issueId === issue.id);
    if (existing) return existing;
    const id = this.state.newId();
    const now = this.state.now();
    const item: SimProjectItem = {
      id,
      nodeId: nodeId("PVTI", id),
      issueId: issue.id,
      contentNodeId: issue.nodeId,
      values: new Map(),
      creator: sender,
      createdAt: now,
      updatedAt: now,
    };
    project.items.push(item);
    this.emit("created", project, item, sender);
    return item;
  }

  /**
   * Sets (or with null clears) a single-select value: `projects_v2_item.edited` with
   * `changes.field_value` naming the field and, unless `omitValues` (GitHub leaves them out
   * of some deliveries), its `from` and `to` options. No webhook when nothing changes.
   */
  setValue(
    project: SimProject,
    item: SimProjectItem,
    field: SimProjectField,
    optionName: string | null,
    sender: string,
    opts: { omitValues?: boolean } = {},
  ): void {
    const option =
      optionName === null
        ? null
        : field.options.find((o) => o.name.toLowerCase() === optionName.toLowerCase());
    if (option === undefined)
      throw new SimHttpError(
        422,
        `control API: value: ${field.name} has no option ${optionName} (${field.options.map((o) => o.name).join(", ")})`,
      );
    const before = item.values.get(field.id);
    const from = before ? field.options.find((o) => o.id === before.optionId) : undefined;
    if ((from?.id ?? null) === (option?.id ?? null)) return;
    const now = this.state.now();
    if (option === null) item.values.delete(field.id);
    else
      item.values.set(field.id, {
        nodeId: before?.nodeId ?? nodeId("PVTFSV", this.state.newId()),
        optionId: option.id,
        createdAt: before?.createdAt ?? now,
        updatedAt: now,
      });
    item.updatedAt = now;
    project.updatedAt = now;
    const fieldValue: Record<string, unknown> = {
      field_node_id: field.nodeId,
      field_type: "single_select",
      field_name: field.name,
      project_number: project.number,
    };
    if (!opts.omitValues) {
      fieldValue.from = from ? optionPayload(from) : null;
      fieldValue.to = option ? optionPayload(option) : null;
    }
    this.emit("edited", project, item, sender, { field_value: fieldValue });
  }

  /** Removes the item (`projects_v2_item.deleted`). */
  deleteItem(project: SimProject, item: SimProjectItem, sender: string): void {
    project.items = project.items.filter((i) => i !== item);
    this.emit("deleted", project, item, sender);
  }

  private emit(
    action: string,
    project: SimProject,
    item: SimProjectItem,
    sender: string,
    changes?: Record<string, unknown>,
  ): void {
    const installation = this.state.installationOnAccount(project.org);
    if (!installation) return; // no App on the organization: nobody to tell
    const view = { ...item };
    this.state.onEvent({
      event: "projects_v2_item",
      action,
      repo: null,
      installation,
      sender,
      body: (base) => ({
        projects_v2_item: {
          id: view.id,
          node_id: view.nodeId,
          project_node_id: project.nodeId,
          content_node_id: view.contentNodeId,
          content_type: "Issue",
          creator: renderUser(base, view.creator, view.creator.endsWith("[bot]") ? "Bot" : "User"),
          created_at: view.createdAt,
          updated_at: view.updatedAt,
          archived_at: null,
        },
        ...(changes ? { changes } : {}),
      }),
    });
  }
}
