/**
 * The portable host's settings: the Worker's vars and secrets (functions/env.ts), under the same
 * names, from the process environment or a `.env` file (the environment wins). Only these names
 * reach the Worker's `env`: the rest of the process environment stays out of it.
 */
import { readFileSync } from "node:fs";

/** Every string setting of functions/env.ts `Env` (test/unit/host/settings.test.ts checks it). */
export const SETTING_NAMES = [
  "GITHUB_API_URL",
  "GITHUB_WEBHOOK_SECRET",
  "GITHUB_APP_ID",
  "GITHUB_APP_PRIVATE_KEY",
  "GITHUB_APP_CLIENT_ID",
  "GITHUB_APP_CLIENT_SECRET",
  "SESSION_SECRET",
  "GITHUB_WEB_URL",
  "WEBHOOK_MAX_BYTES",
  "PRODUCER_DEBOUNCE_MS",
  "RECONCILE_PAGE_SIZE",
  "RECONCILE_PAGES_PER_RUN",
  "FLEET_WRITE_DELAY_MS",
  "FENCED_WRITE_MARGIN_MS",
  "SCHEDULE_RETRY_BASE_MS",
  "GITHUB_TIMEOUT_MS",
  "GITHUB_RETRY_BASE_MS",
  "PUBLIC_URL",
  "OIDC_ISSUER",
  "HEALTH_DETAILS",
] as const;

export type SettingName = (typeof SETTING_NAMES)[number];

/** wrangler.toml `[vars]` defaults that apply when a setting is not given. */
const DEFAULTS: Partial<Record<SettingName, string>> = {
  GITHUB_API_URL: "https://api.github.com",
};

/**
 * Parses dotenv text: `KEY=value`, `export KEY=value`, `#` comments, single quotes (literal),
 * double quotes (`\n` escapes, may span lines: a PEM key fits either way).
 */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const line = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*/;
  let rest = text.replace(/\r\n?/g, "\n");
  while (rest.length > 0) {
    const match = line.exec(rest);
    if (!match) {
      const nl = rest.indexOf("\n");
      rest = nl < 0 ? "" : rest.slice(nl + 1);
      continue;
    }
    const key = match[1]!;
    rest = rest.slice(match[0].length);
    const quote = rest[0];
    if (quote === '"' || quote === "'") {
      let end = 1;
      while (end < rest.length && rest[end] !== quote)
        end += rest[end] === "\\" && quote === '"' ? 2 : 1;
      const raw = rest.slice(1, end);
      out[key] =
        quote === '"'
          ? raw.replace(/\\(.)/g, (_m, c: string) =>
              c === "n" ? "\n" : c === "r" ? "\r" : c === "t" ? "\t" : c,
            )
          : raw;
      const nl = rest.indexOf("\n", end);
      rest = nl < 0 ? "" : rest.slice(nl + 1);
    } else {
      const nl = rest.indexOf("\n");
      const value = nl < 0 ? rest : rest.slice(0, nl);
      out[key] = value.replace(/\s+#.*$/, "").trim();
      rest = nl < 0 ? "" : rest.slice(nl + 1);
    }
  }
  return out;
}

/**
 * The Worker's settings: the `.env` file's (when it exists), overridden by the environment's.
 * A private key given with literal `\n` (one line, as `wrangler --var` takes it) works too.
 */
export function loadSettings(options: {
  envFile?: string | undefined;
  environment: Record<string, string | undefined>;
}): Record<string, string> {
  let file: Record<string, string> = {};
  if (options.envFile) {
    let text: string | null = null;
    try {
      text = readFileSync(options.envFile, "utf8");
    } catch (error) {
      if ((error as { code?: string }).code !== "ENOENT") throw error;
    }
    if (text !== null) file = parseDotenv(text);
  }
  const settings: Record<string, string> = {};
  for (const name of SETTING_NAMES) {
    const value = options.environment[name] ?? file[name] ?? DEFAULTS[name];
    if (value !== undefined && value !== "") settings[name] = value;
  }
  return settings;
}
