import { collaboratorPermission } from "../../../shared/github/permissions.ts";
import { permissionGrantsWrite } from "../../../shared/idd/trust.ts";
import type { RepoContext } from "./context.ts";

/** Marker authors asked about in one run of the `trust` schedule (the rest in the next). */
const AUTHORS_PER_RUN = 20;

/**
 * The `trust` schedule: asks GitHub whether IDD marker authors of unknown standing have write
 * access (spec 5: only trusted authors' markers count), one collaborator-permission read each;
 * answers are kept a day (claims-store.ts `author_trust`).
 */
export async function checkMarkerAuthors(
  c: RepoContext,
  fullName: string,
  nowMs: number,
): Promise<void> {
  const unknown = c.views.current(nowMs).unknownAuthors;
  if (unknown.length === 0) return;
  const client = c.client(`check marker authors' access to ${fullName}`);
  for (const login of unknown.slice(0, AUTHORS_PER_RUN)) {
    const permission = await collaboratorPermission(client, fullName, login);
    c.store.transaction(() => {
      c.store.claims.setTrust(login, permissionGrantsWrite(permission), Date.now());
      c.store.noteChange();
    });
  }
  if (unknown.length > AUTHORS_PER_RUN) c.schedules.at("trust", Date.now());
}
