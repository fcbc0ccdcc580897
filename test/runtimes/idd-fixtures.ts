// Golden IDD fixtures (test/fixtures/idd/<area>/<case>.json), read by the vitest suite and by
// the cross-runtime suite alike, so every golden case runs on Node, Bun and Deno.
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import {
  type BranchPatternInput,
  renderBranchPattern,
  slugify,
} from "../../shared/idd/branch-name.ts";
import { type ClaimOptionsInput, resolveClaims } from "../../shared/idd/claims.ts";
import {
  type Marker,
  type ReadMarkersOptions,
  readMarkers,
  renderMarker,
} from "../../shared/idd/markers.ts";
import { evaluateSweep } from "../../shared/idd/sweep.ts";

export const IDD_AREAS = ["markers", "claims", "branch-name", "sweep"] as const;
export type IddArea = (typeof IDD_AREAS)[number];

export interface IddFixture {
  area: IddArea;
  name: string;
  description: string;
  /** Where a transcribed vector comes from (`idd-skill@v0.7.0 tests/<file> › <case>`), if anywhere. */
  source: string | null;
  input: Record<string, unknown>;
  expected: unknown;
}

const ROOT = fileURLToPath(new URL("../fixtures/idd/", import.meta.url));

/**
 * Every fixture, by area then file name. A fixture without `description` or `expected`, or
 * with a `source` that is not a string, is an error.
 */
export async function loadIddFixtures(): Promise<IddFixture[]> {
  const fixtures: IddFixture[] = [];
  for (const area of IDD_AREAS) {
    const names = (await readdir(`${ROOT}${area}`)).filter((n) => n.endsWith(".json")).sort();
    for (const file of names) {
      const data = JSON.parse(await readFile(`${ROOT}${area}/${file}`, "utf8")) as Record<
        string,
        unknown
      >;
      const { description, expected, source = null, ...input } = data;
      if (typeof description !== "string" || description === "" || expected === undefined) {
        throw new Error(`${area}/${file}: a fixture needs a description and an expected value`);
      }
      if (source !== null && (typeof source !== "string" || source === "")) {
        throw new Error(`${area}/${file}: a fixture's source must be a non-empty string`);
      }
      fixtures.push({
        area,
        name: file.replace(/\.json$/, ""),
        description,
        source,
        input,
        expected,
      });
    }
  }
  return fixtures;
}

function attempt(run: () => unknown): unknown {
  try {
    return run();
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** Runs one fixture through the library; a thrown error becomes `{error: message}`. */
export function runIddFixture(fixture: IddFixture): unknown {
  const input = fixture.input;
  const options = (input.options ?? {}) as ReadMarkersOptions;
  switch (fixture.area) {
    case "markers":
      if ("marker" in input) {
        // Render direction: the canonical text, and that it reads back as exactly this marker.
        return attempt(() => {
          const text = renderMarker(input.marker as Marker);
          return { text, readBack: readMarkers(text, options) };
        });
      }
      return attempt(() => readMarkers(input.body as string, options));
    case "claims":
      return attempt(() => resolveClaims(input.comments, input.options as ClaimOptionsInput));
    case "branch-name":
      return attempt(() => ({
        slug: slugify(input.title as string),
        branch: renderBranchPattern(input as unknown as BranchPatternInput),
      }));
    case "sweep":
      return attempt(() => evaluateSweep(input.issue));
  }
}

/**
 * Golden comparison: every key the expected value names must match (objects recursively);
 * arrays must have the same length and match element-wise; everything else strictly equal.
 * Keys the fixture leaves out are not compared, so fixtures state what each case is about.
 */
export function subsetMismatches(actual: unknown, expected: unknown, path = "$"): string[] {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual))
      return [`${path}: expected an array, got ${JSON.stringify(actual)}`];
    if (actual.length !== expected.length) {
      return [
        `${path}: expected ${expected.length} items, got ${actual.length}: ${JSON.stringify(actual)}`,
      ];
    }
    return expected.flatMap((item, i) => subsetMismatches(actual[i], item, `${path}[${i}]`));
  }
  if (typeof expected === "object" && expected !== null) {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual)) {
      return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
    }
    return Object.entries(expected).flatMap(([key, value]) =>
      subsetMismatches((actual as Record<string, unknown>)[key], value, `${path}.${key}`),
    );
  }
  return Object.is(actual, expected)
    ? []
    : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
}

export function assertFixture(fixture: IddFixture): void {
  const mismatches = subsetMismatches(runIddFixture(fixture), fixture.expected);
  if (mismatches.length > 0) {
    throw new Error(
      `${fixture.area}/${fixture.name}: ${fixture.description}\n${mismatches.join("\n")}`,
    );
  }
}
