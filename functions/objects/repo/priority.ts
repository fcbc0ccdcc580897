import { GitHubApiError } from "../../../shared/github/errors.ts";
import { splitRepo } from "../../../shared/github/fetch-snapshot.ts";
import { NODES_BATCH, readItemValues, readProjectPage } from "../../../shared/github/projects.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import { type ProjectItemNotice, readStamp } from "../../../shared/queue/project-item.ts";
import type { RepoContext } from "./context.ts";
import type { PriorityState } from "./priority-store.ts";
import type { RepoIdentity } from "./repo-store.ts";

// Priority from an organization project's single-select field in the RepoObject (config
// `priority.project`, spec 6.4): the `priority` schedule reads the project's items with a query
// of its own (never inside the issue pages: a missing permission cannot fail a reconcile), a
// bounded number of pages per alarm run from a persisted cursor, and re-reads single items whose
// webhook did not carry the value; `projects_v2_item` notices arrive through the
// InstallationObject (installation/project-items.ts). The ranks are shared/queue/priority.ts.

/** Pages of 100 items one alarm run reads before it re-arms itself. */
const PAGES_PER_RUN = 10;

/** What the graph API and the status page say about the project field. */
export interface PriorityView {
  labels: Record<string, number>;
  project: {
    number: number;
    field: string;
    state: PriorityState["state"];
    reason: string | null;
    readAt: string | null;
    /** Issues with an option of the field. */
    ranked: number;
  } | null;
}

function projectKey(c: RepoContext, identity: RepoIdentity): string | null {
  const project = c.store.config().priority.project;
  if (project === null) return null;
  return `${splitRepo(identity.fullName).owner}/${project.number}/${project.field}`;
}

/** Asks for a full read of the project field (the full reconcile, a config change). */
export function requestProjectRead(c: RepoContext, nowMs: number): void {
  const state = c.store.priority.state();
  if (c.store.config().priority.project === null && state.state === "unconfigured") return;
  if (state.run === null)
    c.store.priority.setState({ ...state, run: { startedMs: readStamp(nowMs), cursor: null } });
  c.schedules.at("priority", nowMs);
}

/** Why the project field cannot be read, from GitHub's refusal (null: a passing failure). */
function unreadable(error: unknown, key: string): string | null {
  if (!(error instanceof GitHubApiError)) {
    return error instanceof Error && /was not found/.test(error.message) ? error.message : null;
  }
  if (error.kind === "forbidden") {
    return "the installation lacks the organization permission organization_projects: read (grant it in the App's settings)";
  }
  if (error.kind === "not-found") return `project ${key} was not found: ${error.reason}`;
  return null;
}

/** The `priority` schedule: the full read (when asked for) a share at a time, then item re-reads. */
export async function runPriority(
  c: RepoContext,
  identity: RepoIdentity,
  nowMs: number,
): Promise<void> {
  const { store } = c;
  const key = projectKey(c, identity);
  const project = store.config().priority.project;
  let state = store.priority.state();
  if (key === null || project === null) {
    if (state.state !== "unconfigured") {
      store.transaction(() => {
        store.priority.clearAll();
        store.priority.setState({
          ...state,
          project: null,
          projectId: null,
          state: "unconfigured",
          reason: null,
          run: null,
        });
      });
      await c.installation().watchProject(identity.repoId, null);
    }
    return;
  }
  if (state.project !== key) {
    // Another project or field: what was read of the old one ranks nothing now.
    store.transaction(() => {
      store.priority.clearAll();
      state = {
        project: key,
        projectId: null,
        state: "pending",
        reason: null,
        readMs: null,
        run: { startedMs: readStamp(nowMs), cursor: null },
      };
      store.priority.setState(state);
    });
    await c.installation().watchProject(identity.repoId, null);
  }
  const client = c.client(`read the priority field of ${identity.fullName}`);
  const org = splitRepo(identity.fullName).owner;

  if (state.run !== null) {
    const run = state.run;
    let cursor = run.cursor;
    let projectId: string | null = state.projectId;
    for (let page = 0; page < PAGES_PER_RUN; page++) {
      let read: Awaited<ReturnType<typeof readProjectPage>>;
      try {
        read = await readProjectPage(
          client,
          { org, number: project.number, field: project.field },
          cursor,
        );
      } catch (error) {
        const reason = unreadable(error, key);
        if (reason === null) throw error;
        await turnOff(c, identity.repoId, key, reason, store.priority.state().projectId);
        return;
      }
      if (!read.fieldFound) {
        const reason = `project ${key.split("/").slice(0, 2).join("/")} has no single-select field ${project.field}`;
        await turnOff(c, identity.repoId, key, reason, read.projectId);
        return;
      }
      projectId = read.projectId;
      const last = read.next === null;
      const next = read.next;
      store.transaction(() => {
        for (const item of read.items) {
          if (item.repoId === identity.repoId)
            store.priority.set(item.number, item.itemId, item.option, run.startedMs);
        }
        if (!last) {
          store.priority.setState({
            ...store.priority.state(),
            projectId,
            run: { startedMs: run.startedMs, cursor: next },
          });
          return;
        }
        const cleared = store.priority.clearUnseen(run.startedMs);
        store.priority.setState({
          project: key,
          projectId,
          state: "on",
          reason: null,
          readMs: Date.now(),
          run: null,
        });
        store.audit("priority", { project: key, state: "on", cleared }, Date.now());
      });
      if (last) {
        await c.installation().watchProject(identity.repoId, projectId);
        break;
      }
      cursor = next;
      if (page === PAGES_PER_RUN - 1) {
        // The next share in the next alarm run: the other schedules get their turn between.
        c.schedules.at("priority", Date.now());
        return;
      }
    }
  }
  await rereadItems(c, identity, client, project.field);
}

