#!/usr/bin/env node
// Prints the fleet API's description exactly as the Worker serves it: `GET /openapi.json`
// answered by the Worker's own app (functions/app.ts) on Node, with PUBLIC_URL from the
// environment. A child process of openapi-lint.test.ts, because the app's modules import
// `cloudflare:workers`, which only the portable host's module hook resolves outside workerd.
import process from "node:process";
import { installNodeLoader } from "../../functions/host/node-loader.ts";

/** The part of the Hono app used here (the app is typed for Workers: tsconfig.worker.json). */
interface App {
  request(url: string, init: RequestInit, env: object): Promise<Response>;
}

installNodeLoader();
// By URL, as functions/serve.ts loads the Worker: this Node-typed program does not compile it.
const appUrl = new URL("../../functions/app.ts", import.meta.url).href;
const { app } = (await import(appUrl)) as { app: App };
const env = process.env.PUBLIC_URL === undefined ? {} : { PUBLIC_URL: process.env.PUBLIC_URL };
const response = await app.request("http://127.0.0.1:8787/openapi.json", {}, env);
if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
process.stdout.write(await response.text());
