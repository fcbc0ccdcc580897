// `npm run setup` and `npm run deploy` as processes: the GitHub App manifest flow against the
// simulator over real HTTP (the local page, the simulator's new-App form, the callback, the
// code's conversion), with wrangler replaced at the process boundary by a stub that records its
// arguments and stdin (SWITCHYARD_WRANGLER); and wrangler.toml's environments checked by the
// real wrangler's dry run.
import { type ChildProcess, spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAppAuth } from "@octokit/auth-app";
import { decodeHTML } from "entities";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { convertedApp } from "../../infra/github-sim/manifest.ts";
import { type RunningSimulator, startSimulatorServer } from "../../infra/github-sim/serve.ts";
import { MANIFEST_EVENTS } from "../../infra/install/manifest.ts";
import { SETUP_SECRET_NAMES } from "../../infra/install/secrets.ts";
import { root } from "../../infra/local-stack.ts";

interface Call {
  args: string[];
  stdin: string;
}

/** A wrangler that records each call; `whoami` fails when FAKE_WRANGLER_LOGGED_OUT is set. */
const FAKE_WRANGLER = `#!/usr/bin/env node
const fs = require("node:fs");
const args = process.argv.slice(2);
const stdin = fs.readFileSync(0, "utf8");
fs.appendFileSync(process.env.FAKE_WRANGLER_LOG, JSON.stringify({ args, stdin }) + "\\n");
if (args[0] === "whoami") process.exit(process.env.FAKE_WRANGLER_LOGGED_OUT ? 1 : 0);
if (args[0] === "secret") console.log("Success! Uploaded secret " + args[2]);
if (args[0] === "deploy") {
  if (process.env.FAKE_WRANGLER_FAIL) { console.error("Authentication error"); process.exit(1); }
  console.log("Uploaded switchyard-" + args[2] + " (1.00 sec)");
  console.log("Deployed switchyard-" + args[2] + " triggers (0.50 sec)");
  console.log("  " + process.env.FAKE_DEPLOY_URL);
  console.log("  schedule: */15 * * * *");
}
`;

let sim: RunningSimulator;
let dir: string;
let fake: string;

