#!/usr/bin/env node
// `npm run chromium` (the first step of `npm test`): names the Chrome or Chromium the browser
// tests will drive; as root on a Debian-like system without one, installs Debian's `chromium`
// (the package lists are refreshed only if the install needs it). Anywhere else without one it
// stops with one line naming the command to run, before minutes of other tests.
import { spawnSync } from "node:child_process";
import process from "node:process";
import { thisMachine } from "./machine.ts";
import { type ChromiumPlan, PATH_VARIABLE, planChromium } from "./plan.ts";

const say = (line: string) => process.stdout.write(`${line}\n`);
const fail = (line: string): never => {
  process.stderr.write(`${line}\n`);
  process.exit(1);
};

function apt(args: readonly string[]): number {
  const run = spawnSync(args[0]!, args.slice(1), {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return run.status ?? 1;
}

let plan: ChromiumPlan = planChromium(thisMachine());
if (plan.kind === "install") {
  const command = plan.command.join(" ");
  say(
    `No Chrome or Chromium found: installing Debian's chromium for the browser tests (${command})`,
  );
  // A fresh machine may have no package lists yet: refresh them once, then try again.
  if (apt(plan.command) !== 0 && (apt(["apt-get", "update"]) !== 0 || apt(plan.command) !== 0)) {
    fail(`\`${command}\` failed: install Chrome or Chromium, or set ${PATH_VARIABLE} to one`);
  }
  plan = planChromium(thisMachine());
}
switch (plan.kind) {
  case "found":
    say(`Browser tests: ${plan.path} (${plan.from})`);
    break;
  case "missing":
    fail(plan.message);
    break;
  case "install":
    fail(`${plan.path} is still missing after \`${plan.command.join(" ")}\``);
}
