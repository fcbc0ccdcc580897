// What the fleet commands (queue, claim, heartbeat, release, comment, work) share: the
// connection (--server, --repo, the token), flags checked with the API's own schemas so a bad
// value is named by its flag (exit 2), and API failures turned into exit 1 naming the request.
import type { z } from "zod";
import { githubTokenKind } from "../../shared/auth/github-tokens.ts";
import { ActionsOidcError, actionsOidcToken } from "../../shared/fleet/actions-oidc.ts";
import {
  FleetApiError,
  FleetClient,
  FleetRequestError,
  type TokenSource,
} from "../../shared/fleet/client.ts";
import { OrgFleetClient } from "../../shared/fleet/org-client.ts";
import { type CliIo, OperationError, UsageError } from "./io.ts";

/** The flag each API field comes from, so schema errors name what the user typed. */
const FLAG_OF: Record<string, string> = {
  agentId: "--agent-id",
  ttlSeconds: "--ttl-seconds",
  machine: "--machine",
  capabilities: "--capabilities",
  claimId: "--claim-id",
  fence: "--fence",
  outcome: "--outcome",
  note: "--note",
  body: "--body",
  limit: "--limit",
  order: "--order",
  kinds: "--kinds",
  kind: "--kind",
  repos: "--repos",
};

/** The flags every fleet command takes. */
export const CONNECTION_FLAGS = {
  server: { type: "string" },
  repo: { type: "string" },
} as const;

const REPO = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}$/;

export interface FleetConnection {
  client: FleetClient;
  /** The server URL without trailing slashes (also the OIDC audience). */
  server: string;
  repo: string;
  /** Where the token came from: `SWITCHYARD_TOKEN`, `GITHUB_TOKEN` or `actions-oidc`. */
  tokenSource: string;
}

export function serverFlag(command: string, value: string | undefined): string {
  if (value === undefined || value === "") throw new UsageError(`${command}: --server is required`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${command}: --server must be an http(s) URL, got "${value}"`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash) {
    throw new UsageError(`${command}: --server must be an http(s) URL, got "${value}"`);
  }
  return value.replace(/\/+$/, "");
}

export function repoFlag(command: string, value: string | undefined): string {
  if (value === undefined || value === "") throw new UsageError(`${command}: --repo is required`);
  if (!REPO.test(value)) {
    throw new UsageError(`${command}: --repo must be OWNER/NAME, got "${value}"`);
  }
  return value;
}

/**
 * The bearer token: `SWITCHYARD_TOKEN` (a fleet key, or any token the Worker accepts), else
 * `GITHUB_TOKEN` (a user token with push access; an installation token `ghs_` only outside
 * Actions, where the Worker's refusal says what to use), else, inside GitHub Actions
 * (`ACTIONS_ID_TOKEN_REQUEST_URL` set), OIDC tokens with audience `server`, refreshed before
 * they expire.
 */
export function fleetToken(
  io: CliIo,
  command: string,
  server: string,
): { token: TokenSource; source: string } {
  const nonEmpty = (name: string) => {
    const value = io.env[name];
    return value !== undefined && value.trim() !== "" ? value.trim() : undefined;
  };
  const switchyard = nonEmpty("SWITCHYARD_TOKEN");
  if (switchyard) return { token: switchyard, source: "SWITCHYARD_TOKEN" };
  const github = nonEmpty("GITHUB_TOKEN");
  const requestUrl = nonEmpty("ACTIONS_ID_TOKEN_REQUEST_URL");
  // Inside Actions, GITHUB_TOKEN is the job's installation token (ghs_), which the Worker
  // refuses (it cannot tell what such a token may do): the job's OIDC token is used instead.
  const actionsToken = github !== undefined && githubTokenKind(github) === "installation";
  if (github && !(requestUrl && actionsToken)) return { token: github, source: "GITHUB_TOKEN" };
  if (requestUrl) {
    const requestToken = nonEmpty("ACTIONS_ID_TOKEN_REQUEST_TOKEN");
    if (!requestToken) {
      throw new UsageError(
        `${command}: ACTIONS_ID_TOKEN_REQUEST_URL is set but ACTIONS_ID_TOKEN_REQUEST_TOKEN is not; give the workflow \`permissions: id-token: write\``,
      );
    }
    const token = actionsOidcToken({ requestUrl, requestToken, audience: server, fetch: io.fetch });
    return { token, source: "actions-oidc" };
  }
  throw new UsageError(
    `${command}: set SWITCHYARD_TOKEN (a fleet key) or GITHUB_TOKEN (a token with push access to the repository); inside GitHub Actions, \`permissions: id-token: write\` is enough`,
  );
}

