// The fleet API's description as the Worker serves it, through Redocly's recommended lint (the
// checks SDK generators and API catalogs rely on: servers, operationIds, a license...): clean,
// not even a warning. Redocly runs offline: redocly.yaml turns its usage report off.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root, spawnCollect } from "../support/runtimes.ts";

const REDOCLY = join(root, "node_modules/@redocly/cli/bin/cli.js");
const PUBLIC_URL = "https://switchyard.acme.workers.dev";

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location: unknown }>;
}

let dir: string;
let document: { servers?: unknown; paths: Record<string, Record<string, object>> };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "switchyard-openapi-"));
  const printed = await spawnCollect(process.execPath, ["test/contract/print-served-openapi.ts"], {
    PUBLIC_URL,
  });
  expect(printed.stderr).toBe("");
  expect(printed.code).toBe(0);
  document = JSON.parse(printed.stdout);
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `redocly lint` with the repository's redocly.yaml, on `doc` written to a file. */
async function lint(name: string, doc: object): Promise<LintReport> {
  const file = join(dir, name);
  await writeFile(file, JSON.stringify(doc, null, 2));
  const run = await spawnCollect(
    process.execPath,
    [REDOCLY, "lint", file, "--config", join(root, "redocly.yaml"), "--format", "json"],
    // Belt and braces beside redocly.yaml: no usage report, no update check.
    { REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_NOTIFICATIONS: "true" },
  );
  if (run.stdout.trim() === "") throw new Error(`redocly lint printed nothing: ${run.stderr}`);
  return JSON.parse(run.stdout) as LintReport;
}

describe("the fleet API's OpenAPI description", () => {
  it("passes Redocly's recommended lint without an error or a warning", async () => {
    const report = await lint("openapi.json", document);
    expect(report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it("would fail it without servers or an operationId (the lint sees what it should)", async () => {
    const broken = structuredClone(document);
    delete broken.servers;
    const claim = broken.paths["/v1/repos/{owner}/{repo}/issues/{n}/claim"]!.post as {
      operationId?: string;
    };
    delete claim.operationId;
    const report = await lint("broken.json", broken);
    const rules = report.problems.map((p) => `${p.severity} ${p.ruleId}`);
    expect(rules).toContain("error no-empty-servers");
    expect(rules).toContain("warn operation-operationId");
    expect(report.totals.errors).toBeGreaterThan(0);
  }, 60_000);
});
