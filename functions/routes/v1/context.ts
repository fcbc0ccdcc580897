import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, TypedResponse } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Env } from "../../env.ts";

/** Who is calling a `/v1/repos/{owner}/{repo}/...` route, as the auth middleware proved it. */
export type Caller =
  | {
      kind: "user";
      login: string;
      access: "admin" | "write";
      /** The token's kind by prefix (`ghp_`, `gho_`, `ghu_`, ...), for audit entries. */
      tokenKind: string;
      /** When GitHub last answered the permission check (it may be remembered up to 5 minutes). */
      checkedMs: number;
    }
  /** A fleet key; verified by the RepoObject within the route's own call (key-calls.ts). */
  | { kind: "key"; access: "write" }
  | { kind: "oidc"; subject: string; access: "write" };

/** The installed repository a route acts on (resolved by name, then addressed by id). */
export interface RepoTarget {
  repoId: number;
  fullName: string;
  installationId: number;
}

/** Hono environment of every `/v1/repos/...` route: the auth middleware sets both variables. */
export type V1 = { Bindings: Env; Variables: { caller: Caller; repo: RepoTarget } };

/** The RepoObject of an installed repository (objects are named by repository id). */
export function repoObject(env: Env, repoId: number) {
  return env.REPO.get(env.REPO.idFromName(String(repoId)));
}

/** Every API error has this body: a stable code and a message naming what was wrong. */
export function apiError(
  c: Context,
  status: ContentfulStatusCode,
  error: string,
  message: string,
  extra: Record<string, unknown> = {},
  headers?: Record<string, string>,
) {
  return c.json({ error, message, ...extra }, status, headers);
}

/** The 400 message of a request part failing its schema: `query limit: must be at most 100`. */
export function schemaFailureMessage(
  target: string,
  error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> },
): string {
  const issue = error.issues[0];
  const path = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "(request)";
  return `${target} ${path}: ${issue?.message ?? "invalid"}`;
}

/**
 * A router for `/v1` routes: OpenAPI-described (merged into `/openapi.json`), and a request
 * failing its schema gets 400 `{error: "bad-request", message}` naming the first bad field.
 */
export function v1Router<E extends { Bindings: Env } = V1>() {
  return new OpenAPIHono<E>({
    defaultHook: (result, c) => {
      if (result.success) return;
      return apiError(c, 400, "bad-request", schemaFailureMessage(result.target, result.error));
    },
  });
}

/** An OpenAPI JSON response (or body) entry for `createRoute`. */
export const jsonContent = <T>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

/** A required JSON request body for `createRoute`. */
export const jsonBody = <T>(schema: T) => ({
  content: { "application/json": { schema } },
  required: true,
});

/**
 * What a RepoObject fleet call answers, sent as it is (status, JSON body, headers). The object
 * decides the status, so the response is typed loosely; the route's OpenAPI entry documents it.
 */
export function send(result: {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: the status and body are the RepoObject's to choose
}): Response & TypedResponse<any, any, "json"> {
  type Loose = Response & TypedResponse<unknown, never, "json">;
  const headers = new Headers(result.headers);
  if (result.body === undefined)
    return new Response(null, { status: result.status, headers }) as Loose;
  headers.set("content-type", "application/json; charset=UTF-8");
  return new Response(JSON.stringify(result.body), { status: result.status, headers }) as Loose;
}
