// The GitHub App manifest flow of `npm run setup`, served on loopback: a page whose form posts
// the manifest to GitHub's new-App page; GitHub sends the browser back to /callback with a code;
// the code is exchanged for the App's id, key, webhook secret and OAuth client
// (`POST /app-manifests/{code}/conversions`), and those reach the Worker as secrets. Node-only.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Octokit } from "@octokit/core";
import { RequestError } from "@octokit/request-error";
import { Hono } from "hono";
import { html } from "hono/html";
import { firstIssue } from "../../shared/validation.ts";
import {
  buildManifest,
  githubWebUrl,
  type ManifestConversion,
  ManifestConversionSchema,
  manifestFormTarget,
  normalizeWorkerUrl,
  WEBHOOK_PATH,
} from "./manifest.ts";
import {
  type DeployEnv,
  putSecrets,
  SETUP_SECRET_NAMES,
  secretPutCommands,
  secretsFor,
  writeSecretFiles,
} from "./secrets.ts";
import { type Wrangler, wranglerLoggedIn } from "./wrangler.ts";

export interface SetupOptions {
  workerUrl: string;
  apiUrl: string;
  name: string;
  org?: string;
  env: DeployEnv;
  /** Local port (0: any free one). */
  port: number;
  /** Print the commands instead of running `wrangler secret put`. */
  print: boolean;
  /** Where the secret files go when the commands are printed. */
  secretsDir: string;
}

export interface SetupResult {
  app: { id: number; name: string; htmlUrl: string; installUrl: string };
  /** `put`: wrangler wrote every secret; `printed`: files and commands for the user to run. */
  secrets: "put" | "printed";
}

export interface SetupIo {
  /** One line for the user (stdout). */
  say(line: string): void;
  wrangler: Wrangler;
}

export class SetupError extends Error {
  override name = "SetupError";
}

export interface RunningSetup {
  /** The page to open in a browser. */
  url: string;
  /** Settles once the callback has been handled (or has failed). */
  done: Promise<SetupResult>;
  close(): Promise<void>;
}

async function exchangeCode(apiUrl: string, code: string): Promise<ManifestConversion> {
  const octokit = new Octokit({
    baseUrl: apiUrl.replace(/\/+$/, ""),
    userAgent: "switchyard-setup",
  });
  let data: unknown;
  try {
    ({ data } = await octokit.request("POST /app-manifests/{code}/conversions", { code }));
  } catch (error) {
    if (error instanceof RequestError) {
      const hint =
        error.status === 404
          ? " (the code is used once and expires after an hour: start again)"
          : "";
      throw new SetupError(
        `POST ${apiUrl}/app-manifests/{code}/conversions answered ${error.status}: ${error.message}${hint}`,
      );
    }
    throw new SetupError(
      `POST ${apiUrl}/app-manifests/{code}/conversions failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const parsed = ManifestConversionSchema.safeParse(data);
  if (!parsed.success) {
    const issue = firstIssue(parsed.error);
    throw new SetupError(
      `the manifest conversion's answer is not a GitHub App with credentials: ${issue.path}: ${issue.message}`,
    );
  }
  return parsed.data;
}

