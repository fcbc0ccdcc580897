// The status page in a real browser: the machine's Chrome or Chromium (infra/chromium/plan.ts;
// never a downloaded one) driven by playwright-core, against `npm start`'s Worker and simulator.
// At 1280 px and 390 px wide: the login redirect of a private repository (through the
// simulator's OAuth flow and back), every node of the demo graph in the SVG with the legend, and
// a claim made through the API showing up on the page. A screenshot of each lands in .tmp/
// (gitignored) as a test artifact.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { thisMachine } from "../../infra/chromium/machine.ts";
import { planChromium } from "../../infra/chromium/plan.ts";
import { root } from "../../infra/local-stack.ts";
import { FleetClient } from "../../shared/fleet/client.ts";

// `npm test` finds the browser (or installs Debian's, as root) before any test runs; this file
// run alone looks again and names what is missing, without installing anything.
const plan = planChromium(thisMachine());
const CHROMIUM = plan.kind === "found" ? plan.path : null;
const MISSING =
  plan.kind === "missing"
    ? plan.message
    : "No Chrome or Chromium for the browser tests: run `npm run chromium` (as root it installs Debian's)";
const REPO = "acme/rocket";
/** The demo graph's issues (infra/demo/snapshot.json): every one must be drawn. */
const DEMO_ISSUES = Array.from({ length: 19 }, (_, i) => i + 1);
const SHOTS = join(root, ".tmp");
const WIDTHS = [1280, 390] as const;

let demo: ChildProcess;
let output = "";
let context: BrowserContext;
let profile: string;
let workerUrl: string;
let fleetKey: string;

/** Resolves with the first match of `pattern` in `npm start`'s output. */
function waitForOutput(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const m = output.match(pattern);
      if (m) {
        clearInterval(timer);
        clearTimeout(deadline);
        resolve(m);
      }
    };
    const timer = setInterval(check, 100);
    const deadline = setTimeout(() => {
      clearInterval(timer);
      reject(new Error(`npm start did not print ${pattern} in time; its output:\n${output}`));
    }, timeoutMs);
    check();
  });
}

