// GitHub's published OpenAPI description (the committed subset, see
// infra/github-sim/contract/update.ts) as ajv validators for responses and webhook payloads.
import { readFileSync } from "node:fs";
import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";

interface Subset {
  source: string;
  operations: Record<
    string,
    { operationId: string; responses: Record<string, unknown>; requestBody: unknown }
  >;
  webhooks: Record<string, { schema: unknown }>;
  components: Record<string, Record<string, unknown>>;
}

export const SUBSET: Subset = JSON.parse(
  readFileSync(
    new URL("../../infra/github-sim/contract/openapi-subset.json", import.meta.url),
    "utf8",
  ),
);

const DOC = "https://switchyard.invalid/github-openapi.json";

/** OpenAPI 3.0's `nullable: true` as JSON Schema: `type: [t, "null"]` or `anyOf [s, null]`. */
function denullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(denullable);
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) if (k !== "nullable") out[k] = denullable(v);
  if ((node as { nullable?: unknown }).nullable !== true) return out;
  if (typeof out.type === "string") {
    out.type = [out.type, "null"];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  return { anyOf: [out, { type: "null" }] };
}

function rebase(schema: unknown): unknown {
  return denullable(
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOC}#/components/`)),
  );
}

const ajv = new Ajv({
  strict: false,
  allErrors: false,
  logger: false,
  formats: { int32: true, int64: true },
});
(addFormats as unknown as (a: Ajv) => void)(ajv);
ajv.addSchema({ $id: DOC, components: rebase(SUBSET.components) as object });

const cache = new Map<string, ValidateFunction>();
function compile(key: string, schema: unknown): ValidateFunction {
  let v = cache.get(key);
  if (!v) {
    v = ajv.compile(rebase(schema) as object);
    cache.set(key, v);
  }
  return v;
}

function explain(v: ValidateFunction): string {
  return (v.errors ?? [])
    .slice(0, 3)
    .map((e) => `${e.instancePath || "(root)"} ${e.message} ${JSON.stringify(e.params)}`)
    .join("; ");
}

/**
 * The OpenAPI template (`/repos/{owner}/{repo}/issues/{issue_number}`) a concrete path matches.
 * GitHub's undocumented `/repositories/{repository_id}/...` routes are checked as their
 * documented `/repos/{owner}/{repo}/...` twins.
 */
export function templateFor(method: string, path: string): string | null {
  path = path.replace(/^\/repositories\/\d+(?=\/|$)/, "/repos/by-id/by-id");
  for (const key of Object.keys(SUBSET.operations)) {
    const [m, template] = key.split(" ") as [string, string];
    if (m !== method) continue;
    // `{path}` (a file path) may span segments; every other parameter is one segment.
    const re = new RegExp(
      `^${template.replace(/\{[^}]+\}/g, (p) => (p === "{path}" ? ".+" : "[^/]+"))}$`,
    );
    if (re.test(path)) return template;
  }
  return null;
}

/** Validates a REST response body; returns null when valid, else a description. */
export function checkResponse(
  method: string,
  template: string,
  status: number,
  body: unknown,
): string | null {
  const op = SUBSET.operations[`${method} ${template}`];
  if (!op) return `no operation ${method} ${template} in the contract`;
  // GitHub answers conditional GETs with an empty 304 everywhere, documented or not.
  if (status === 304 && method === "GET") return body === null ? null : "a 304 must have no body";
  const schema = op.responses[String(status)];
  if (schema === undefined) return `status ${status} is not documented for ${method} ${template}`;
  if (schema === null) return null; // documented without a body (e.g. 304)
  const v = compile(`${method} ${template} ${status}`, schema);
  return v(body) ? null : `${method} ${template} ${status}: ${explain(v)}`;
}

/** Validates a request body the client sends. */
export function checkRequestBody(method: string, template: string, body: unknown): string | null {
  const op = SUBSET.operations[`${method} ${template}`];
  if (!op?.requestBody) return null;
  const v = compile(`${method} ${template} request`, op.requestBody);
  return v(body) ? null : `${method} ${template} request: ${explain(v)}`;
}

/** `issues` + `closed` → the x-webhooks key `issues-closed`; `push` (no action) → `push`. */
export function webhookKey(event: string, action: string): string {
  return (action === "" ? event : `${event}-${action}`).replace(/_/g, "-");
}

export function checkWebhook(event: string, action: string, payload: unknown): string | null {
  const key = webhookKey(event, action);
  const hook = SUBSET.webhooks[key];
  if (!hook) return `no webhook ${key} in the contract`;
  const v = compile(`webhook ${key}`, hook.schema);
  if (!v(payload)) return `${key}: ${explain(v)}`;
  // GitHub's schemas allow extra properties, so ajv cannot see a top-level field GitHub never
  // sends (e.g. both repositories on a sub_issues event); switchyard must not come to rely on one.
  const ref = (hook.schema as { $ref?: string }).$ref;
  const name = ref?.replace("#/components/schemas/", "");
  const documented = name
    ? (SUBSET.components as Record<string, Record<string, { properties?: object }>>).schemas?.[name]
        ?.properties
    : undefined;
  if (documented && payload && typeof payload === "object") {
    const extra = Object.keys(payload).filter((k) => !Object.hasOwn(documented, k));
    if (extra.length > 0) return `${key}: fields GitHub does not send: ${extra.join(", ")}`;
  }
  return null;
}
