// Which Chrome or Chromium the browser tests drive (test/e2e/status-page.test.ts), decided from
// a description of the machine rather than the machine itself, so every branch is testable on
// any machine. Never a browser download: playwright-core is told the path, and the only install
// it plans is Debian's package, as root (the caller runs it; machine.ts reads the machine).
import { posix } from "node:path";

/** What the decision needs to know about a machine. */
export interface Machine {
  env: Readonly<Record<string, string | undefined>>;
  /** `process.platform`. */
  platform: string;
  home: string;
  /** The repository root (Playwright's `PLAYWRIGHT_BROWSERS_PATH=0` keeps browsers under it). */
  root: string;
  /** Runs as root, so it may install packages itself (sudo is never called). */
  isRoot: boolean;
  /** The text of /etc/os-release, or null where there is none. */
  osRelease: string | null;
  /** True for an existing file the process may execute. */
  isExecutable(path: string): boolean;
  /** The names in a directory, or none when it does not exist. */
  list(dir: string): readonly string[];
}

export interface Candidate {
  path: string;
  /** Where the path came from, for the line that names the browser used. */
  from: string;
}

export type ChromiumPlan =
  | { kind: "found"; path: string; from: string }
  /** Debian's package, as root: `command`, then `path` is there. */
  | { kind: "install"; command: readonly string[]; path: string }
  /** Nothing to drive: one line naming what to run. */
  | { kind: "missing"; message: string };

export const DEBIAN_CHROMIUM = "/usr/bin/chromium";
export const APT_INSTALL = ["apt-get", "install", "-y", "chromium"] as const;

/** `SWITCHYARD_CHROMIUM`: a path the user chose, checked before anything else. */
export const PATH_VARIABLE = "SWITCHYARD_CHROMIUM";

const LINUX_PATHS = [
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome-stable",
  "/usr/bin/google-chrome",
  "/opt/google/chrome/chrome",
];
const MAC_APPS = [
  "Google Chrome.app/Contents/MacOS/Google Chrome",
  "Chromium.app/Contents/MacOS/Chromium",
];

/** Playwright's browser cache (its `registryDirectory`), or null on a platform it has none. */
export function playwrightCache(machine: Machine): string | null {
  const { env, platform, home, root } = machine;
  const chosen = env.PLAYWRIGHT_BROWSERS_PATH;
  if (chosen === "0") return posix.join(root, "node_modules/playwright-core/.local-browsers");
  if (chosen) return posix.resolve(root, chosen);
  if (platform === "linux")
    return posix.join(env.XDG_CACHE_HOME || posix.join(home, ".cache"), "ms-playwright");
  if (platform === "darwin") return posix.join(home, "Library/Caches/ms-playwright");
  return null;
}

/**
 * The Chromium builds in Playwright's cache, newest revision first: `chromium-<revision>/` with
 * the layouts Playwright has used (Chrome for Testing since 1.57; the older Chromium builds).
 */
function playwrightBuilds(machine: Machine, cache: string): string[] {
  const inside =
    machine.platform === "darwin"
      ? [
          "chrome-mac-arm64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
          "chrome-mac-x64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
          "chrome-mac/Chromium.app/Contents/MacOS/Chromium",
        ]
      : ["chrome-linux64/chrome", "chrome-linux-arm64/chrome", "chrome-linux/chrome"];
  const revisions = machine.list(cache).flatMap((name) => {
    const m = /^chromium-(\d+)$/.exec(name);
    return m ? [{ name, revision: Number(m[1]) }] : [];
  });
  revisions.sort((a, b) => b.revision - a.revision);
  return revisions.flatMap(({ name }) => inside.map((p) => posix.join(cache, name, p)));
}

/** Where to look, in order: Debian's package, Playwright's cache, the usual install paths. */
export function chromiumCandidates(machine: Machine): Candidate[] {
  const candidates: Candidate[] = [];
  if (machine.platform === "linux") {
    candidates.push({ path: DEBIAN_CHROMIUM, from: "Debian's chromium" });
  }
  const cache = playwrightCache(machine);
  if (cache !== null) {
    for (const path of playwrightBuilds(machine, cache))
      candidates.push({ path, from: "Playwright's browser cache" });
  }
  if (machine.platform === "linux") {
    for (const path of LINUX_PATHS) candidates.push({ path, from: "a usual install path" });
  }
  if (machine.platform === "darwin") {
    for (const dir of ["/Applications", posix.join(machine.home, "Applications")])
      for (const app of MAC_APPS)
        candidates.push({ path: posix.join(dir, app), from: "a usual install path" });
  }
  return candidates;
}

/** `ID` and `ID_LIKE` of an os-release text: `debian`, or `ubuntu debian`, .... */
export function osFamily(osRelease: string | null): string[] {
  if (osRelease === null) return [];
  const value = (key: string) =>
    new RegExp(`^${key}=(.*)$`, "m")
      .exec(osRelease)?.[1]
      ?.trim()
      .replace(/^["']|["']$/g, "") ?? "";
  return `${value("ID")} ${value("ID_LIKE")}`.split(/\s+/).filter(Boolean);
}

/** The command a person runs to get a Chromium on this kind of machine (sudo is theirs to add). */
function installAdvice(machine: Machine): string {
  const family = osFamily(machine.osRelease);
  const sudo = machine.isRoot ? "" : "sudo ";
  if (machine.platform === "darwin") return "brew install --cask google-chrome";
  if (family.includes("debian")) return `${sudo}${APT_INSTALL.join(" ")}`;
  if (family.includes("fedora") || family.includes("rhel")) return `${sudo}dnf install -y chromium`;
  if (family.includes("arch")) return `${sudo}pacman -S --noconfirm chromium`;
  if (family.includes("alpine")) return `${sudo}apk add chromium`;
  return "install Chrome or Chromium";
}

/** The browser to drive, the install to run first, or the one line saying what to do. */
export function planChromium(machine: Machine): ChromiumPlan {
  const chosen = machine.env[PATH_VARIABLE]?.trim();
  if (chosen) {
    // The user's choice is never silently replaced by another browser.
    return machine.isExecutable(chosen)
      ? { kind: "found", path: chosen, from: PATH_VARIABLE }
      : {
          kind: "missing",
          message: `${PATH_VARIABLE}=${chosen} is not an executable file: point it at a Chrome or Chromium binary, or unset it`,
        };
  }
  const found = chromiumCandidates(machine).find((c) => machine.isExecutable(c.path));
  if (found) return { kind: "found", ...found };
  if (
    machine.platform === "linux" &&
    machine.isRoot &&
    osFamily(machine.osRelease).includes("debian")
  ) {
    return { kind: "install", command: APT_INSTALL, path: DEBIAN_CHROMIUM };
  }
  return {
    kind: "missing",
    message: `No Chrome or Chromium for the browser tests: run \`${installAdvice(machine)}\`, or set ${PATH_VARIABLE} to a Chrome or Chromium binary`,
  };
}
