// Loading a snapshot (spec 3.1) into the simulator, and reading one back out of it. Seeding
// announces nothing: it sets up the world a test or the demo starts from.
import { compareRefs, type IssueRef } from "../../shared/graph/refs.ts";
import { parseSnapshot, type SnapshotInput } from "../../shared/graph/snapshot.ts";
import { nodeId, type SimIssue, type SimRepo } from "./model.ts";
import { SimHttpError, type SimState } from "./state.ts";

export interface SeedResult {
  repo: string;
  issues: number;
  edges: number;
  /** References that could not be seeded (a number missing from the snapshot). */
  skippedRefs: string[];
}

function splitRepo(fullName: string): [string, string] {
  const [owner, name] = fullName.split("/") as [string, string];
  return [owner, name];
}

export function seedSnapshot(state: SimState, input: unknown): SeedResult {
  const snapshot = parseSnapshot(input);
  const [owner, name] = splitRepo(snapshot.repo);
  const saved = state.onEvent;
  state.onEvent = () => {};
  try {
    const repo = state.createRepo(owner, name);
    const sender = "octocat";
    const externalState = new Map(snapshot.external?.map((e) => [e.ref.toLowerCase(), e]) ?? []);
    for (const issue of [...snapshot.issues].sort((a, b) => a.number - b.number)) {
      const created = state.createIssue(
        repo,
        {
          number: issue.number,
          title: issue.title,
          body: issue.body ?? null,
          labels: issue.labels,
          state: issue.state,
          stateReason: issue.stateReason,
          createdAt: issue.createdAt,
          updatedAt: issue.updatedAt,
          closedAt: issue.closedAt,
        },
        issue.author?.login ?? sender,
        false,
      );
      // A snapshot's comments (spec 3.1): posted as their authors, at their times, no events.
      for (const comment of issue.comments ?? []) {
        const id = state.newId();
        created.comments.push({
          id,
          nodeId: nodeId("IC", id),
          issueId: created.id,
          body: comment.body,
          user: comment.author.login,
          createdAt: comment.createdAt,
          updatedAt: comment.createdAt,
        });
      }
      for (const event of issue.labelEvents ?? []) {
        const label = state.ensureLabel(repo, event.label, sender, false);
        created.labelEvents.push({
          id: state.newId(),
          label: label.name,
          color: label.color,
          action: event.action,
          actor: event.actor ?? "ghost",
          createdAt: event.createdAt,
        });
      }
    }
    const skippedRefs: string[] = [];
    const resolve = (ref: IssueRef): SimIssue | undefined => {
      if (typeof ref === "number") return repo.issues.get(ref);
      const m = /^([^/]+)\/([^#]+)#(\d+)$/.exec(ref)!;
      const other = state.createRepo(m[1]!, m[2]!);
      const number = Number(m[3]);
      const found = other.issues.get(number);
      if (found) return found;
      const ext = externalState.get(ref.toLowerCase());
      return state.createIssue(
        other,
        {
          number,
          title: ref,
          state: ext?.state ?? "open",
          stateReason: ext?.state === "closed" ? "completed" : null,
          closedAt: ext?.closedAt ?? null,
        },
        sender,
        false,
      );
    };
    // GitHub refuses some edges (a parent of another owner, a duplicate); so does seeding.
    const tryEdge = (add: () => void): boolean => {
      try {
        add();
        return true;
      } catch (error) {
        if (error instanceof SimHttpError) return false;
        throw error;
      }
    };
    let edges = 0;
    for (const issue of snapshot.issues) {
      const child = repo.issues.get(issue.number)!;
      if (issue.parent !== undefined && issue.parent !== null) {
        const parent = resolve(issue.parent);
        if (parent && tryEdge(() => state.addSubIssue(parent, child, false, sender))) edges += 1;
        else skippedRefs.push(`#${issue.number} parent ${issue.parent}`);
      }
      for (const ref of issue.blockedBy ?? []) {
        const blocker = resolve(ref);
        if (blocker && tryEdge(() => state.addBlockedBy(child, blocker, sender))) edges += 1;
        else skippedRefs.push(`#${issue.number} blockedBy ${ref}`);
      }
    }
    // Edge changes touch updatedAt; the snapshot's timestamps are the truth.
    for (const issue of snapshot.issues) {
      const sim = repo.issues.get(issue.number)!;
      sim.updatedAt = issue.updatedAt;
      for (const b of sim.blockedBy) b.addedAt = issue.updatedAt;
    }
    return { repo: snapshot.repo, issues: snapshot.issues.length, edges, skippedRefs };
  } finally {
    state.onEvent = saved;
  }
}

function refFrom(repo: SimRepo, state: SimState, issue: SimIssue): IssueRef {
  const other = state.repoOf(issue);
  return other.id === repo.id ? issue.number : `${other.owner}/${other.name}#${issue.number}`;
}

/** The simulator's own view of a repository as a snapshot: what a correct fetch must return. */
export function exportSnapshot(
  state: SimState,
  owner: string,
  name: string,
  opts: { includeBody?: boolean; labelEventsFor?: (issue: SimIssue) => boolean } = {},
): SnapshotInput {
  const repo = state.requireRepo(owner, name);
  const external = new Map<
    string,
    { ref: string; state: "open" | "closed"; closedAt: string | null }
  >();
  const issues = [...repo.issues.values()]
    .sort((a, b) => a.number - b.number)
    .map((issue) => {
      const blockedBy = issue.blockedBy
        .map((b) => state.issuesById.get(b.issueId))
        .filter((i) => i !== undefined)
        .map((blocker) => {
          const ref = refFrom(repo, state, blocker);
          if (typeof ref === "string")
            external.set(ref, { ref, state: blocker.state, closedAt: blocker.closedAt });
          return ref;
        })
        .sort(compareRefs);
      const parent = issue.parentId === null ? undefined : state.issuesById.get(issue.parentId);
      const out: SnapshotInput["issues"][number] = {
        number: issue.number,
        title: issue.title,
        state: issue.state,
        stateReason: issue.stateReason,
        createdAt: issue.createdAt,
        updatedAt: issue.updatedAt,
        closedAt: issue.closedAt,
        labels: [...issue.labels].sort(),
        blockedBy,
      };
      if (parent) out.parent = refFrom(repo, state, parent);
      if (opts.includeBody) out.body = issue.body ?? "";
      if (opts.labelEventsFor?.(issue)) {
        out.labelEvents = issue.labelEvents.map((e) => ({
          label: e.label,
          action: e.action,
          actor: e.actor,
          createdAt: e.createdAt,
        }));
      }
      return out;
    });
  const snapshot: SnapshotInput = { repo: `${repo.owner}/${repo.name}`, issues };
  if (external.size > 0)
    snapshot.external = [...external.values()].sort((a, b) => (a.ref < b.ref ? -1 : 1));
  return snapshot;
}
