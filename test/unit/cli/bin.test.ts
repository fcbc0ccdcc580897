// The installed executable (package.json "bin") and what a command loads. Startup time is
// measured in `npm run bench -- cli`; here: the bin runs and answers like bin.ts, and a snapshot
// scan loads none of the libraries only other commands need (the lazy loading that keeps the
// CLI's startup short).
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../support/cli.ts";
import { root, spawnCli, spawnCollect } from "../../support/runtimes.ts";

const node = `${root}node_modules/.bin/node`;
const demo = ["scan", "--snapshot", "infra/demo/snapshot.json", "--machine", "m1"];

/** Runs `node <entry> ...args` with a hook that prints the packages it loaded to stderr. */
async function loadedPackages(entry: string, args: string[]) {
  const hook = `
    import { registerHooks } from "node:module";
    const seen = new Set();
    registerHooks({ load(url, context, next) {
      const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url);
      if (m) seen.add(m[1]);
      return next(url, context);
    } });
    process.on("exit", () => process.stderr.write("LOADED " + JSON.stringify([...seen]) + "\\n"));
  `;
  const run = await spawnCollect(node, [
    "--import",
    `data:text/javascript,${encodeURIComponent(hook)}`,
    entry,
    ...args,
  ]);
  const line = run.stderr.split("\n").find((l) => l.startsWith("LOADED "));
  if (!line) throw new Error(`no LOADED line in ${run.stderr}`);
  return { ...run, packages: JSON.parse(line.slice("LOADED ".length)) as string[] };
}

describe("the installed switchyard executable", () => {
  it("is the package's bin and prints what bin.ts prints", async () => {
    const pkg = JSON.parse(await readFile(`${root}package.json`, "utf8"));
    expect(pkg.bin.switchyard).toBe("functions/cli/bin.js");
    const installed = await spawnCollect(node, [pkg.bin.switchyard, ...demo]);
    const direct = await spawnCli("node", demo);
    expect(installed.code).toBe(0);
    expect(installed.stderr).toBe("");
    expect(installed.stdout).toBe(direct.stdout);
    expect(JSON.parse(installed.stdout).repo).toBe("acme/rocket");
  });

  it("keeps its exit codes: 2 on bad usage, with the message", async () => {
    const run = await spawnCollect(node, ["functions/cli/bin.js", "scan", "--bogus"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--bogus");
  });

  it("serves its modules from Node's compile cache on a second run", async () => {
    // A fresh cache directory: the first run fills it, the second must take every module of a
    // scan from it (the compile cache is on before the first TypeScript module is imported).
    const cache = await mkdtemp(join(tmpdir(), "switchyard-cache-"));
    const env = { NODE_COMPILE_CACHE: cache, NODE_DEBUG_NATIVE: "COMPILE_CACHE" };
    const first = await spawnCollect(node, ["functions/cli/bin.js", ...demo], env);
    expect(first.code).toBe(0);
    const second = await spawnCollect(node, ["functions/cli/bin.js", ...demo], env);
    expect(second.code).toBe(0);
    const accepted = (file: string) =>
      second.stderr.includes(`V8 code cache for ESM file://${root}${file} was accepted`);
    for (const file of ["functions/cli/main.ts", "functions/cli/commands/scan.ts"])
      expect(accepted(file), file).toBe(true);
    expect(accepted("shared/graph/compact-analysis.ts")).toBe(true);
    expect(second.stderr).not.toMatch(/was rejected/);
  });

  it("runs without a compile cache too", async () => {
    const run = await spawnCollect(node, ["functions/cli/bin.js", ...demo], {
      NODE_DISABLE_COMPILE_CACHE: "1",
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).repo).toBe("acme/rocket");
  });
});

describe("lazy loading", () => {
  it("a snapshot scan with the default configuration loads no library, not even zod", async () => {
    const run = await loadedPackages("functions/cli/bin.js", demo);
    expect(run.code).toBe(0);
    expect(run.packages).toEqual([]);
  });

  it("a snapshot the fast check cannot vouch for loads zod, which words the error", async () => {
    const dir = await mkdtemp(join(tmpdir(), "switchyard-bin-"));
    const file = join(dir, "bad.json");
    await writeFile(file, JSON.stringify({ repo: "a/b", issues: [{ number: 1, title: 2 }] }));
    const run = await loadedPackages("functions/cli/bin.js", ["scan", "--snapshot", file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${file}: invalid snapshot at issues[0].title: `);
    expect(run.packages).toEqual(["zod"]);
  });

  it("help loads no command module's libraries", async () => {
    const run = await loadedPackages("functions/cli/bin.js", ["help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("scan --snapshot FILE");
    expect(run.packages).toEqual([]);
  });

  it("a command that needs a library still gets it (scan --config loads yaml)", async () => {
    const config = join(await mkdtemp(join(tmpdir(), "switchyard-bin-")), "switchyard.yml");
    await writeFile(config, "kicks:\n  windowHours: 3\n");
    const run = await loadedPackages("functions/cli/bin.js", [...demo, "--config", config]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).window.from).toBe("2026-11-29T09:00:00Z");
    expect(run.packages).toContain("yaml");
  });

  it("every graph, IDD and fleet command is in help, loads its module and parses its flags", async () => {
    const help = await runCli(["help"]);
    const listed = [...help.stdout.matchAll(/^ {2}([a-z-]+) /gm)].map((m) => m[1]!);
    for (const name of [
      "scan",
      "produce",
      "fetch-snapshot",
      "link",
      "branch-name",
      "claim-state",
      "classify",
      "queue",
      "claim",
      "heartbeat",
      "release",
      "comment",
      "work",
    ]) {
      expect(listed).toContain(name);
      const run = await runCli([name, "--bogus"]);
      expect(run.stderr, name).toContain(`switchyard ${name}: Unknown option '--bogus'`);
      expect(run.code, name).toBe(2);
    }
  });
});
