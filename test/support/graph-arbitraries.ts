import fc from "fast-check";
import type { SnapshotInput } from "../../shared/graph/snapshot.ts";

const NOW_MS = Date.parse("2026-11-29T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
/** Instants from 6 h before now to 1 h after, in whole minutes: crosses the 2 h window edges. */
const instant = fc.integer({ min: -360, max: 60 }).map((m) => iso(NOW_MS + m * 60_000));
const LABELS = [
  "agent:ready",
  "agent:hold",
  "agent:processing",
  "needs-human-confirm",
  "epic-managed",
  "epic:payments",
  "idd:ready",
  "bug",
];

/** Random snapshots of `min` to `max` issues with parents, blockers, labels and label events. */
export function snapshotArbitrary(max = 25, min = 1): fc.Arbitrary<SnapshotInput> {
  return fc.integer({ min, max }).chain((n) => {
    const ref = fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 1, max: n + 2 }) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: n }).map((k) => `acme/rocket#${k}`) },
      {
        weight: 2,
        arbitrary: fc.constantFrom("other/lib#1", "other/lib#2", "Other/Lib#2", "far/away#7"),
      },
    );
    const issue = (number: number) =>
      fc
        .record({
          closed: fc.boolean(),
          closedAt: instant,
          labels: fc.uniqueArray(fc.constantFrom(...LABELS), { maxLength: 3 }),
          parent: fc.option(ref, { nil: undefined }),
          blockedBy: fc.array(ref, { maxLength: 3 }),
          labelEvents: fc.array(
            fc.record({
              label: fc.constantFrom("agent:ready", "needs-human-confirm", "agent:processing"),
              action: fc.constantFrom("labeled" as const, "unlabeled" as const),
              createdAt: instant,
            }),
            { maxLength: 3 },
          ),
        })
        .map((r) => ({
          number,
          title: `Issue ${number}`,
          state: r.closed ? ("closed" as const) : ("open" as const),
          stateReason: r.closed ? ("completed" as const) : null,
          createdAt: "2026-11-01T00:00:00Z",
          updatedAt: "2026-11-20T00:00:00Z",
          closedAt: r.closed ? r.closedAt : null,
          labels: r.labels,
          parent: r.parent,
          blockedBy: r.blockedBy,
          labelEvents: r.labelEvents,
        }));
    return fc
      .record({
        issues: fc.tuple(...Array.from({ length: n }, (_, i) => issue(i + 1))),
        external: fc.uniqueArray(
          fc.record({
            ref: fc.constantFrom("other/lib#1", "other/lib#2", "far/away#7"),
            state: fc.constantFrom("open" as const, "closed" as const),
            closedAt: instant,
          }),
          { selector: (e) => e.ref, maxLength: 3 },
        ),
      })
      .map(({ issues, external }) => ({
        repo: "acme/rocket",
        now: "2026-11-29T12:00:00Z",
        issues,
        external: external.map((e) => ({
          ...e,
          closedAt: e.state === "closed" ? e.closedAt : null,
        })),
      }));
  });
}
