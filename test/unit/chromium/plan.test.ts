// Which browser the browser tests drive (infra/chromium/plan.ts), on machines described rather
// than real: a file system of a few paths, a platform, a user, an os-release.
import { describe, expect, it } from "vitest";
import {
  chromiumCandidates,
  type Machine,
  osFamily,
  planChromium,
} from "../../../infra/chromium/plan.ts";

const DEBIAN = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n';
const UBUNTU = 'NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\n';
const FEDORA = 'NAME="Fedora Linux"\nID=fedora\n';

type Over = Partial<Machine> & { files?: string[] };

/** A machine whose executables are `files` and whose directories list what `files` puts in them. */
function machine(over: Over = {}): Machine {
  const files = new Set(over.files ?? []);
  return {
    env: {},
    platform: "linux",
    home: "/home/dev",
    root: "/work/switchyard",
    isRoot: false,
    osRelease: DEBIAN,
    isExecutable: (path) => files.has(path),
    list: (dir) => [
      ...new Set(
        [...files]
          .filter((f) => f.startsWith(`${dir}/`))
          .map((f) => f.slice(dir.length + 1).split("/")[0]!),
      ),
    ],
    ...over,
  };
}

describe("planChromium", () => {
  it("takes SWITCHYARD_CHROMIUM first, and never another browser in its place", () => {
    const files = ["/usr/bin/chromium", "/opt/chrome/chrome"];
    expect(
      planChromium(machine({ files, env: { SWITCHYARD_CHROMIUM: "/opt/chrome/chrome" } })),
    ).toEqual({
      kind: "found",
      path: "/opt/chrome/chrome",
      from: "SWITCHYARD_CHROMIUM",
    });
    const wrong = planChromium(
      machine({ files, isRoot: true, env: { SWITCHYARD_CHROMIUM: "/opt/nope" } }),
    );
    expect(wrong.kind).toBe("missing");
    expect(wrong.kind === "missing" && wrong.message).toMatch(
      /^SWITCHYARD_CHROMIUM=\/opt\/nope is not an executable file/,
    );
    // Blank is unset.
    expect(planChromium(machine({ files, env: { SWITCHYARD_CHROMIUM: " " } }))).toMatchObject({
      path: "/usr/bin/chromium",
    });
  });

  it("then Debian's /usr/bin/chromium, before Playwright's cache and the usual paths", () => {
    const files = [
      "/usr/bin/chromium",
      "/home/dev/.cache/ms-playwright/chromium-1200/chrome-linux64/chrome",
      "/usr/bin/google-chrome",
    ];
    expect(planChromium(machine({ files }))).toEqual({
      kind: "found",
      path: "/usr/bin/chromium",
      from: "Debian's chromium",
    });
  });

  it("finds Playwright's newest Chromium build, wherever PLAYWRIGHT_BROWSERS_PATH or XDG_CACHE_HOME put the cache", () => {
    const builds = (cache: string) => [
      `${cache}/chromium-999/chrome-linux/chrome`,
      `${cache}/chromium-1200/chrome-linux64/chrome`,
      `${cache}/chromium_headless_shell-1300/chrome-headless-shell-linux64/chrome-headless-shell`,
      `${cache}/firefox-1500/firefox/firefox`,
    ];
    const at = (cache: string, env: Machine["env"]) =>
      planChromium(machine({ files: [...builds(cache), "/usr/bin/google-chrome"], env }));
    expect(at("/home/dev/.cache/ms-playwright", {})).toEqual({
      kind: "found",
      path: "/home/dev/.cache/ms-playwright/chromium-1200/chrome-linux64/chrome",
      from: "Playwright's browser cache",
    });
    expect(at("/xdg/ms-playwright", { XDG_CACHE_HOME: "/xdg" })).toMatchObject({
      path: "/xdg/ms-playwright/chromium-1200/chrome-linux64/chrome",
    });
    expect(at("/srv/browsers", { PLAYWRIGHT_BROWSERS_PATH: "/srv/browsers" })).toMatchObject({
      path: "/srv/browsers/chromium-1200/chrome-linux64/chrome",
    });
    // Relative to the repository, and `0` for playwright-core's own folder, as Playwright has it.
    expect(at("/work/switchyard/browsers", { PLAYWRIGHT_BROWSERS_PATH: "browsers" })).toMatchObject(
      {
        path: "/work/switchyard/browsers/chromium-1200/chrome-linux64/chrome",
      },
    );
    const local = "/work/switchyard/node_modules/playwright-core/.local-browsers";
    expect(at(local, { PLAYWRIGHT_BROWSERS_PATH: "0" })).toMatchObject({
      path: `${local}/chromium-1200/chrome-linux64/chrome`,
    });
    // Only the older layout there: still found.
    expect(
      planChromium(
        machine({ files: ["/home/dev/.cache/ms-playwright/chromium-1100/chrome-linux/chrome"] }),
      ),
    ).toMatchObject({ path: "/home/dev/.cache/ms-playwright/chromium-1100/chrome-linux/chrome" });
  });

  it("then the usual Linux install paths: Chrome, Chromium under other names", () => {
    for (const path of [
      "/usr/bin/chromium-browser",
      "/usr/bin/google-chrome-stable",
      "/usr/bin/google-chrome",
      "/opt/google/chrome/chrome",
    ]) {
      expect(planChromium(machine({ files: [path], osRelease: FEDORA }))).toEqual({
        kind: "found",
        path,
        from: "a usual install path",
      });
    }
  });

  it("on macOS: Playwright's cache, then Chrome or Chromium in /Applications or ~/Applications", () => {
    const mac = (files: string[]) =>
      planChromium(machine({ platform: "darwin", home: "/Users/dev", osRelease: null, files }));
    const testing =
      "/Users/dev/Library/Caches/ms-playwright/chromium-1200/chrome-mac-arm64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing";
    const chrome = "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome";
    const mine = "/Users/dev/Applications/Chromium.app/Contents/MacOS/Chromium";
    expect(mac([chrome, testing])).toMatchObject({ path: testing });
    expect(mac([mine, chrome])).toMatchObject({ path: chrome });
    expect(mac([mine])).toMatchObject({ path: mine });
    // Linux paths mean nothing there.
    expect(mac(["/usr/bin/chromium"])).toEqual({
      kind: "missing",
      message:
        "No Chrome or Chromium for the browser tests: run `brew install --cask google-chrome`, or set SWITCHYARD_CHROMIUM to a Chrome or Chromium binary",
    });
  });

  it("as root on Debian or a system like it, with none found: install Debian's chromium", () => {
    for (const osRelease of [DEBIAN, UBUNTU]) {
      expect(planChromium(machine({ isRoot: true, osRelease }))).toEqual({
        kind: "install",
        command: ["apt-get", "install", "-y", "chromium"],
        path: "/usr/bin/chromium",
      });
    }
  });

  it("otherwise one line naming the command to run (never sudo run by us, never a download)", () => {
    const missing = (over: Over) => {
      const plan = planChromium(machine(over));
      expect(plan.kind).toBe("missing");
      const message = plan.kind === "missing" ? plan.message : "";
      expect(message).not.toContain("\n");
      return message;
    };
    expect(missing({ isRoot: false, osRelease: DEBIAN })).toBe(
      "No Chrome or Chromium for the browser tests: run `sudo apt-get install -y chromium`, or set SWITCHYARD_CHROMIUM to a Chrome or Chromium binary",
    );
    expect(missing({ isRoot: true, osRelease: FEDORA })).toContain("run `dnf install -y chromium`");
    expect(missing({ osRelease: FEDORA })).toContain("run `sudo dnf install -y chromium`");
    expect(missing({ osRelease: "ID=arch\n" })).toContain("`sudo pacman -S --noconfirm chromium`");
    expect(missing({ isRoot: true, osRelease: "ID=alpine\n" })).toContain("`apk add chromium`");
    expect(missing({ isRoot: true, osRelease: null })).toContain("`install Chrome or Chromium`");
    expect(missing({ platform: "win32", osRelease: null, files: ["/usr/bin/chromium"] })).toContain(
      "set SWITCHYARD_CHROMIUM",
    );
  });
});

