// The oracle (test/support/oracle: the graph's rules over issue objects, which the compact
// analysis is checked against) answers the golden scenarios itself, so a wrong oracle cannot
// make a wrong compact analysis pass.
import { describe, expect, it } from "vitest";
import { parseSnapshot } from "../../../shared/graph/snapshot.ts";
import { planFromAnalysis } from "../../../shared/producer/plan.ts";
import { loadGraphFixtures } from "../../support/graph-fixtures.ts";
import { analyzeGraph } from "../../support/oracle/analyze.ts";
import { oracleScan } from "../../support/oracle/scan.ts";

const fixtures = await loadGraphFixtures();

describe("the oracle on the golden graph scenarios", () => {
  for (const fixture of fixtures) {
    it(fixture.name, () => {
      const snapshot = parseSnapshot(fixture.snapshot);
      expect(oracleScan(snapshot, fixture.options)).toEqual(fixture.scan);
      expect(planFromAnalysis(analyzeGraph(snapshot, fixture.options), fixture.options)).toEqual(
        fixture.plan,
      );
    });
  }
});
