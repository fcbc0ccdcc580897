/**
 * Which runtime this process is, and how `cloudflare:workers` resolves to the portable host's
 * module on it: Node through a module resolve hook (node-loader.ts), Bun through a runtime
 * plugin's virtual module, Deno through the import map in deno.json (nothing to do at run time).
 */
import * as shim from "./cloudflare-workers.ts";
import { installNodeLoader } from "./node-loader.ts";

export type RuntimeName = "node" | "bun" | "deno";

export function runtimeName(): RuntimeName {
  if ("Bun" in globalThis) return "bun";
  if ("Deno" in globalThis) return "deno";
  return "node";
}

interface BunPluginBuilder {
  module(
    specifier: string,
    callback: () => { exports: Record<string, unknown>; loader: "object" },
  ): void;
}

/** Makes `import ... from "cloudflare:workers"` load the portable host's module. */
export function installCloudflareWorkersShim(): void {
  const runtime = runtimeName();
  if (runtime === "node") installNodeLoader();
  else if (runtime === "bun") {
    const bun = (
      globalThis as unknown as {
        Bun: { plugin(plugin: { name: string; setup(build: BunPluginBuilder): void }): void };
      }
    ).Bun;
    bun.plugin({
      name: "switchyard cloudflare:workers",
      setup(build) {
        build.module("cloudflare:workers", () => ({ exports: { ...shim }, loader: "object" }));
      },
    });
  }
}
