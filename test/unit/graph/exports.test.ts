// docs/graph.md lists what each module of shared/graph exports: the table names every export of
// every module, and nothing a module does not export.
import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { root } from "../../support/runtimes.ts";

const dir = `${root}shared/graph/`;

/** The names a module exports, read from its source (declarations and `export { ... }`). */
function exportsOf(source: string): string[] {
  const names = [
    ...source.matchAll(
      /^export (?:declare )?(?:const|let|function\*?|class|interface|type|enum) +([A-Za-z0-9_]+)/gm,
    ),
  ].map((m) => m[1]!);
  for (const m of source.matchAll(/^export (?:type )?\{([^}]*)\}/gm))
    for (const part of m[1]!.split(","))
      if (part.trim() !== "")
        names.push(
          part
            .trim()
            .replace(/^type /, "")
            .split(/ as /)
            .pop()!,
        );
  return names.sort();
}

/** The table of docs/graph.md: module file → the backticked names in its row. */
async function documented(): Promise<Map<string, string[]>> {
  const doc = await readFile(`${root}docs/graph.md`, "utf8");
  const section = doc.slice(doc.indexOf("## What `shared/graph` exports"));
  const rows = new Map<string, string[]>();
  for (const line of section.split("\n")) {
    const m = /^\|\s*`([a-z-]+\.ts)`\s*\|(.*)\|$/.exec(line.trim());
    if (m) rows.set(m[1]!, [...m[2]!.matchAll(/`([A-Za-z0-9_]+)`/g)].map((n) => n[1]!).sort());
  }
  return rows;
}

describe("docs/graph.md: what shared/graph exports", () => {
  it("has a row per module naming exactly its exports", async () => {
    const files = (await readdir(dir)).filter((f) => f.endsWith(".ts")).sort();
    const rows = await documented();
    expect([...rows.keys()].sort()).toEqual(files);
    for (const file of files) {
      const source = await readFile(`${dir}${file}`, "utf8");
      expect(rows.get(file), file).toEqual(exportsOf(source));
    }
  });
});
