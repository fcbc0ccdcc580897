/**
 * `cloudflare:workers` on the portable host: the loaders (node-loader.ts, the Bun plugin in
 * runtime.ts, Deno's import map) resolve that specifier here, so the object classes in
 * functions/objects/ run unchanged. `DurableObject` is all the Worker imports from it (`grep
 * cloudflare:workers functions`); on Cloudflare it is the same shape: a base holding ctx and env.
 */
import type { ObjectState } from "./boundary.ts";

export abstract class DurableObject<Env = unknown> {
  protected readonly ctx: ObjectState;
  protected readonly env: Env;

  constructor(ctx: ObjectState, env: Env) {
    this.ctx = ctx;
    this.env = env;
  }
}
