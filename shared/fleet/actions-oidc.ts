// GitHub Actions OIDC tokens for the fleet API: a workflow with `permissions: id-token: write`
// gets `ACTIONS_ID_TOKEN_REQUEST_URL` and `ACTIONS_ID_TOKEN_REQUEST_TOKEN`; asking that URL
// (with an `audience`) returns a JWT the Worker accepts when its `repository_id` is the
// repository's. The tokens live 5 minutes, so the provider keeps one and fetches a fresh one
// when fewer than `refreshBeforeSeconds` remain. The caller passes the two values: shared/
// never reads the environment.

export interface ActionsOidcOptions {
  /** The value of `ACTIONS_ID_TOKEN_REQUEST_URL`. */
  requestUrl: string;
  /** The value of `ACTIONS_ID_TOKEN_REQUEST_TOKEN`. */
  requestToken: string;
  /** The token's `aud`: the Worker's public URL. */
  audience: string;
  fetch?: typeof fetch;
  /** Milliseconds since the epoch (injectable for tests). */
  now?: () => number;
  /** Fetch a fresh token when fewer seconds than this remain (default 60). */
  refreshBeforeSeconds?: number;
  /** Per-request timeout in milliseconds (default 30 s). */
  timeoutMs?: number;
}

/** Asking for an OIDC token failed; the message names the request (never the tokens). */
export class ActionsOidcError extends Error {
  override name = "ActionsOidcError";
}

/** The URL to ask: the request URL with `audience` appended (`&`, or `?` when it has no query). */
export function oidcRequestUrl(requestUrl: string, audience: string): string {
  const separator = requestUrl.includes("?") ? "&" : "?";
  return `${requestUrl}${separator}audience=${encodeURIComponent(audience)}`;
}

/** A JWT's `exp` (seconds since the epoch), read without verifying: the server verifies. */
export function jwtExpiry(jwt: string): number | undefined {
  const payload = jwt.split(".")[1];
  if (payload === undefined || payload === "") return undefined;
  try {
    const base64 = payload.replace(/-/g, "+").replace(/_/g, "/");
    const padded = base64 + "=".repeat((4 - (base64.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes)) as { exp?: unknown };
    return typeof claims.exp === "number" && Number.isFinite(claims.exp) ? claims.exp : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A token provider for `FleetClient`'s `token`: each call answers the cached token while more
 * than `refreshBeforeSeconds` of it remain, and otherwise asks for a fresh one (concurrent
 * callers share one request). A token whose `exp` cannot be read is used once, never cached.
 */
export function actionsOidcToken(options: ActionsOidcOptions): () => Promise<string> {
  if (options.requestUrl === "" || options.requestToken === "") {
    throw new ActionsOidcError(
      "ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN are both needed (the workflow needs `permissions: id-token: write`)",
    );
  }
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const now = options.now ?? (() => Date.now());
  const refreshBeforeMs = (options.refreshBeforeSeconds ?? 60) * 1000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const url = oidcRequestUrl(options.requestUrl, options.audience);
  // Named without its query (which may carry a run-specific secret-looking value).
  const request = `GET ${url.split("?")[0]} (audience ${options.audience})`;

  let cached: { value: string; expiresMs: number } | null = null;
  let inFlight: Promise<string> | null = null;

  async function fetchToken(): Promise<string> {
    let response: Response;
    try {
      response = await doFetch(url, {
        headers: {
          authorization: `bearer ${options.requestToken}`,
          accept: "application/json; api-version=2.0",
        },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new ActionsOidcError(`${request} failed: ${message}`);
    }
    const text = await response.text().catch(() => "");
    if (!response.ok) {
      throw new ActionsOidcError(
        `${request} failed: HTTP ${response.status}: ${text.slice(0, 200) || response.statusText}`,
      );
    }
    let value: unknown;
    try {
      value = (JSON.parse(text) as { value?: unknown }).value;
    } catch {
      value = undefined;
    }
    if (typeof value !== "string" || value === "") {
      throw new ActionsOidcError(`${request} answered without a token in \`value\``);
    }
    const exp = jwtExpiry(value);
    cached = exp === undefined ? null : { value, expiresMs: exp * 1000 };
    return value;
  }

  return async () => {
    if (cached && cached.expiresMs - now() > refreshBeforeMs) return cached.value;
    if (!inFlight) {
      inFlight = fetchToken().finally(() => {
        inFlight = null;
      });
    }
    return inFlight;
  };
}