beforeAll(async () => {
  // Fail, never skip: a machine without Chromium is told the one command that gets it (every
  // test below says it); nothing else is started.
  if (CHROMIUM === null) return;
  // `npm start` itself (infra/dev.ts), kept running after its story.
  demo = spawn(process.execPath, ["infra/dev.ts"], {
    cwd: root,
    env: { ...process.env, STATE_DIR: join(root, ".tmp/status-e2e-state") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  demo.stdout!.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  demo.stderr!.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  workerUrl = (await waitForOutput(/switchyard Worker\s+(http:\/\/\S+)/, 150_000))[1]!;
  await waitForOutput(/Running\. Ctrl-C stops/, 150_000);
  fleetKey = (await waitForOutput(/SWITCHYARD_TOKEN=(\S+)/, 1_000))[1]!;
  expect(output).toContain(`Status page: ${workerUrl}/repos/${REPO}`);

  await mkdir(SHOTS, { recursive: true });
  profile = await mkdtemp(join(tmpdir(), "switchyard-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    // The flags below make it headless; Playwright adds none of its own.
    headless: false,
    args: [
      "--no-sandbox",
      "--headless",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}, 200_000);

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  if (demo && demo.exitCode === null) {
    const exited = new Promise((resolve) => demo.once("exit", resolve));
    demo.kill("SIGTERM");
    await exited;
  }
}, 60_000);

async function pageAt(width: number): Promise<Page> {
  const page = await context.newPage();
  await page.setViewportSize({ width, height: width > 600 ? 900 : 844 });
  return page;
}

const shot = (page: Page, name: string, width: number) =>
  page.screenshot({ path: join(SHOTS, `status-page-${name}-${width}.png`), fullPage: true });

it("has a Chrome or Chromium to drive", () => {
  expect(CHROMIUM, MISSING).not.toBeNull();
});

describe.each(WIDTHS)("the status page at %i px", (width) => {
  beforeEach(() => {
    if (CHROMIUM === null) throw new Error(MISSING);
  });

  it("sends a private repository's visitor to the GitHub login and back", async () => {
    await context.clearCookies();
    const page = await pageAt(width);
    const response = await page.goto(`${workerUrl}/repos/${REPO}`);
    // The chain of redirects the browser followed: ours, GitHub's (the simulator's), ours.
    const chain: string[] = [];
    for (let r = response!.request(); r; r = r.redirectedFrom()!) {
      chain.unshift(new URL(r.url()).pathname + new URL(r.url()).search);
      if (!r.redirectedFrom()) break;
    }
    expect(chain[0]).toBe(`/repos/${REPO}`);
    expect(chain[1]).toBe(`/login?return_to=%2Frepos%2Facme%2Frocket`);
    expect(chain[2]).toMatch(/^\/login\/oauth\/authorize\?/);
    expect(chain[3]).toMatch(/^\/login\/callback\?code=/);
    expect(chain.at(-1)).toBe(`/repos/${REPO}`);
    expect(response!.status()).toBe(200);
    expect(await page.locator("header .who").textContent()).toMatch(/signed in as demo-admin/);
    await shot(page, "login", width);
    await page.close();
  });

  it("lists the signed-in user's installations and repositories on /", async () => {
    const page = await pageAt(width);
    await page.goto(`${workerUrl}/`);
    const links = await page
      .locator(".installation ul.repos a")
      .evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    expect(links).toEqual(["/repos/acme/rocket", "/repos/acme/sdk"]);
    expect(await page.locator(".installation a.org").getAttribute("href")).toBe("/orgs/acme");
    await shot(page, "home", width);
    await page.close();
  });

  it("shows the owner's page: both demo repositories and at most five next items", async () => {
    const page = await pageAt(width);
    await page.goto(`${workerUrl}/orgs/acme`);
    const repos = await page
      .locator("#repos tr.repo")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-repo")));
    expect(repos).toEqual(["acme/rocket", "acme/sdk"]);
    expect(await page.locator("#next").isVisible()).toBe(true);
    expect(await page.locator("#next tr.next").count()).toBeLessThanOrEqual(5);
    // Nothing wider than the page at 390 px but the tables' own scroll.
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await shot(page, "org", width);
    await page.close();
  });

  it("draws every node of the demo graph, with the legend", async () => {
    const page = await pageAt(width);
    await page.goto(`${workerUrl}/repos/${REPO}`);
    const svg = page.locator("svg.graph");
    expect(await svg.isVisible()).toBe(true);
    const numbers = await svg
      .locator("a.node")
      .evaluateAll((nodes) => nodes.map((n) => Number(n.getAttribute("data-number"))));
    expect(numbers.sort((a, b) => a - b)).toEqual(DEMO_ISSUES);
    // The legend: a shape per kind, all in view (it wraps; the picture may scroll sideways).
    const legend = page.locator("#graph .legend .legend-item");
    expect(await legend.count()).toBe(7);
    for (const kind of ["closed", "blocked", "ready", "claimed", "held", "stuck"]) {
      const item = page.locator(`#graph .legend-item[data-kind="${kind}"]`);
      expect(await item.isVisible()).toBe(true);
      const at = (await item.boundingBox())!;
      expect(at.x + at.width).toBeLessThanOrEqual(width);
    }
    // Each node links to its issue on GitHub (the simulator's web address here).
    const href = await svg.locator('a.node[data-number="6"]').getAttribute("href");
    expect(href).toMatch(/\/acme\/rocket\/issues\/6$/);
    // Readable: the picture is not shrunk below its minimum width on a phone (it scrolls).
    const box = (await svg.boundingBox())!;
    expect(box.width).toBeGreaterThanOrEqual(Math.min(width - 40, 500));
    await shot(page, "graph", width);
    await page.close();
  });

  it("shows a claim made through the API", async () => {
    const agent = new FleetClient({ server: workerUrl, repo: REPO, token: fleetKey });
    const agentId = `e2e-agent-${width}`;
    const grant = await agent.claimNext({ agentId, machine: "browser-test" });
    expect(grant).not.toBeNull();
    const n = grant!.issue.number;
    try {
      const page = await pageAt(width);
      await page.goto(`${workerUrl}/repos/${REPO}`);
      const row = page.locator(`#claims tr.claim[data-number="${n}"]`);
      const text = (await row.textContent()) ?? "";
      expect(text).toContain(agentId);
      expect(text).toContain(String(grant!.fence));
      expect(
        await page.locator(`svg.graph a.node[data-number="${n}"]`).getAttribute("data-kind"),
      ).toBe("claimed");
      await row.scrollIntoViewIfNeeded();
      await shot(page, "claim", width);
      await page.close();
    } finally {
      await agent.release(n, {
        claimId: grant!.claimId,
        fence: grant!.fence,
        outcome: "abandoned",
      });
    }
  });
});
