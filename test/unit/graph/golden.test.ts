import { describe, expect, it } from "vitest";
import { scan } from "../../../shared/graph/scan.ts";
import { parseSnapshot } from "../../../shared/graph/snapshot.ts";
import { applyPlan } from "../../../shared/producer/apply.ts";
import { plan } from "../../../shared/producer/plan.ts";
import { loadGraphFixtures } from "../../support/graph-fixtures.ts";

const fixtures = await loadGraphFixtures();

describe("golden graph scenarios (spec 3 and 4)", () => {
  it("has the scenarios the foundation issue names", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(20);
  });

  for (const fixture of fixtures) {
    describe(fixture.name, () => {
      const snapshot = parseSnapshot(fixture.snapshot);

      it("scan matches the expected output", () => {
        expect(scan(snapshot, fixture.options)).toEqual(fixture.scan);
      });

      it("producer plan matches the expected plan", () => {
        expect(plan(snapshot, fixture.options)).toEqual(fixture.plan);
      });

      it("re-planning after applying the plan is empty", () => {
        const applied = applyPlan(
          snapshot,
          plan(snapshot, fixture.options),
          scan(snapshot, fixture.options).now,
        );
        expect(plan(applied, fixture.options)).toEqual({ add: [], remove: [] });
      });

      it("output is byte-identical across runs and input orders", () => {
        const reversed = { ...snapshot, issues: [...snapshot.issues].reverse() };
        const first = JSON.stringify(scan(snapshot, fixture.options));
        expect(JSON.stringify(scan(reversed, fixture.options))).toBe(first);
        expect(JSON.stringify(scan(snapshot, fixture.options))).toBe(first);
      });
    });
  }
});
