import type { DirectoryObject } from "./objects/directory/directory-object.ts";
import type { InstallationObject } from "./objects/installation/installation-object.ts";
import type { NameObject } from "./objects/names/name-object.ts";
import type { OwnerObject } from "./objects/owner/owner-object.ts";
import type { RepoObject } from "./objects/repo/repo-object.ts";

/** Bindings, vars and secrets of the Worker (wrangler.toml, .dev.vars, `wrangler secret`). */
export interface Env {
  REPO: DurableObjectNamespace<RepoObject>;
  INSTALLATION: DurableObjectNamespace<InstallationObject>;
  DIRECTORY: DurableObjectNamespace<DirectoryObject>;
  /** Shards of the directory the /v1 routes read (functions/objects/name-object.ts). */
  NAMES: DurableObjectNamespace<NameObject>;
  /** One per installation owner: the org queue and owner keys (functions/objects/owner/). */
  OWNER: DurableObjectNamespace<OwnerObject>;
  GITHUB_API_URL?: string;
  GITHUB_WEBHOOK_SECRET?: string;
  GITHUB_APP_ID?: string;
  GITHUB_APP_PRIVATE_KEY?: string;
  GITHUB_APP_CLIENT_ID?: string;
  GITHUB_APP_CLIENT_SECRET?: string;
  /**
   * Signs (HMAC-SHA-256) and seals the status page's session cookies: at least 32 characters,
   * e.g. `openssl rand -hex 32`. With the App's client id and secret it enables GitHub login.
   */
  SESSION_SECRET?: string;
  /**
   * GitHub's web address, for the OAuth login and issue links (default: derived from
   * GITHUB_API_URL: api.github.com → github.com, `https://HOST/api/v3` → `https://HOST`).
   */
  GITHUB_WEB_URL?: string;
  /** Webhook body limit in bytes (default 1 MiB). */
  WEBHOOK_MAX_BYTES?: string;
  /** Producer debounce after a change, in milliseconds (default 2000). */
  PRODUCER_DEBOUNCE_MS?: string;
  /** Issues a GraphQL page of the full reconcile, 1 to 100 (default 100). */
  RECONCILE_PAGE_SIZE?: string;
  /** Pages of a full reconcile read per alarm run before it re-arms itself (default 10). */
  RECONCILE_PAGES_PER_RUN?: string;
  /** Delay before fleet writes (IDD mirror markers, processing labels) go out, in ms (default 2000): claims granted and released within it post nothing. */
  FLEET_WRITE_DELAY_MS?: string;
  /** A fenced write's settle margin, in ms (default 10000; shared/claims/write-records.ts): how long past its claim's expiry a write may run, and how long its record stays open after it got no answer. */
  FENCED_WRITE_MARGIN_MS?: string;
  /** First retry delay of a failed schedule (reconcile, producer writes), in ms (default 5000). */
  SCHEDULE_RETRY_BASE_MS?: string;
  /** Per-attempt timeout of a GitHub request, in milliseconds (default 15000). */
  GITHUB_TIMEOUT_MS?: string;
  /** Base of the jittered backoff between GitHub retries, in milliseconds (default 500). */
  GITHUB_RETRY_BASE_MS?: string;
  /**
   * The Worker's public URL, e.g. `https://switchyard.example.workers.dev`: the audience a
   * GitHub Actions OIDC token must name. Unset: OIDC tokens are refused (never the Host header).
   */
  PUBLIC_URL?: string;
  /** The GitHub Actions OIDC issuer (default `https://token.actions.githubusercontent.com`). */
  OIDC_ISSUER?: string;
  /**
   * `1`: `GET /healthz` also names the version and the missing settings (names only). Unset
   * (production): it answers `{"ok": true|false}` and nothing else.
   */
  HEALTH_DETAILS?: string;
}

/** Names the setting an operation needs when it is missing, instead of failing obscurely. */
export class MissingSettingError extends Error {
  override name = "MissingSettingError";
  readonly setting: string;
  constructor(setting: string, operation: string) {
    super(`${operation} needs the ${setting} setting (a Worker secret or var; see README)`);
    this.setting = setting;
  }
}

/**
 * A numeric setting (a var such as `PRODUCER_DEBOUNCE_MS`): its value when it is a finite number
 * above zero (or zero, with `allowZero`), else undefined, so the caller's default applies.
 */
export function numberSetting(
  value: string | undefined,
  options: { allowZero?: boolean } = {},
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) && (options.allowZero ? n >= 0 : n > 0) ? n : undefined;
}

/** PUBLIC_URL without trailing slashes, or undefined when it is not set (or blank). */
export function publicUrl(env: Pick<Env, "PUBLIC_URL">): string | undefined {
  return env.PUBLIC_URL?.trim().replace(/\/+$/, "") || undefined;
}

export function requireSetting(
  env: Env,
  key: keyof Env & `GITHUB_${string}`,
  operation: string,
): string {
  const value = env[key];
  if (typeof value !== "string" || value === "") throw new MissingSettingError(key, operation);
  return value;
}

// Ties the Worker's own types into `cloudflare:workers` (`env`, `exports`) for code and tests.
declare global {
  namespace Cloudflare {
    interface Env extends SwitchyardEnv {}
    interface GlobalProps {
      mainModule: typeof import("./worker.ts");
      durableNamespaces:
        | "RepoObject"
        | "InstallationObject"
        | "DirectoryObject"
        | "NameObject"
        | "OwnerObject";
    }
  }
}
type SwitchyardEnv = Env;