/** Checks --server and --repo, finds the token, and makes the client. */
export function fleetConnection(
  io: CliIo,
  command: string,
  flags: { server?: string | undefined; repo?: string | undefined },
): FleetConnection {
  const server = serverFlag(command, flags.server);
  const repo = repoFlag(command, flags.repo);
  const { token, source } = fleetToken(io, command, server);
  const client = new FleetClient({
    server,
    repo,
    token,
    fetch: io.fetch,
    userAgent: "switchyard-cli",
  });
  return { client, server, repo, tokenSource: source };
}

/** `--org OWNER`: the org queue instead of one repository's (queue, claim, work). */
export const ORG_FLAG = { org: { type: "string" } } as const;

const OWNER = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/;

/**
 * `--org OWNER` instead of `--repo`: the org routes' client (its grants name their repository;
 * `forRepo` gives that repository's client). Null when `--org` was not given.
 */
export function orgConnection(
  io: CliIo,
  command: string,
  flags: { server?: string | undefined; repo?: string | undefined; org?: string | undefined },
): { client: OrgFleetClient; server: string } | null {
  if (flags.org === undefined) return null;
  if (flags.repo !== undefined) {
    throw new UsageError(`${command}: give --repo or --org, not both`);
  }
  if (!OWNER.test(flags.org)) {
    throw new UsageError(
      `${command}: --org must be an organization or user name, got "${flags.org}"`,
    );
  }
  const server = serverFlag(command, flags.server);
  const { token } = fleetToken(io, command, server);
  const client = new OrgFleetClient({
    server,
    owner: flags.org,
    token,
    fetch: io.fetch,
    userAgent: "switchyard-cli",
  });
  return { client, server };
}

/** `--issue N`: a positive issue number. */
export function issueFlag(command: string, value: string | undefined): number {
  if (value === undefined || value === "") throw new UsageError(`${command}: --issue is required`);
  if (!/^[1-9]\d{0,9}$/.test(value)) {
    throw new UsageError(`${command}: --issue must be an issue number, got "${value}"`);
  }
  return Number(value);
}

/** An integer flag (`--fence 7`, `--ttl-seconds 600`); its range is the schema's to check. */
export function integerFlag(
  command: string,
  name: string,
  value: string | undefined,
): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d{1,16}$/.test(value.trim())) {
    throw new UsageError(`${command}: --${name} must be an integer, got "${value}"`);
  }
  return Number(value.trim());
}

/** `a,b` → ["a", "b"] (blank entries dropped); absent → undefined. */
export function listFlag(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** Drops undefined values, so optional fields the user did not give are not sent. */
export function defined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function flagFor(field: string): string {
  return FLAG_OF[field] ?? field;
}

/** Checks a request built from flags with the API's schema; the first problem names its flag. */
export function checkFlags<T>(command: string, schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path[0] === undefined ? "(request)" : String(issue.path[0]);
  throw new UsageError(`${command}: ${flagFor(field)} ${issue?.message ?? "is invalid"}`);
}

/**
 * Runs one API call; a failure becomes exit 1 naming the request and what the Worker said
 * (`claim: POST /v1/repos/acme/app/issues/5/claim: 409 conflict (held): ...`).
 */
export async function fleetCall<T>(command: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw fleetFailure(command, error);
  }
}

/** The CLI error for a failed fleet call (exit 1, or 2 for an argument the client refused). */
export function fleetFailure(command: string, error: unknown): Error {
  if (error instanceof FleetApiError || error instanceof ActionsOidcError) {
    return new OperationError(`${command}: ${error.message}`);
  }
  if (error instanceof FleetRequestError) {
    return new UsageError(`${command}: ${flagFor(error.field)}: ${error.message}`);
  }
  return error instanceof Error ? error : new Error(String(error));
}
