// The failures a simulated GitHub answers with; thrown anywhere in the simulator and turned
// into GitHub's JSON error answers by app.ts.

/** A failure with the status and body GitHub would answer. */
export class SimHttpError extends Error {
  readonly status: number;
  readonly errors: unknown[] | undefined;
  constructor(status: number, message: string, errors?: unknown[]) {
    super(message);
    this.status = status;
    this.errors = errors;
  }
}

/**
 * A resource that moved: GitHub answers 301 (GET) or 307 (other methods) with `Location` and
 * `{message: "Moved Permanently", url, documentation_url}`. `path` is the new API path without
 * the origin; with `keepSuffix` the rest of the request path after the repository part
 * (`/repos/{o}/{r}` or `/repositories/{id}`) and the query string are appended to it.
 */
export class SimMoved extends SimHttpError {
  readonly path: string;
  readonly keepSuffix: boolean;
  constructor(path: string, keepSuffix: boolean) {
    super(301, "Moved Permanently");
    this.path = path;
    this.keepSuffix = keepSuffix;
  }
}
