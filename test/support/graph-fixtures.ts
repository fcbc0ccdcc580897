// Golden graph scenarios (test/fixtures/graph/*.json), read the same way on Node, Bun and Deno.
import { readdir, readFile } from "node:fs/promises";
import type { ScanResult } from "../../shared/graph/scan.ts";
import type { LabelPlan, PlanOptions } from "../../shared/producer/plan.ts";

export interface GraphFixture {
  name: string;
  description: string;
  options: PlanOptions;
  snapshot: unknown;
  scan: ScanResult;
  plan: LabelPlan;
}

const dir = new URL("../fixtures/graph/", import.meta.url);

export async function loadGraphFixtures(): Promise<GraphFixture[]> {
  const names = (await readdir(dir)).filter((f) => f.endsWith(".json")).sort();
  return Promise.all(
    names.map(async (file) => {
      const doc = JSON.parse(await readFile(new URL(file, dir), "utf8"));
      return { name: file.replace(/\.json$/, ""), ...doc } as GraphFixture;
    }),
  );
}
