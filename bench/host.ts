// Which host the Worker benchmarks run on: `BENCH_HOST=wrangler` (default, `wrangler dev`) or
// `node`, `bun`, `deno` (the portable host, `switchyard serve`; docs/self-hosting.md).
import process from "node:process";
import type { LocalHost } from "../infra/local-stack.ts";

export function benchHost(): LocalHost {
  const host = process.env.BENCH_HOST ?? "wrangler";
  if (!["wrangler", "node", "bun", "deno"].includes(host)) {
    throw new Error(`BENCH_HOST must be wrangler, node, bun or deno (got ${host})`);
  }
  return host as LocalHost;
}

/** How the report names the host. */
export function hostLabel(host: LocalHost): string {
  return host === "wrangler" ? "wrangler dev" : `switchyard serve on ${host}`;
}

/** The hosts a benchmark runs on: the one `BENCH_HOST` names, else `defaults`, one after the other. */
export function benchHosts(defaults: LocalHost[]): LocalHost[] {
  return process.env.BENCH_HOST === undefined ? defaults : [benchHost()];
}
