// One request to an in-process simulator, as the simulator tests make them: a token (with
// either auth scheme) or any headers, a JSON body, and the answer's status, parsed body and
// headers.
import type { GitHubSimulator } from "../../../infra/github-sim/app.ts";

export const BASE = "http://sim.test";

export async function call(
  sim: GitHubSimulator,
  method: string,
  path: string,
  opts: { token?: string; scheme?: string; headers?: Record<string, string>; body?: unknown } = {},
) {
  const headers: Record<string, string> = { "content-type": "application/json", ...opts.headers };
  if (opts.token) headers.authorization = `${opts.scheme ?? "Bearer"} ${opts.token}`;
  const res = await sim.fetch(
    new Request(`${BASE}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    }),
  );
  const text = await res.text();
  // JSON.parse's `any`: the tests read GitHub's JSON freely.
  const body = text === "" ? null : JSON.parse(text);
  return { status: res.status, body, headers: res.headers };
}

/** A control API call (`/_sim/...`). */
export function control(sim: GitHubSimulator, method: string, path: string, body?: unknown) {
  return call(sim, method, `/_sim${path}`, body === undefined ? {} : { body });
}

/** The deliveries in the outbox, parsed, oldest first (the outbox is emptied). */
export async function deliveries(sim: GitHubSimulator) {
  return (await sim.webhooks.drain()).map((d) => ({
    event: d.event,
    action: d.action,
    payload: JSON.parse(d.body),
  }));
}
