#!/usr/bin/env node
// `npm run sim -- --seed FILE [--port P] [--webhook-url URL] [--webhook-secret S]
//   [--app-public-key FILE] [--app-id N] [--installation-id N] [--user-token T ...]`: the
// simulator by hand. `--user-token` names a token of the unrestricted user octocat (any other
// unknown token is answered 401, as GitHub answers it).
import { readFile } from "node:fs/promises";
import process from "node:process";
import { parseArgs } from "node:util";
import { seedSnapshot } from "./seed.ts";
import { startSimulatorServer } from "./serve.ts";

const { values } = parseArgs({
  options: {
    seed: { type: "string" },
    port: { type: "string", default: "8790" },
    host: { type: "string", default: "127.0.0.1" },
    "webhook-url": { type: "string" },
    "webhook-secret": { type: "string" },
    "app-public-key": { type: "string" },
    "app-id": { type: "string", default: "1" },
    "installation-id": { type: "string" },
    "user-token": { type: "string", multiple: true, default: [] },
  },
  strict: true,
});

function fail(message: string): never {
  process.stderr.write(`github-sim: ${message}\n`);
  process.exit(2);
}

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535)
  fail(`--port must be a port number, got ${values.port}`);
const appPublicKey = values["app-public-key"]
  ? await readFile(values["app-public-key"], "utf8")
  : null;
const running = await startSimulatorServer({
  port,
  host: values.host,
  appId: Number(values["app-id"]),
  appPublicKey,
  webhookUrl: values["webhook-url"] ?? null,
  webhookSecret: values["webhook-secret"],
  userTokens: values["user-token"],
});
let installationId: number | null = null;
if (values.seed) {
  let snapshot: unknown;
  try {
    snapshot = JSON.parse(await readFile(values.seed, "utf8"));
  } catch (error) {
    await running.close();
    fail(
      `cannot read seed ${values.seed}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  try {
    const result = seedSnapshot(running.sim.state, snapshot);
    const [owner, name] = result.repo.split("/") as [string, string];
    const id = values["installation-id"] ? Number(values["installation-id"]) : undefined;
    installationId = running.sim.state.install(owner, [name], "octocat", id).id;
    process.stderr.write(`seeded ${result.repo}: ${result.issues} issues, ${result.edges} edges\n`);
  } catch (error) {
    await running.close();
    fail(error instanceof Error ? error.message : String(error));
  }
}
process.stdout.write(
  `${JSON.stringify({ url: running.url, installationId, control: `${running.url}/_sim` })}\n`,
);
const stop = () => {
  running.close().finally(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
