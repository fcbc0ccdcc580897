// Random changes to a stored graph, applied two ways: to a `CompactGraph` in place, and to a
// plain model of the stored rows that renders the snapshot `GraphReads.snapshot` would read
// (rows of absent issues kept, label events ordered by time then action). The compact
// representation must answer what the plain scan of that snapshot answers, after every change.
import fc from "fast-check";
import type { CompactGraph } from "../../shared/graph/compact.ts";
import { canonicalRef, type IssueRef, refKey } from "../../shared/graph/refs.ts";
import type { Snapshot, SnapshotIssue } from "../../shared/graph/snapshot.ts";

export const REPO = "acme/rocket";
export const NOW_MS = Date.parse("2026-11-29T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
const instantMs = fc.integer({ min: -360, max: 60 }).map((m) => NOW_MS + m * 60_000);
/** Few distinct times, so events of one label often tie (the later action then decides). */
const eventMs = fc.constantFrom(-200, -45, -20, -5).map((m) => NOW_MS + m * 60_000);
const LABELS = [
  "agent:ready",
  "agent:hold",
  "agent:processing",
  "agent:stuck",
  "needs-human-confirm",
  "epic:payments",
  "idd:ready",
  "bug",
];

export type CompactOp =
  | {
      op: "upsert";
      number: number;
      closed: boolean;
      closedMs: number;
      labels: string[];
      requires: string[];
    }
  | { op: "labels"; number: number; labels: string[] }
  | { op: "delete"; number: number }
  | { op: "parent"; child: number; parent: IssueRef | null }
  | { op: "delete-parents"; number: number }
  | { op: "blocker"; issue: number; blocker: IssueRef; present: boolean }
  | { op: "delete-blockers"; number: number }
  | { op: "external"; ref: string; closed: boolean; closedMs: number }
  | { op: "event"; number: number; label: string; action: "labeled" | "unlabeled"; ms: number }
  | { op: "delete-events"; number: number };

export function compactOpArbitrary(max = 12): fc.Arbitrary<CompactOp> {
  const number = fc.integer({ min: 1, max });
  const ref = fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 1, max: max + 2 }) as fc.Arbitrary<IssueRef> },
    { weight: 1, arbitrary: number.map((k) => `acme/rocket#${k}`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom("other/lib#1", "other/lib#2", "Other/Lib#2", "far/away#7"),
    },
  );
  const labels = fc.uniqueArray(fc.constantFrom(...LABELS), { maxLength: 3 });
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        op: fc.constant("upsert" as const),
        number,
        closed: fc.boolean(),
        closedMs: instantMs,
        labels,
        requires: fc.uniqueArray(fc.constantFrom("gpu", "docker"), { maxLength: 2 }),
      }),
    },
    { weight: 3, arbitrary: fc.record({ op: fc.constant("labels" as const), number, labels }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("delete" as const), number }) },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant("parent" as const),
        child: number,
        parent: fc.option(ref, { nil: null }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("delete-parents" as const), number }) },
    {
      weight: 5,
      arbitrary: fc.record({
        op: fc.constant("blocker" as const),
        issue: number,
        blocker: ref,
        present: fc.boolean(),
      }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("delete-blockers" as const), number }) },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant("external" as const),
        ref: fc.constantFrom(
          "other/lib#1",
          "other/lib#2",
          "Other/Lib#2",
          "far/away#7",
          `${REPO}#3`,
        ),
        closed: fc.boolean(),
        closedMs: instantMs,
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant("event" as const),
        number,
        label: fc.constantFrom("agent:ready", "needs-human-confirm", "agent:processing", "bug"),
        action: fc.constantFrom("labeled" as const, "unlabeled" as const),
        ms: eventMs,
      }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("delete-events" as const), number }) },
  );
}

