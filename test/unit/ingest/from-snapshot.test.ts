// What a completed full reconcile decides from what it recorded: removals of the stored issues
// it did not see, and where the next incremental listing starts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  missingIssueEvents,
  sinceAfterFull,
  unseenIssueRemovals,
} from "../../../shared/ingest/from-snapshot.ts";

const AT = "2026-11-29T12:00:00Z";
const START = Date.parse(AT);

describe("unseenIssueRemovals", () => {
  it("removes an unseen issue unless it changed after the run began", () => {
    expect(
      unseenIssueRemovals(
        [
          { number: 1, updatedMs: START - 1 },
          { number: 2, updatedMs: START },
          { number: 3, updatedMs: START + 5_000 },
        ],
        START,
        AT,
      ),
    ).toEqual([{ type: "issue-removed", number: 1, at: AT }]);
  });

  it("agrees with the in-memory rule on any stored and seen sets (property)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({ number: fc.integer({ min: 1, max: 200 }), updatedMs: fc.integer() }),
          { selector: (s) => s.number },
        ),
        fc.uniqueArray(fc.integer({ min: 1, max: 200 })),
        fc.integer(),
        (stored, seen, startMs) => {
          const fetched = new Set(seen);
          const unseen = stored.filter((s) => !fetched.has(s.number));
          expect(unseenIssueRemovals(unseen, startMs, AT)).toEqual(
            missingIssueEvents(stored, fetched, startMs, AT),
          );
        },
      ),
    );
  });
});

describe("sinceAfterFull", () => {
  it("starts at the newest update seen when it is older than the margin before the start", () => {
    const newest = START - 3_600_000;
    expect(sinceAfterFull(START, newest, 60_000)).toBe(newest);
  });

  it("never starts later than the margin before the run began (whole seconds)", () => {
    expect(sinceAfterFull(START + 500, START, 60_000)).toBe(START - 60_000);
    expect(sinceAfterFull(START + 500, null, 60_000)).toBe(START - 60_000);
  });
});
