import { parseConfigYaml } from "../../../shared/config/parse.ts";
import type { GitHubClient } from "../../../shared/github/client.ts";
import { fetchFileIfChanged } from "../../../shared/github/contents.ts";
import { GitHubContentError } from "../../../shared/github/errors.ts";
import { CONFIG_PATH } from "../../../shared/github/webhooks.ts";
import { formatInstant } from "../../../shared/graph/time.ts";
import type { RepoStore } from "./repo-store.ts";

export type ConfigOutcome = "unchanged" | "updated" | "invalid" | "removed";

/**
 * Reads `.github/switchyard.yml` from the default branch, conditionally (a 304 is free). A valid
 * file becomes the repository's config; an invalid one keeps the last good config and records
 * the error (shown by the graph API); a missing file means the defaults.
 */
export async function refreshConfig(
  store: RepoStore,
  client: GitHubClient,
  nowMs: number,
): Promise<ConfigOutcome> {
  const identity = store.identity();
  if (!identity) throw new Error("config refresh before the repository is known");
  const etag = store.meta.get("configEtag") ?? null;
  const generation = store.generation();
  const at = formatInstant(nowMs);
  let text: string | null;
  let nextEtag: string | null = null;
  try {
    const file = await fetchFileIfChanged(client, identity.fullName, CONFIG_PATH, { etag });
    if (file.status === "not-modified") return "unchanged";
    text = file.status === "found" ? file.text : null;
    if (file.status === "found") nextEtag = file.etag;
  } catch (error) {
    if (!(error instanceof GitHubContentError)) throw error;
    // A directory, a huge file, a symlink: not a config file; say so, keep the last good one.
    store.transaction(() => {
      if (!store.stillActive(generation)) return;
      store.setConfig({ ok: false, error: `${CONFIG_PATH}: ${error.message}` }, at);
      store.audit("config", { outcome: "invalid", error: error.message }, nowMs);
    });
    return "invalid";
  }
  return store.transaction((): ConfigOutcome => {
    // Suspended or removed while reading: nothing lands.
    if (!store.stillActive(generation)) return "unchanged";
    store.meta.set("configEtag", nextEtag);
    if (text === null) {
      const had = store.meta.get("config") !== undefined;
      store.setConfig({ ok: true, config: null }, at);
      if (had) store.audit("config", { outcome: "removed" }, nowMs);
      return had ? "removed" : "unchanged";
    }
    const result = parseConfigYaml(text);
    store.setConfig(result, at);
    store.audit(
      "config",
      result.ok ? { outcome: "updated" } : { outcome: "invalid", error: result.error },
      nowMs,
    );
    return result.ok ? "updated" : "invalid";
  });
}
