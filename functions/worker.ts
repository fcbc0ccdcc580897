import { app } from "./app.ts";
import type { Env } from "./env.ts";

export { DirectoryObject } from "./objects/directory-object.ts";
export { InstallationObject } from "./objects/installation-object.ts";
export { RepoObject } from "./objects/repo-object.ts";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
