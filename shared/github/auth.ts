// Credentials for the client: a plain token, or a GitHub App installation whose tokens are
// minted with a JWT signed by the App's PKCS#8 key and cached until shortly before expiry.
import { createAppAuth } from "@octokit/auth-app";
import { GitHubConfigError } from "./errors.ts";

/**
 * Where installation tokens are kept between requests (and, in the Worker, between
 * invocations: a Durable Object implements this). Keys and values are opaque strings; values
 * carry the token, so a cache stores them like any secret and never logs them.
 */
export interface TokenCache {
  get(key: string): Promise<string | undefined> | string | undefined;
  set(key: string, value: string): Promise<void> | void;
}

export class MemoryTokenCache implements TokenCache {
  private map = new Map<string, string>();
  get(key: string): string | undefined {
    return this.map.get(key);
  }
  set(key: string, value: string): void {
    this.map.set(key, value);
  }
}

export type GitHubAuth =
  | { kind: "token"; token: string }
  /**
   * The App's OAuth client id and secret, as Basic auth: GitHub takes them only on
   * `/applications/{client_id}/...` (checking a user token), so no other route is sent them.
   */
  | { kind: "client"; clientId: string; clientSecret: string }
  | {
      kind: "app";
      appId: number | string;
      /** PEM, PKCS#8 (`BEGIN PRIVATE KEY`). Literal `\n` sequences (env files) are accepted. */
      privateKey: string;
      installationId: number;
      cache?: TokenCache;
      /** Refresh a cached token this long before it expires (default 5 minutes). */
      refreshBeforeMs?: number;
    };

/** Normalizes a PEM key and rejects formats Workers cannot use, naming the fix. */
export function checkAppPrivateKey(pem: string): string {
  const key = pem.includes("\\n") ? pem.replace(/\\n/g, "\n") : pem;
  if (key.includes("-----BEGIN RSA PRIVATE KEY-----")) {
    throw new GitHubConfigError(
      "the GitHub App private key is in PKCS#1 format (BEGIN RSA PRIVATE KEY), which Cloudflare Workers cannot use; " +
        "convert it to PKCS#8 with: openssl pkcs8 -topk8 -inform PEM -outform PEM -nocrypt -in app.pem -out app.pkcs8.pem",
    );
  }
  if (key.includes("-----BEGIN OPENSSH PRIVATE KEY-----")) {
    throw new GitHubConfigError(
      "the GitHub App private key is an OpenSSH key; download the App's .pem and convert it to PKCS#8 (BEGIN PRIVATE KEY)",
    );
  }
  if (!/-----BEGIN PRIVATE KEY-----[\s\S]+-----END PRIVATE KEY-----/.test(key)) {
    throw new GitHubConfigError(
      "the GitHub App private key is not a PEM PKCS#8 key (expected -----BEGIN PRIVATE KEY-----)",
    );
  }
  return key;
}

/**
 * Wraps a TokenCache for @octokit/auth-app: entries close to expiry read as missing, so the
 * next request mints a fresh token instead of failing with an expired one.
 */
function expiringCache(cache: TokenCache, refreshBeforeMs: number, now: () => number): TokenCache {
  return {
    async get(key) {
      const value = await cache.get(key);
      if (value === undefined) return undefined;
      // @octokit/auth-app stores `token|createdAt|expiresAt|...`.
      const expiresAt = Date.parse(value.split("|")[2] ?? "");
      if (!Number.isFinite(expiresAt) || expiresAt - refreshBeforeMs <= now()) return undefined;
      return value;
    },
    set: (key, value) => cache.set(key, value),
  };
}

/** Octokit constructor options for the given credentials. */
export function octokitAuthOptions(auth: GitHubAuth, now: () => number): Record<string, unknown> {
  if (auth.kind === "token") {
    if (auth.token.trim() === "") throw new GitHubConfigError("the GitHub token is empty");
    return { auth: auth.token };
  }
  if (auth.kind === "client") return { authStrategy: clientAuth, auth };
  const privateKey = checkAppPrivateKey(auth.privateKey);
  return {
    authStrategy: createAppAuth,
    auth: {
      appId: auth.appId,
      privateKey,
      installationId: auth.installationId,
      cache: expiringCache(
        auth.cache ?? new MemoryTokenCache(),
        auth.refreshBeforeMs ?? 5 * 60_000,
        now,
      ),
    },
  };
}

type RequestFn = ((route: unknown, params?: unknown) => Promise<unknown>) & {
  endpoint: {
    merge(route: unknown, params?: unknown): { url: string; headers: Record<string, string> };
  };
};

/**
 * An Octokit auth strategy sending the App's client credentials as Basic auth, only to the
 * `/applications/{client_id}/...` routes (a request elsewhere is refused before it is sent).
 */
function clientAuth(options: { clientId: string; clientSecret: string }) {
  const authorization = `basic ${btoa(`${options.clientId}:${options.clientSecret}`)}`;
  const auth = async () => ({ type: "oauth-app", clientId: options.clientId });
  return Object.assign(auth, {
    hook(request: RequestFn, route: unknown, params?: unknown) {
      const endpoint = request.endpoint.merge(route, params);
      if (!/\/applications\/[^/]+\//.test(endpoint.url)) {
        throw new GitHubConfigError(
          `the App's client credentials are sent only to /applications/{client_id}/..., not to ${endpoint.url}`,
        );
      }
      endpoint.headers.authorization = authorization;
      return request(endpoint);
    },
  });
}
