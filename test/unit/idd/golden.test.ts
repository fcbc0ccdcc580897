import { describe, expect, it } from "vitest";
import {
  IDD_AREAS,
  loadIddFixtures,
  runIddFixture,
  subsetMismatches,
} from "../../runtimes/idd-fixtures.ts";

const fixtures = await loadIddFixtures();

describe.each(IDD_AREAS)("golden %s fixtures", (area) => {
  const cases = fixtures.filter((f) => f.area === area);

  it("has cases", () => {
    expect(cases.length).toBeGreaterThan(5);
  });

  it.each(cases.map((f) => [f.name, f] as const))("%s", (_, fixture) => {
    expect(subsetMismatches(runIddFixture(fixture), fixture.expected)).toEqual([]);
  });
});

describe("subsetMismatches", () => {
  it("reports a differing nested value with its path", () => {
    expect(subsetMismatches({ a: [{ b: 1 }] }, { a: [{ b: 2 }] })).toEqual([
      "$.a[0].b: expected 2, got 1",
    ]);
  });

  it("requires arrays of the same length", () => {
    expect(subsetMismatches([1, 2], [1])).toHaveLength(1);
  });

  it("ignores keys the expectation leaves out", () => {
    expect(subsetMismatches({ a: 1, b: 2 }, { a: 1 })).toEqual([]);
  });
});
