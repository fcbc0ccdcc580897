// `npm run contract:update`: regenerates openapi-subset.json from GitHub's published OpenAPI
// description. `@octokit/openapi` is ~385 MB, so it is installed into a temporary directory
// for the extraction and never becomes a dependency of the project.
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { CONTRACT_OPERATIONS, CONTRACT_WEBHOOKS } from "./operations.ts";

const VERSION = process.env.OCTOKIT_OPENAPI_VERSION ?? "23.0.2";
const OUT = new URL("./openapi-subset.json", import.meta.url);

type Json = Record<string, unknown>;

/** Every `#/components/...` reference reachable from `root`, resolved transitively. */
function collectRefs(spec: Json, root: unknown, into: Set<string>): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...node);
    } else if (node && typeof node === "object") {
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string" && !into.has(value)) {
          into.add(value);
          stack.push(resolve(spec, value));
        } else {
          stack.push(value);
        }
      }
    }
  }
}

function resolve(spec: Json, ref: string): unknown {
  let node: unknown = spec;
  for (const part of ref.replace(/^#\//, "").split("/")) {
    node = (node as Json)[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    if (node === undefined) throw new Error(`unresolvable reference ${ref}`);
  }
  return node;
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), "switchyard-openapi-"));
  try {
    process.stderr.write(`installing @octokit/openapi@${VERSION} into ${dir} (large, temporary)\n`);
    execFileSync(
      "npm",
      [
        "install",
        "--no-save",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--prefix",
        dir,
        `@octokit/openapi@${VERSION}`,
      ],
      { stdio: ["ignore", "ignore", "inherit"] },
    );
    const file = join(dir, "node_modules/@octokit/openapi/generated/api.github.com.json");
    const spec = JSON.parse(await readFile(file, "utf8")) as Json;
    const paths = spec.paths as Record<string, Record<string, Json>>;
    const webhooks = spec["x-webhooks"] as Record<string, Record<string, Json>>;

    const refs = new Set<string>();
    const operations: Record<string, Json> = {};
    for (const { method, path } of CONTRACT_OPERATIONS) {
      const operation = paths[path]?.[method.toLowerCase()];
      if (!operation) throw new Error(`${method} ${path} is not in the OpenAPI description`);
      const responses: Record<string, unknown> = {};
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        const resolved = (
          typeof (response as Json).$ref === "string"
            ? resolve(spec, (response as Json).$ref as string)
            : response
        ) as Json;
        const schema = (resolved.content as Json | undefined)?.["application/json"] as
          | Json
          | undefined;
        responses[status] = schema?.schema ?? null;
      }
      const requestBody = (operation.requestBody as Json | undefined)?.content as Json | undefined;
      const entry = {
        operationId: operation.operationId,
        responses,
        requestBody: (requestBody?.["application/json"] as Json | undefined)?.schema ?? null,
      };
      collectRefs(spec, entry, refs);
      operations[`${method} ${path}`] = entry;
    }
    const hooks: Record<string, unknown> = {};
    for (const name of CONTRACT_WEBHOOKS) {
      const post = webhooks[name]?.post;
      if (!post) throw new Error(`webhook ${name} is not in the OpenAPI description`);
      const schema = ((post.requestBody as Json).content as Json)["application/json"] as Json;
      hooks[name] = { schema: schema.schema };
      collectRefs(spec, hooks[name], refs);
    }
    const components: Record<string, Record<string, unknown>> = {};
    for (const ref of [...refs].sort()) {
      const [, , kind, name] = ref.split("/") as [string, string, string, string];
      components[kind] ??= {};
      components[kind][name] = resolve(spec, ref);
    }
    const info = spec.info as Json;
    const out = {
      source: `@octokit/openapi@${VERSION} (api.github.com.json, ${String(info.version)})`,
      operations,
      webhooks: hooks,
      components,
    };
    await writeFile(OUT, `${JSON.stringify(out, null, 1)}\n`);
    process.stderr.write(
      `wrote ${OUT.pathname}: ${Object.keys(operations).length} operations, ${Object.keys(hooks).length} webhooks, ${refs.size} components\n`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
