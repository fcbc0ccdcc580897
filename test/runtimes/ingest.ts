// shared/ingest's merge rule on Node, Bun and Deno: the same event gives the same writes.
import assert from "node:assert/strict";
import type { GraphEvent } from "../../shared/ingest/events.ts";
import { mergeEvent, NO_ROWS, rowsTouched, type Stored } from "../../shared/ingest/merge-event.ts";
import type { Check } from "./harness.ts";

const nothing: Stored = {
  ...NO_ROWS,
  repo: "acme/rocket",
  watchedLabels: new Set(["agent:ready"]),
  closedSeq: 4,
};

const closed: GraphEvent = {
  type: "issue",
  issue: {
    number: 3,
    id: 103,
    title: "Three",
    state: "closed",
    stateReason: "completed",
    createdAt: "2026-11-01T00:00:00Z",
    updatedAt: "2026-11-02T00:00:00Z",
    closedAt: "2026-11-02T00:00:00Z",
    body: null,
  },
};

export const checks: Check[] = [
  {
    name: "a close is numbered and stored; an issue without labels keeps the stored ones",
    run() {
      assert.deepEqual(rowsTouched(closed).issues, [3]);
      const first = mergeEvent(closed, nothing);
      assert.deepEqual(first.writes[0], { table: "meta", op: "closed-seq", value: 5 });
      assert.deepEqual(first.change, { description: "issue #3 updated", graph: true });
      const row = first.writes[1];
      assert.ok(row?.table === "issues" && row.op === "upsert");
      const later = mergeEvent(
        { ...closed, issue: { ...closed.issue, title: "3", updatedAt: "2026-11-03T00:00:00Z" } },
        { ...nothing, issues: [{ ...row.row, labels: ["agent:hold"] }], closedSeq: 5 },
      );
      const kept = later.writes[0];
      assert.ok(kept?.table === "issues" && kept.op === "upsert");
      assert.deepEqual(kept.row.labels, ["agent:hold"]);
      assert.equal(kept.row.closedSeq, 5);
    },
  },
  {
    name: "own references are stored as numbers",
    run() {
      const event: GraphEvent = {
        type: "blocked-by",
        issue: 1,
        blocker: "acme/rocket#2",
        present: true,
        at: "2026-11-02T00:00:00Z",
      };
      assert.deepEqual(mergeEvent(event, nothing).writes, [
        {
          table: "blockers",
          op: "upsert",
          row: { issue: 1, blocker: "2", present: true, atMs: Date.parse(event.at) },
        },
      ]);
    },
  },
];
