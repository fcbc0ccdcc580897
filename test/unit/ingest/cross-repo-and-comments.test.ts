// Issue 9, fix 8, the pure parts: comments read by REST become `comment` events (with
// `author_association`); the same comment applied again is no change (a full reconcile re-reading
// a marker known from its webhook corrects nothing); a cross-repository notice becomes an
// `external` event only for an issue a blocker edge names.
import { describe, expect, it } from "vitest";
import type { RestComment } from "../../../shared/github/comments.ts";
import {
  externalEventsFor,
  queueNotices,
  withoutDelivered,
} from "../../../shared/ingest/cross-repo.ts";
import { commentEvents } from "../../../shared/ingest/from-comments.ts";
import { mergeEvent, NO_ROWS, type Stored } from "../../../shared/ingest/merge-event.ts";

const stored = (extra: Partial<Stored> = {}): Stored => ({
  ...NO_ROWS,
  repo: "acme/app",
  watchedLabels: new Set(["agent:processing"]),
  closedSeq: 0,
  ...extra,
});

const rest = (id: number, body: string, updated = "2026-11-30T10:00:00Z"): RestComment => ({
  id,
  body,
  user: { login: "writer", type: "User" },
  author_association: "COLLABORATOR",
  created_at: "2026-11-30T10:00:00Z",
  updated_at: updated,
});

const MARKER =
  "<!-- claimed-by: idd-bot c-1 supersedes: none 2026-11-30T10:00:00Z branch: issue/1-x -->";

describe("comments read by REST", () => {
  it("become comment events with their association; only markers are kept", () => {
    const [marker, plain] = commentEvents(7, [rest(1, MARKER), rest(2, "looks good")]);
    expect(marker).toMatchObject({
      type: "comment",
      id: 1,
      number: 7,
      author: { login: "writer", type: "User" },
      association: "COLLABORATOR",
      body: MARKER,
    });
    expect(mergeEvent(plain!, stored()).change).toBeNull();
    const first = mergeEvent(marker!, stored());
    expect(first.change?.description).toBe("marker comment 1 on #7");
  });

  it("the same comment again changes nothing; an edit does", () => {
    const row = {
      id: 1,
      number: 7,
      author: "writer",
      authorType: "User",
      association: "COLLABORATOR",
      body: MARKER,
      createdAt: "2026-11-30T10:00:00Z",
      updatedMs: Date.parse("2026-11-30T10:00:00Z"),
    };
    const [again] = commentEvents(7, [rest(1, MARKER)]);
    expect(mergeEvent(again!, stored({ comments: [row] }))).toMatchObject({
      writes: [],
      change: null,
    });
    const [edited] = commentEvents(7, [
      rest(1, MARKER.replace("c-1", "c-2"), "2026-11-30T11:00:00Z"),
    ]);
    expect(mergeEvent(edited!, stored({ comments: [row] })).change).not.toBeNull();
  });
});

describe("cross-repository notices", () => {
  const delivery = {
    from: { repoId: 2, fullName: "Acme/Lib", installationId: 9 },
    notices: [
      {
        number: 1,
        state: "closed" as const,
        closedAt: "2026-11-30T10:00:00Z",
        at: "2026-11-30T10:00:00Z",
      },
      {
        number: 2,
        state: "closed" as const,
        closedAt: "2026-11-30T10:00:00Z",
        at: "2026-11-30T10:00:00Z",
      },
    ],
  };

  it("become external events, spelled as the blocker edge spells them, only for named issues", () => {
    const named = new Map([["acme/lib#1", "acme/lib#1"]]);
    expect(externalEventsFor(delivery, named)).toEqual([
      {
        type: "external",
        ref: "acme/lib#1",
        state: "closed",
        closedAt: "2026-11-30T10:00:00Z",
        at: "2026-11-30T10:00:00Z",
      },
    ]);
    expect(externalEventsFor(delivery, new Map())).toEqual([]);
  });

  it("queue one notice per issue, the latest last, bounded; a delivery drops only what it sent", () => {
    const n = (number: number, state: "open" | "closed", at: string) => ({
      number,
      state,
      closedAt: state === "closed" ? at : null,
      at,
    });
    const first = queueNotices(
      [],
      [n(1, "closed", "2026-11-30T10:00:00Z"), n(2, "closed", "2026-11-30T10:00:00Z")],
    );
    const reopened = queueNotices(first, [n(1, "open", "2026-11-30T11:00:00Z")]);
    expect(reopened.map((x) => [x.number, x.state])).toEqual([
      [2, "closed"],
      [1, "open"],
    ]);
    expect(
      queueNotices(reopened, [n(3, "closed", "2026-11-30T12:00:00Z")], 2).map((x) => x.number),
    ).toEqual([1, 3]);
    // #1 reopened after the delivery of its close was read: the reopen stays queued.
    expect(withoutDelivered(reopened, first)).toEqual([n(1, "open", "2026-11-30T11:00:00Z")]);
  });
});
