import { parse as parseYaml } from "yaml";
import { describeZodError } from "../validation.ts";
import { type Config, ConfigSchema } from "./schema.ts";

export type ConfigResult = { ok: true; config: Config } | { ok: false; error: string };

/** Parses `.github/switchyard.yml`; an empty file means all defaults. Never throws. */
export function parseConfigYaml(text: string): ConfigResult {
  let raw: unknown;
  try {
    raw = parseYaml(text, { maxAliasCount: 100 });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, error: `.github/switchyard.yml is not valid YAML: ${reason}` };
  }
  const result = ConfigSchema.safeParse(raw ?? {});
  if (!result.success) {
    return { ok: false, error: `.github/switchyard.yml: ${describeZodError(result.error)}` };
  }
  return { ok: true, config: result.data };
}