describe("chromiumCandidates", () => {
  it("lists Debian's first and Playwright's builds newest first, on Linux", () => {
    const files = [
      "/home/dev/.cache/ms-playwright/chromium-1100/chrome-linux/chrome",
      "/home/dev/.cache/ms-playwright/chromium-1200/chrome-linux64/chrome",
    ];
    const paths = chromiumCandidates(machine({ files })).map((c) => c.path);
    expect(paths[0]).toBe("/usr/bin/chromium");
    const at = (p: string) => paths.indexOf(p);
    expect(at(files[1]!)).toBeGreaterThan(0);
    expect(at(files[1]!)).toBeLessThan(at(files[0]!));
    expect(at(files[0]!)).toBeLessThan(at("/usr/bin/google-chrome"));
  });
});

describe("osFamily", () => {
  it("reads ID and ID_LIKE, quoted or not", () => {
    expect(osFamily(DEBIAN)).toEqual(["debian"]);
    expect(osFamily(UBUNTU)).toEqual(["ubuntu", "debian"]);
    expect(osFamily('ID="rocky"\nID_LIKE="rhel centos fedora"\n')).toEqual([
      "rocky",
      "rhel",
      "centos",
      "fedora",
    ]);
    expect(osFamily(null)).toEqual([]);
  });
});
