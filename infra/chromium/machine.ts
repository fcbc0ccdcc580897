// This machine as plan.ts describes machines: its environment, platform, user, os-release and
// file system, read when asked.
import { accessSync, constants, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { fileURLToPath } from "node:url";
import type { Machine } from "./plan.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

function readOsRelease(): string | null {
  try {
    return readFileSync("/etc/os-release", "utf8");
  } catch {
    return null;
  }
}

export function thisMachine(): Machine {
  return {
    env: process.env,
    platform: process.platform,
    home: homedir(),
    root,
    isRoot: process.getuid?.() === 0,
    osRelease: readOsRelease(),
    isExecutable(path) {
      try {
        accessSync(path, constants.X_OK);
        return statSync(path).isFile();
      } catch {
        return false;
      }
    },
    list(dir) {
      try {
        return readdirSync(dir);
      } catch {
        return [];
      }
    },
  };
}
