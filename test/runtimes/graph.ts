// shared/graph, shared/producer and shared/config under whichever runtime runs this file.
import assert from "node:assert/strict";
import { parseConfigYaml } from "../../shared/config/parse.ts";
import { DEFAULT_CONFIG } from "../../shared/config/schema.ts";
import { analyzeGraph } from "../../shared/graph/analyze.ts";
import { fnv1a32, rotateForMachine } from "../../shared/graph/hash.ts";
import { canonicalRef, compareRefs, parseCrossRepoRef, refKey } from "../../shared/graph/refs.ts";
import { renderScan, scan } from "../../shared/graph/scan.ts";
import { parseSnapshot } from "../../shared/graph/snapshot.ts";
import { applyPlan } from "../../shared/producer/apply.ts";
import { plan, planFromAnalysis } from "../../shared/producer/plan.ts";
import { ValidationError } from "../../shared/validation.ts";
import { loadGraphFixtures } from "../support/graph-fixtures.ts";
import type { Check } from "./harness.ts";

const fixtures = await loadGraphFixtures();

export const checks: Check[] = [
  ...fixtures.map((fixture) => ({
    name: `golden ${fixture.name}`,
    run() {
      const snapshot = parseSnapshot(fixture.snapshot);
      assert.deepEqual(scan(snapshot, fixture.options), fixture.scan);
      const analysis = analyzeGraph(snapshot, fixture.options);
      assert.deepEqual(renderScan(analysis), fixture.scan);
      const labelPlan = plan(snapshot, fixture.options);
      assert.deepEqual(labelPlan, fixture.plan);
      assert.deepEqual(planFromAnalysis(analysis, fixture.options), fixture.plan);
      const applied = applyPlan(snapshot, labelPlan, fixture.scan.now);
      assert.deepEqual(plan(applied, fixture.options), { add: [], remove: [] });
    },
  })),
  {
    name: "fnv1a32 reference vectors and rotation",
    run() {
      assert.equal(fnv1a32(""), 0x811c9dc5);
      assert.equal(fnv1a32("foobar"), 0xbf9cf968);
      assert.deepEqual(rotateForMachine([1, 2, 3, 4, 5], "alpha"), [3, 4, 5, 1, 2]);
    },
  },
  {
    name: "references",
    run() {
      assert.equal(canonicalRef("Acme/Rocket#4", "acme/rocket"), 4);
      assert.equal(canonicalRef("other/lib#4", "acme/rocket"), "other/lib#4");
      assert.equal(refKey("Other/Lib#4"), refKey("other/lib#4"));
      assert.deepEqual(parseCrossRepoRef("o/r#12"), { owner: "o", repo: "r", number: 12 });
      assert.equal(parseCrossRepoRef("o/r#0"), null);
      assert.deepEqual([`b/c#1`, 3, `a/b#2`, 1].sort(compareRefs), [1, 3, "a/b#2", "b/c#1"]);
    },
  },
  {
    name: "invalid snapshots name the first bad path",
    run() {
      assert.throws(
        () => parseSnapshot({ repo: "a/b", issues: [{ number: "one" }] }),
        (e: unknown) => e instanceof ValidationError && e.path === "issues[0].number",
      );
    },
  },
  {
    name: "config YAML",
    run() {
      assert.deepEqual(parseConfigYaml(""), { ok: true, config: DEFAULT_CONFIG });
      const bad = parseConfigYaml("queue:\n  mode: x\n");
      assert.equal(bad.ok, false);
      assert.match(bad.ok ? "" : bad.error, /queue\.mode/);
    },
  },
];
