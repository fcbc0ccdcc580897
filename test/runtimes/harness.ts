// A minimal test harness that runs unchanged on Node, Bun and Deno, so the runtime-agnostic
// promise of shared/ is checked by executing it, not by reading it.
import process from "node:process";

export interface Check {
  name: string;
  run(): void | Promise<void>;
}

export async function runChecks(suites: Record<string, Check[]>): Promise<number> {
  const runtime =
    "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : `node ${process.version}`;
  let passed = 0;
  const failures: string[] = [];
  for (const [suite, checks] of Object.entries(suites)) {
    for (const check of checks) {
      try {
        await check.run();
        passed += 1;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        failures.push(`${suite} › ${check.name}\n    ${message.split("\n").join("\n    ")}`);
      }
    }
  }
  for (const failure of failures) process.stderr.write(`FAIL ${failure}\n`);
  process.stdout.write(`[${runtime}] ${passed} passed, ${failures.length} failed\n`);
  return failures.length === 0 && passed > 0 ? 0 : 1;
}