export function applyToCompact(graph: CompactGraph, op: CompactOp): void {
  switch (op.op) {
    case "upsert":
      graph.upsertIssue({
        number: op.number,
        title: `Issue ${op.number}`,
        state: op.closed ? "closed" : "open",
        closedAt: op.closed ? iso(op.closedMs) : null,
        labels: op.labels,
        requires: op.requires,
      });
      return;
    case "labels":
      graph.setLabels(op.number, op.labels);
      return;
    case "delete":
      graph.deleteIssue(op.number);
      return;
    case "parent":
      graph.setParent(op.child, op.parent);
      return;
    case "delete-parents":
      graph.deleteParentsInvolving(op.number);
      return;
    case "blocker":
      graph.setBlocker(op.issue, op.blocker, op.present);
      return;
    case "delete-blockers":
      graph.deleteBlockersInvolving(op.number);
      return;
    case "external":
      graph.setExternal(op.ref, op.closed ? "closed" : "open", op.closed ? iso(op.closedMs) : null);
      return;
    case "event":
      graph.labelEvent(op.number, op.label, op.action, op.ms);
      return;
    case "delete-events":
      graph.deleteLabelEvents(op.number);
      return;
  }
}

/** The stored rows, kept as the SQL tables keep them. */
export class RowModel {
  issues = new Map<number, Omit<SnapshotIssue, "parent" | "blockedBy" | "labelEvents">>();
  requires = new Map<number, string[]>();
  parents = new Map<number, IssueRef>();
  blockers = new Map<number, IssueRef[]>();
  external = new Map<string, { ref: string; state: "open" | "closed"; closedAt: string | null }>();
  events = new Map<number, Array<{ label: string; action: "labeled" | "unlabeled"; ms: number }>>();

  apply(op: CompactOp): void {
    const canon = (r: IssueRef) => canonicalRef(r, REPO);
    switch (op.op) {
      case "upsert":
        this.issues.set(op.number, {
          number: op.number,
          title: `Issue ${op.number}`,
          state: op.closed ? "closed" : "open",
          stateReason: null,
          createdAt: "2026-11-01T00:00:00Z",
          updatedAt: "2026-11-20T00:00:00Z",
          closedAt: op.closed ? iso(op.closedMs) : null,
          labels: [...op.labels],
        });
        this.requires.set(op.number, op.requires);
        return;
      case "labels": {
        const issue = this.issues.get(op.number);
        if (issue) issue.labels = [...op.labels];
        return;
      }
      case "delete":
        this.issues.delete(op.number);
        return;
      case "parent":
        if (op.parent === null) this.parents.delete(op.child);
        else this.parents.set(op.child, canon(op.parent));
        return;
      case "delete-parents":
        this.parents.delete(op.number);
        for (const [child, parent] of this.parents)
          if (parent === op.number) this.parents.delete(child);
        return;
      case "blocker": {
        const list = this.blockers.get(op.issue) ?? [];
        const ref = canon(op.blocker);
        const at = list.indexOf(ref);
        if (op.present && at === -1) list.push(ref);
        if (!op.present && at !== -1) list.splice(at, 1);
        this.blockers.set(op.issue, list);
        return;
      }
      case "delete-blockers":
        this.blockers.delete(op.number);
        for (const [issue, list] of this.blockers)
          this.blockers.set(
            issue,
            list.filter((r) => r !== op.number),
          );
        return;
      case "external":
        this.external.set(refKey(canon(op.ref)), {
          ref: op.ref,
          state: op.closed ? "closed" : "open",
          closedAt: op.closed ? iso(op.closedMs) : null,
        });
        return;
      case "event": {
        const list = this.events.get(op.number) ?? [];
        list.push({ label: op.label, action: op.action, ms: op.ms });
        this.events.set(op.number, list);
        return;
      }
      case "delete-events":
        this.events.delete(op.number);
        return;
    }
  }

  snapshot(): Snapshot {
    const issues = [...this.issues.values()]
      .sort((a, b) => a.number - b.number)
      .map(
        (issue): SnapshotIssue => ({
          ...issue,
          labels: [...issue.labels],
          parent: this.parents.get(issue.number) ?? null,
          blockedBy: [...(this.blockers.get(issue.number) ?? [])],
          // As the rows are read: by time, then action (`labeled` before `unlabeled`).
          labelEvents: [...(this.events.get(issue.number) ?? [])]
            .sort((a, b) => a.ms - b.ms || (a.action < b.action ? -1 : a.action > b.action ? 1 : 0))
            .map((e) => ({ label: e.label, action: e.action, createdAt: iso(e.ms) })),
        }),
      );
    return { repo: REPO, issues, external: [...this.external.values()] };
  }
}
