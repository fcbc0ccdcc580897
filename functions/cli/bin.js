#!/usr/bin/env node
// The `switchyard` executable as npm installs it (package.json "bin"). Plain JavaScript on
// purpose: Node loads its TypeScript stripper only for a module it has not cached yet, so with
// the compile cache on before the first .ts import, a repeated run skips stripping entirely
// (about 75 ms of a 150 ms `scan` of a small snapshot). bin.ts is the real entry; tests and
// other runtimes (Bun, Deno) run it directly.
import * as nodeModule from "node:module";

// Compiled (and type-stripped) modules are cached on disk, in the OS temp directory by default
// (NODE_COMPILE_CACHE moves it, NODE_DISABLE_COMPILE_CACHE=1 turns it off); a no-op where
// unsupported.
nodeModule.enableCompileCache?.();
await import("./bin.ts");
