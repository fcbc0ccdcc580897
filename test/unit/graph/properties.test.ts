import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scan } from "../../../shared/graph/scan.ts";
import { parseSnapshot } from "../../../shared/graph/snapshot.ts";
import { applyPlan } from "../../../shared/producer/apply.ts";
import { plan } from "../../../shared/producer/plan.ts";
import { snapshotArbitrary } from "../../support/graph-arbitraries.ts";

const modes = fc.record({
  mode: fc.constantFrom("events" as const, "all" as const),
  approvalLabel: fc.constantFrom(null, "idd:ready"),
  machine: fc.option(fc.string({ minLength: 1, maxLength: 8 }), { nil: undefined }),
});

describe("graph properties", () => {
  it("output does not depend on the order of issues or external entries", () => {
    fc.assert(
      fc.property(
        snapshotArbitrary(),
        modes,
        fc.infiniteStream(fc.nat()),
        (input, options, seeds) => {
          const snapshot = parseSnapshot(input);
          const shuffle = <T>(list: T[]) =>
            list
              .map((item) => ({ item, key: seeds.next().value }))
              .sort((a, b) => a.key - b.key)
              .map((x) => x.item);
          const shuffled = {
            ...snapshot,
            issues: shuffle([...snapshot.issues]),
            external: shuffle([...(snapshot.external ?? [])]),
          };
          expect(JSON.stringify(scan(shuffled, options))).toBe(
            JSON.stringify(scan(snapshot, options)),
          );
          expect(JSON.stringify(plan(shuffled, options))).toBe(
            JSON.stringify(plan(snapshot, options)),
          );
        },
      ),
    );
  });

  it("planning again after applying a plan yields an empty plan", () => {
    fc.assert(
      fc.property(snapshotArbitrary(), modes, (input, options) => {
        const snapshot = parseSnapshot(input);
        const first = plan(snapshot, options);
        const applied = applyPlan(snapshot, first, "2026-11-29T12:00:00Z");
        expect(plan(applied, options)).toEqual({ add: [], remove: [] });
      }),
    );
  });

  it("no issue is both blocked and ready, and every ready issue is open", () => {
    fc.assert(
      fc.property(snapshotArbitrary(), modes, (input, options) => {
        const snapshot = parseSnapshot(input);
        const result = scan(snapshot, options);
        const blocked = new Set(result.blocked.map((b) => b.number));
        const state = new Map(snapshot.issues.map((i) => [i.number, i.state]));
        for (const n of result.ready) {
          expect(blocked.has(n)).toBe(false);
          expect(state.get(n)).toBe("open");
        }
      }),
    );
  });

  it("the producer only adds to ready issues and only removes from carriers of the label", () => {
    fc.assert(
      fc.property(snapshotArbitrary(), modes, (input, options) => {
        const snapshot = parseSnapshot(input);
        const result = scan(snapshot, options);
        const labels = new Map(snapshot.issues.map((i) => [i.number, i.labels]));
        const { add, remove } = plan(snapshot, options);
        for (const change of add) {
          expect(result.ready).toContain(change.number);
          expect(labels.get(change.number)).not.toContain("agent:ready");
        }
        for (const change of remove) expect(labels.get(change.number)).toContain("agent:ready");
      }),
    );
  });
});

describe("the producer's adds in mode events", () => {
  it("are what a walk over every ready issue adds: kick targets and retried adds only", () => {
    // Mode `all` with an approval label no issue carries walks every ready issue and adds only
    // kick targets and retried adds: the plan mode `events` makes from those alone must match.
    const numbers = fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 8 });
    fc.assert(
      fc.property(
        snapshotArbitrary(),
        numbers,
        numbers,
        numbers,
        (input, retried, suppressed, excluded) => {
          const snapshot = parseSnapshot(input);
          const options = {
            retryAdds: new Map(retried.map((n) => [n, `kick: unblocked by #${n + 1}`])),
            suppressed: new Set(suppressed),
            excluded: new Set(excluded),
          };
          const walked = plan(snapshot, { ...options, mode: "all", approvalLabel: "no:such" });
          expect(plan(snapshot, { ...options, mode: "events" })).toEqual(walked);
        },
      ),
    );
  });
});

describe("explicit causes", () => {
  it("naming the closes inside the window gives the same kicks as the window", () => {
    fc.assert(
      fc.property(snapshotArbitrary(), (input) => {
        const snapshot = parseSnapshot(input);
        const from = Date.parse("2026-11-29T10:00:00Z");
        const to = Date.parse("2026-11-29T12:00:00Z");
        const inWindow = (at: string | null | undefined) =>
          !!at && Date.parse(at) > from && Date.parse(at) <= to;
        const causes = [
          ...snapshot.issues
            .filter((i) => i.state === "closed" && inWindow(i.closedAt))
            .map((i) => i.number),
          ...(snapshot.external ?? [])
            .filter((e) => e.state === "closed" && inWindow(e.closedAt))
            .map((e) => e.ref),
        ];
        expect(scan(snapshot, { causes }).kicks).toEqual(scan(snapshot).kicks);
      }),
    );
  });
});
