// Entry for `npm run test:runtimes`: the cross-runtime suite under whichever runtime runs it.
import process from "node:process";
import { checks as auth } from "./auth.ts";
import { checks as claims } from "./claims.ts";
import { checks as fleet } from "./fleet.ts";
import { checks as github } from "./github.ts";
import { checks as graph } from "./graph.ts";
import { runChecks } from "./harness.ts";
import { checks as idd } from "./idd.ts";
import { checks as ingest } from "./ingest.ts";
import { checks as status } from "./status.ts";

process.exitCode = await runChecks({ graph, idd, github, auth, fleet, claims, ingest, status });