beforeAll(async () => {
  sim = await startSimulatorServer({ port: 0 });
  dir = await mkdtemp(join(tmpdir(), "switchyard-setup-"));
  fake = join(dir, "wrangler");
  await writeFile(fake, FAKE_WRANGLER);
  await chmod(fake, 0o755);
});
afterAll(async () => {
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
  log: string;
  cwd: string;
}

let runs = 0;
/** A script of infra/install as a process, in a fresh working directory unless `cwd` is given. */
async function run(
  script: string,
  args: string[],
  env: Record<string, string> = {},
  cwd = join(dir, `run-${runs + 1}`),
): Promise<Run> {
  runs += 1;
  const log = join(dir, `calls-${runs}.jsonl`);
  await writeFile(log, "");
  await mkdir(cwd, { recursive: true });
  const child = spawn(process.execPath, [join(root, "infra/install", script), ...args], {
    cwd,
    env: { ...process.env, SWITCHYARD_WRANGLER: fake, FAKE_WRANGLER_LOG: log, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (c: string) => {
    out += c;
  });
  child.stderr?.setEncoding("utf8").on("data", (c: string) => {
    err += c;
  });
  const exit = new Promise<number | null>((resolve) => child.once("close", resolve));
  return { child, stdout: () => out, stderr: () => err, exit, log, cwd };
}

async function calls(r: Run): Promise<Call[]> {
  return (await readFile(r.log, "utf8"))
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Call);
}

async function pageUrl(r: Run): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const m = /Open (http:\/\/127\.0\.0\.1:\d+\/) in a browser/.exec(r.stdout());
    if (m) return m[1]!;
    if (r.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`setup did not start: ${r.stdout()}\n${r.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What a browser does: the form to GitHub (the simulator), its redirect back, the callback. */
async function createApp(
  page: string,
  formPath = "/settings/apps/new",
): Promise<{ callback: Response; manifest: unknown }> {
  const html = await (await fetch(page)).text();
  const action = decodeHTML(/<form action="([^"]+)" method="post">/.exec(html)![1]!);
  const manifest = decodeHTML(/name="manifest" value="([^"]+)"/.exec(html)![1]!);
  expect(action).toMatch(new RegExp(`^${sim.url}${formPath}\\?state=[0-9a-f]{32}$`));
  const confirmed = await fetch(action, {
    method: "POST",
    body: new URLSearchParams({ manifest }),
    redirect: "manual",
  });
  expect(confirmed.status).toBe(302);
  const back = new URL(confirmed.headers.get("location")!);
  expect(`${back.origin}/`).toBe(page);
  expect(back.pathname).toBe("/callback");
  // A callback that does not carry this run's state is refused and changes nothing.
  const forged = new URL(back);
  forged.searchParams.set("state", "forged");
  expect((await fetch(forged)).status).toBe(400);
  return { callback: await fetch(back), manifest: JSON.parse(manifest) };
}

/** The values that must never be printed (the App id is public), and each long line of the key. */
function secretValues(secrets: Record<string, string>): string[] {
  return Object.entries(secrets)
    .filter(([name]) => name !== "GITHUB_APP_ID")
    .flatMap(([, v]) => [v, ...v.split("\n").filter((l) => l.length > 40)]);
}

async function importablePkcs8(pem: string): Promise<boolean> {
  const der = Buffer.from(pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, ""), "base64");
  const key = await crypto.subtle.importKey(
    "pkcs8",
    Uint8Array.from(der),
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return key.type === "private";
}

describe("npm run setup (the GitHub App manifest flow)", () => {
  it("creates the App on the simulator and puts every secret with wrangler", async () => {
    const workerUrl = "https://switchyard-staging.acme.workers.dev";
    const r = await run("setup.ts", ["--url", workerUrl, "--api-url", sim.url, "--env", "staging"]);
    const page = await pageUrl(r);
    const { callback, manifest } = await createApp(page);
    expect(callback.status).toBe(200);
    expect(await callback.text()).toContain(`App ID ${sim.sim.appId}`);
    expect(await r.exit).toBe(0);
    expect(manifest).toMatchObject({
      name: "switchyard-staging-acme",
      hook_attributes: { url: `${workerUrl}/webhooks/github` },
      callback_urls: [`${workerUrl}/login/callback`],
      redirect_url: `${page}callback`,
      default_events: [...MANIFEST_EVENTS],
    });

    const made = await calls(r);
    expect(made[0]?.args).toEqual(["whoami", "--json"]);
    const puts = made.slice(1);
    expect(puts.map((c) => c.args)).toEqual(
      SETUP_SECRET_NAMES.map((name) => ["secret", "put", name, "--env", "staging"]),
    );
    const secrets = Object.fromEntries(puts.map((c) => [c.args[2]!, c.stdin]));
    const app = convertedApp(sim.sim)!;
    expect(secrets.GITHUB_APP_ID).toBe(String(sim.sim.appId));
    expect(secrets.GITHUB_WEBHOOK_SECRET).toBe(app.webhookSecret);
    expect(secrets.GITHUB_APP_CLIENT_ID).toBe(app.clientId);
    expect(secrets.GITHUB_APP_CLIENT_SECRET).toBe(app.clientSecret);
    expect(secrets.SESSION_SECRET).toMatch(/^[0-9a-f]{64}$/);
    const key = secrets.GITHUB_APP_PRIVATE_KEY!;
    expect(key.startsWith("-----BEGIN PRIVATE KEY-----\n")).toBe(true);
    expect(await importablePkcs8(key)).toBe(true);
    // The key is the App's: the simulator accepts an App JWT signed with it.
    const { token } = await createAppAuth({ appId: sim.sim.appId, privateKey: key })({
      type: "app",
    });
    const me = await fetch(`${sim.url}/app`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    // The simulator now signs webhooks with the new secret and sends them to the Worker.
    expect(sim.sim.webhooks.secret).toBe(secrets.GITHUB_WEBHOOK_SECRET);
    expect(sim.sim.webhooks.pushUrl).toBe(`${workerUrl}/webhooks/github`);
    sim.sim.webhooks.pushUrl = null;

    for (const value of secretValues(secrets)) expect(r.stdout() + r.stderr()).not.toContain(value);
    expect(r.stdout()).toContain(`${sim.url}/apps/${sim.sim.appSlug}/installations/new`);
  }, 60_000);

  it("writes files only the user can read and prints the commands when wrangler is not logged in", async () => {
    const r = await run(
      "setup.ts",
      [
        "--url",
        "https://switchyard.acme.workers.dev/",
        "--api-url",
        `${sim.url}/`,
        "--org",
        "acme",
      ],
      { FAKE_WRANGLER_LOGGED_OUT: "1" },
    );
    const { callback } = await createApp(await pageUrl(r), "/organizations/acme/settings/apps/new");
    expect(callback.status).toBe(200);
    expect(await r.exit).toBe(0);
    const made = await calls(r);
    expect(made.map((c) => c.args[0])).toEqual(["whoami"]);

    const secretsDir = join(r.cwd, ".tmp/setup-production");
    expect((await stat(secretsDir)).mode & 0o777).toBe(0o700);
    const secrets: Record<string, string> = {};
    for (const name of SETUP_SECRET_NAMES) {
      const file = join(secretsDir, name);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      secrets[name] = await readFile(file, "utf8");
      expect(r.stdout()).toContain(
        `npx wrangler secret put ${name} --env production < .tmp/setup-production/${name}`,
      );
    }
    expect(r.stdout()).toContain("wrangler is not logged in");
    expect(secrets.GITHUB_APP_ID).toBe(String(sim.sim.appId));
    expect(secrets.GITHUB_APP_PRIVATE_KEY).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(await importablePkcs8(secrets.GITHUB_APP_PRIVATE_KEY!)).toBe(true);
    for (const value of secretValues(secrets)) expect(r.stdout() + r.stderr()).not.toContain(value);
    sim.sim.webhooks.pushUrl = null;
  }, 60_000);

  it("fails with the conversion's answer when the code is not the simulator's, and on bad flags", async () => {
    const r = await run("setup.ts", ["--url", "https://w.example", "--api-url", sim.url]);
    const page = await pageUrl(r);
    const html = await (await fetch(page)).text();
    const action = decodeHTML(/<form action="([^"]+)"/.exec(html)![1]!);
    const state = new URL(action).searchParams.get("state")!;
    const failed = await fetch(`${page}callback?code=not-a-code&state=${state}`);
    expect(failed.status).toBe(502);
    expect(await r.exit).toBe(1);
    expect(r.stderr()).toContain("/app-manifests/{code}/conversions answered 404");
    expect(await calls(r)).toEqual([]);

    const bad = await run("setup.ts", ["--url", "https://w.example", "--api-url", "nope"]);
    expect(await bad.exit).toBe(2);
    expect(bad.stderr()).toContain("setup: --api-url: expected an http(s) URL");
    const noUrl = await run("setup.ts", ["--env", "staging"]);
    expect(await noUrl.exit).toBe(2);
    expect(noUrl.stderr()).toContain("--url is required");
    const env = await run("setup.ts", ["--url", "https://w.example", "--env", "prod"]);
    expect(await env.exit).toBe(2);
    expect(env.stderr()).toContain('--env: expected "staging" or "production"');
  }, 60_000);
});

describe("npm run deploy", () => {
  it("deploys the environment, sets PUBLIC_URL to the URL wrangler printed, and prints the webhook and status page URLs", async () => {
    const url = "https://switchyard-staging.acme.workers.dev";
    const first = await run("deploy.ts", ["--env", "staging"], { FAKE_DEPLOY_URL: `${url}/` });
    expect(await first.exit).toBe(0);
    expect((await calls(first)).map((c) => c.args)).toEqual([
      ["deploy", "--env", "staging"],
      ["deploy", "--env", "staging", "--var", `PUBLIC_URL:${url}`],
    ]);
    expect(first.stdout()).toContain(`webhook URL:  ${url}/webhooks/github\n`);
    expect(first.stdout()).toContain(`status page:  ${url}/\n`);

    // The next deploy of the same checkout knows the URL: one deploy, PUBLIC_URL set.
    const second = await run(
      "deploy.ts",
      ["--env", "staging"],
      { FAKE_DEPLOY_URL: url },
      first.cwd,
    );
    expect(await second.exit).toBe(0);
    expect((await calls(second)).map((c) => c.args)).toEqual([
      ["deploy", "--env", "staging", "--var", `PUBLIC_URL:${url}`],
    ]);
    // And setup finds the Worker's URL there.
    const setup = await run("setup.ts", ["--env", "staging", "--api-url", sim.url], {}, first.cwd);
    await pageUrl(setup);
    expect(setup.stdout()).toContain(`Worker (staging, from the last \`npm run deploy\`): ${url}`);
    setup.child.kill("SIGINT");
    expect(await setup.exit).toBe(130);
  }, 60_000);

  it("keeps a custom domain given with --public-url, and fails when wrangler does", async () => {
    const r = await run("deploy.ts", ["--public-url", "https://queue.acme.com/"], {
      FAKE_DEPLOY_URL: "https://switchyard.acme.workers.dev",
    });
    expect(await r.exit).toBe(0);
    expect((await calls(r)).map((c) => c.args)).toEqual([
      ["deploy", "--env", "production", "--var", "PUBLIC_URL:https://queue.acme.com"],
    ]);
    expect(r.stdout()).toContain("webhook URL:  https://queue.acme.com/webhooks/github");

    const failing = await run("deploy.ts", ["--env", "staging"], { FAKE_WRANGLER_FAIL: "1" });
    expect(await failing.exit).toBe(1);
    expect(failing.stderr()).toContain("deploy: wrangler deploy --env staging exited with 1");
  }, 60_000);

  it("each wrangler.toml environment binds every Durable Object the top level binds (real wrangler, dry run)", async () => {
    const durableObjects = (output: string) =>
      [...output.matchAll(/^env\.(\w+) \((\w+)\)\s+Durable Object/gm)].map(
        (m) => `${m[1]}:${m[2]}`,
      );
    // Three bundles at once (each takes seconds); staging through the deploy script itself.
    const [top, staging, production] = await Promise.all([
      runReal(["deploy", "--dry-run", "--env="]),
      runRealDeploy(["--env", "staging", "--dry-run"]),
      runReal(["deploy", "--dry-run", "--env=production"]),
    ]);
    expect(staging.code).toBe(0);
    expect(staging.stdout).toContain("Dry run of staging: the Worker builds");
    expect(durableObjects(top).length).toBeGreaterThanOrEqual(3);
    expect(durableObjects(staging.stdout)).toEqual(durableObjects(top));
    expect(durableObjects(production)).toEqual(durableObjects(top));
  }, 120_000);
});

function collect(child: ChildProcess): Promise<{ code: number | null; stdout: string }> {
  let stdout = "";
  child.stdout?.setEncoding("utf8").on("data", (c: string) => {
    stdout += c;
  });
  child.stderr?.setEncoding("utf8").on("data", (c: string) => {
    stdout += c;
  });
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout })));
}

async function runReal(args: string[]): Promise<string> {
  const child = spawn(
    process.execPath,
    [join(root, "node_modules/wrangler/bin/wrangler.js"), ...args],
    {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1", WRANGLER_SEND_METRICS: "false" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const { code, stdout } = await collect(child);
  if (code !== 0) throw new Error(`wrangler ${args.join(" ")} exited ${code}: ${stdout}`);
  return stdout;
}

async function runRealDeploy(args: string[]): Promise<{ code: number | null; stdout: string }> {
  const { SWITCHYARD_WRANGLER: _, ...env } = process.env;
  const child = spawn(process.execPath, [join(root, "infra/install/deploy.ts"), ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collect(child);
}
