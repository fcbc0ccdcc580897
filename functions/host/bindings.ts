/**
 * The Durable Object bindings of the Worker (wrangler.toml `[[durable_objects.bindings]]`):
 * binding name → exported class. The portable host builds its namespaces from this list;
 * test/unit/host/bindings.test.ts keeps it equal to wrangler.toml.
 */
export const OBJECT_BINDINGS: Readonly<Record<string, string>> = {
  REPO: "RepoObject",
  INSTALLATION: "InstallationObject",
  DIRECTORY: "DirectoryObject",
  NAMES: "NameObject",
  OWNER: "OwnerObject",
};

/** The Worker's cron trigger (wrangler.toml `[triggers] crons`): every 15 minutes. */
export const CRON = "*/15 * * * *";
export const CRON_INTERVAL_MS = 15 * 60_000;
