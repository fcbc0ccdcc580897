/**
 * Node: resolves `cloudflare:workers` to the portable host's module (cloudflare-workers.ts) for
 * every module imported after `installNodeLoader()`, in this thread (module.registerHooks,
 * Node 22.15+ / 24). Import the Worker dynamically after calling it.
 */
import * as nodeModule from "node:module";

export const CLOUDFLARE_WORKERS = "cloudflare:workers";
export const shimUrl = new URL("./cloudflare-workers.ts", import.meta.url).href;

let installed = false;

export function installNodeLoader(): void {
  if (installed) return;
  const register = (
    nodeModule as unknown as {
      registerHooks?: (hooks: {
        resolve: (
          specifier: string,
          context: unknown,
          next: (specifier: string, context: unknown) => unknown,
        ) => unknown;
      }) => unknown;
    }
  ).registerHooks;
  if (!register) throw new Error("switchyard serve needs Node 22.15+ (module.registerHooks)");
  register({
    resolve: (specifier, context, next) =>
      specifier === CLOUDFLARE_WORKERS
        ? { url: shimUrl, shortCircuit: true }
        : next(specifier, context),
  });
  installed = true;
}