/**
 * The project field cannot be read (a missing permission, no such project or field): its ranks
 * go, the state says why, and the installation stops handing this repository its notices.
 */
async function turnOff(
  c: RepoContext,
  repoId: number,
  key: string,
  reason: string,
  projectId: string | null,
): Promise<void> {
  const { store } = c;
  store.transaction(() => {
    store.priority.clearAll();
    store.priority.setState({
      ...store.priority.state(),
      projectId,
      state: "off",
      reason,
      readMs: Date.now(),
      run: null,
    });
    store.audit("priority", { project: key, state: "off", reason }, Date.now());
  });
  await c.installation().watchProject(repoId, null);
}

/** Items whose notice did not carry the value: read by id (100 a request). */
async function rereadItems(
  c: RepoContext,
  identity: RepoIdentity,
  client: ReturnType<RepoContext["client"]>,
  field: string,
): Promise<void> {
  const { store } = c;
  for (;;) {
    const state = store.priority.state();
    const due = store.priority.rereads(NODES_BATCH);
    if (due.length === 0 || state.state !== "on") return;
    const startedMs = readStamp(Date.now());
    const values = await readItemValues(
      client,
      due.map((d) => d.itemId),
      field,
    );
    store.transaction(() => {
      for (const v of values) {
        if (v.projectId === state.projectId && v.repoId === identity.repoId)
          store.priority.set(v.number, v.itemId, v.option, startedMs);
      }
      for (const d of due) store.priority.dropReread(d.itemId, d.atMs);
    });
  }
}

/**
 * A `projects_v2_item` notice the InstallationObject resolved to issue `number` here: applied
 * when it is about the configured project and field (a value it carries), or queued for a
 * re-read (a value it did not carry). Nothing is asked of GitHub on this path.
 */
export async function applyProjectItem(
  c: RepoContext,
  notice: ProjectItemNotice & { number: number },
): Promise<"applied" | "unchanged" | "ignored"> {
  const { store } = c;
  const project = store.config().priority.project;
  const state = store.priority.state();
  if (project === null || state.projectId !== notice.projectId || !c.active()) return "ignored";
  if (notice.fieldName !== null && notice.fieldName.toLowerCase() !== project.field.toLowerCase()) {
    return "ignored";
  }
  const nowMs = Date.now();
  const outcome = store.transaction(() => {
    if (!notice.value.known) {
      store.priority.addReread(notice.itemId, notice.atMs);
      c.schedules.at("priority", nowMs);
      return "applied" as const;
    }
    return store.priority.set(notice.number, notice.itemId, notice.value.option, notice.atMs)
      ? ("applied" as const)
      : ("unchanged" as const);
  });
  await c.schedules.rearm();
  return outcome;
}

/** The config's ranks and the project field's state, for the graph API and the status page. */
export function priorityView(c: RepoContext): PriorityView {
  const priority = c.store.config().priority;
  const state = c.store.priority.state();
  return {
    labels: priority.labels,
    project:
      priority.project === null
        ? null
        : {
            number: priority.project.number,
            field: priority.project.field,
            state: state.state === "unconfigured" ? "pending" : state.state,
            reason: state.reason,
            readAt: state.readMs === null ? null : formatInstant(state.readMs),
            ranked: c.store.priority.options().size,
          },
  };
}
