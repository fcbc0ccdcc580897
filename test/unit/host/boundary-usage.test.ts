// The Worker's code asks the platform only for what the portable host implements
// (functions/host/boundary.ts): a new use of, say, `ctx.storage.get` or another export of
// `cloudflare:workers` fails here first, instead of only under `switchyard serve`.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../../../", import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return path === "functions/host" || path === "functions/cli" ? [] : sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const files = sources("functions").map((path) => ({
  path,
  text: readFileSync(join(root, path), "utf8"),
}));

const uses = (pattern: RegExp) =>
  new Set(files.flatMap((f) => [...f.text.matchAll(pattern)].map((m) => m[1]!)));

describe("the Worker's use of the platform", () => {
  it("imports only DurableObject from cloudflare:workers", () => {
    const imported = files.flatMap((f) =>
      [...f.text.matchAll(/import\s*\{([^}]*)\}\s*from\s*"cloudflare:workers"/g)].flatMap((m) =>
        m[1]!
          .split(",")
          .map((s) => s.trim().replace(/^type\s+/, ""))
          .filter(Boolean),
      ),
    );
    expect(new Set(imported)).toEqual(new Set(["DurableObject"]));
  });

  it("uses only the storage members the portable host implements", () => {
    // `exec`: functions/objects/sql.ts names its SqlStorage parameter `storage`.
    const allowed = ["sql", "exec", "transactionSync", "getAlarm", "setAlarm", "deleteAlarm"];
    for (const member of uses(/\bstorage\.(\w+)/g)) expect(allowed).toContain(member);
  });

  it("uses only the object state members the portable host implements", () => {
    const allowed = ["storage", "blockConcurrencyWhile", "id", "waitUntil"];
    const objectFiles = files.filter((f) => /extends DurableObject\b/.test(f.text));
    expect(objectFiles.length).toBeGreaterThanOrEqual(4);
    for (const f of objectFiles) {
      for (const m of f.text.matchAll(/\b(?:this\.)?ctx\.(\w+)/g)) expect(allowed).toContain(m[1]);
    }
  });

  it("reads SQL cursors only through the methods the portable host implements", () => {
    const allowed = ["toArray", "one", "raw", "next", "columnNames", "rowsRead", "rowsWritten"];
    // `.exec(...)` (arguments with up to two levels of parentheses) followed, possibly on the
    // next line, by a member access.
    const used = uses(/\.exec(?:<[^>]*>)?\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\s*\.(\w+)/g);
    expect(used.size).toBeGreaterThan(0); // the pattern still finds the cursor reads
    for (const member of used) expect(allowed).toContain(member);
  });
});
