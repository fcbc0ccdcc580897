// Entry for `npm run test:runtimes`: the cross-runtime suite under whichever runtime runs it.
import process from "node:process";
import { checks as github } from "./github.ts";
import { runChecks } from "./harness.ts";

process.exitCode = await runChecks({ github });
