import { app } from "./app.ts";
import { scheduled } from "./cron.ts";
import type { Env } from "./env.ts";

export { DirectoryObject } from "./objects/directory/directory-object.ts";
export { InstallationObject } from "./objects/installation/installation-object.ts";
export { NameObject } from "./objects/names/name-object.ts";
export { OwnerObject } from "./objects/owner/owner-object.ts";
export { RepoObject } from "./objects/repo/repo-object.ts";

export default {
  fetch: app.fetch,
  async scheduled(controller, env, _ctx) {
    await scheduled(controller, env);
  },
} satisfies ExportedHandler<Env>;