/** Starts the local server; the caller prints `url` and awaits `done`. */
export async function startSetup(options: SetupOptions, io: SetupIo): Promise<RunningSetup> {
  const state = randomBytes(16).toString("hex");
  const worker = normalizeWorkerUrl(options.workerUrl);
  const webUrl = githubWebUrl(options.apiUrl);
  let origin = "";
  let settle!: { resolve(r: SetupResult): void; reject(e: Error): void };
  const done = new Promise<SetupResult>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Not unhandled when the caller awaits it only after `close`.
  done.catch(() => undefined);
  let handled = false;

  const app = new Hono();
  app.get("/", (c) => {
    const manifest = buildManifest({
      name: options.name,
      workerUrl: worker,
      redirectUrl: `${origin}/callback`,
    });
    const target = manifestFormTarget(webUrl, state, options.org);
    return c.html(html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>switchyard setup</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}
code{font-size:.9em}button{font-size:1rem;padding:.5rem 1rem}</style></head>
<body>
<h1>Create the switchyard GitHub App</h1>
<p>GitHub will ask you to confirm the App's name (<strong>${manifest.name}</strong>; change it
there if it is taken), then send you back here, and the App's credentials become the secrets of
the Worker <code>${worker}</code> (<code>--env ${options.env}</code>).</p>
<ul>
<li>Webhook URL: <code>${manifest.hook_attributes.url}</code></li>
<li>Permissions: ${Object.entries(manifest.default_permissions)
      .map(([k, v]) => `${k}: ${v}`)
      .join(", ")}</li>
<li>Events: ${manifest.default_events.join(", ")}</li>
<li>Owner: ${options.org ? `the organization ${options.org}` : "your account"}</li>
</ul>
<form action="${target}" method="post">
<input type="hidden" name="manifest" value="${JSON.stringify(manifest)}">
<button type="submit">Create the GitHub App on ${webUrl}</button>
</form>
</body></html>`);
  });

  app.get("/callback", async (c) => {
    if (c.req.query("state") !== state) {
      return c.html(
        html`<p>This link does not belong to this setup run (state mismatch). Start from <a href="/">the setup page</a>.</p>`,
        400,
      );
    }
    const code = c.req.query("code");
    if (!code)
      return c.html(
        html`<p>GitHub sent no code. Start from <a href="/">the setup page</a>.</p>`,
        400,
      );
    if (handled) return c.html(html`<p>This setup run is finished; see the terminal.</p>`, 409);
    handled = true;
    try {
      const result = await complete(code);
      settle.resolve(result);
      return c.html(html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>switchyard setup</title></head>
<body style="font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto">
<h1>Created ${result.app.name} (App ID ${result.app.id})</h1>
<p>${result.secrets === "put" ? "The Worker's secrets are set." : "Run the commands printed in the terminal to set the Worker's secrets."}</p>
<p>Next: <a href="${result.app.installUrl}">install the App</a> on your repositories.</p>
</body></html>`);
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      settle.reject(failure);
      return c.html(html`<p>Setup failed: ${failure.message}</p><p>See the terminal.</p>`, 502);
    }
  });

  async function complete(code: string): Promise<SetupResult> {
    const converted = await exchangeCode(options.apiUrl, code);
    const { secrets, generatedWebhookSecret } = secretsFor(converted);
    const htmlUrl = converted.html_url.replace(/\/+$/, "");
    const result = {
      app: {
        id: converted.id,
        name: converted.name,
        htmlUrl,
        installUrl: `${htmlUrl}/installations/new`,
      },
    };
    io.say(`Created the GitHub App ${converted.name} (App ID ${converted.id}): ${htmlUrl}`);
    if (generatedWebhookSecret) {
      io.say(
        `GitHub returned no webhook secret: one was generated; enter it (GITHUB_WEBHOOK_SECRET, in ${options.secretsDir}) under Webhook secret in the App's settings.`,
      );
    }
    const loggedIn = !options.print && (await wranglerLoggedIn(io.wrangler));
    let how: SetupResult["secrets"] = "printed";
    if (loggedIn) {
      const put = await putSecrets(io.wrangler, secrets, options.env);
      if (put.ok) {
        how = "put";
        io.say(
          `Set the Worker's secrets (--env ${options.env}): ${SETUP_SECRET_NAMES.join(", ")}.`,
        );
      } else {
        io.say(`${put.message}. The secrets are in files instead:`);
      }
    } else if (!options.print) {
      io.say("wrangler is not logged in (`npx wrangler login`). The secrets are in files instead:");
    }
    if (how === "printed" || generatedWebhookSecret)
      await writeSecretFiles(options.secretsDir, secrets);
    if (how === "printed") {
      io.say(
        `Wrote ${SETUP_SECRET_NAMES.length} files (readable by you only) to ${options.secretsDir}; run:`,
      );
      for (const command of secretPutCommands(options.secretsDir, options.env))
        io.say(`  ${command}`);
      io.say(`  rm -r ${options.secretsDir}`);
    }
    io.say(`Install the App on your repositories: ${result.app.installUrl}`);
    io.say(`GitHub sends its webhooks to ${worker}${WEBHOOK_PATH}; the status page is ${worker}/`);
    return { ...result, secrets: how };
  }

  const server = createServer((req, res) => {
    void serve(req, res);
  });
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const request = new Request(new URL(req.url ?? "/", origin), {
        method: req.method ?? "GET",
        headers: Object.entries(req.headers).flatMap(([k, v]) =>
          v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x): [string, string] => [k, x]),
        ),
      });
      const response = await app.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (error) {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(`setup server error: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/`,
    done,
    // A response in flight (the callback's page) finishes first; a browser's idle keep-alive
    // connection does not hold the process open for long.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 2_000).unref();
      }),
  };
}
