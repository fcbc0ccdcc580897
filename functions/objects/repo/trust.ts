import { collaboratorPermission } from "../../../shared/github/permissions.ts";
import { permissionGrantsWrite } from "../../../shared/idd/trust.ts";
import type { RepoContext } from "./context.ts";

/** Authors asked about in one run of the `trust` schedule (the rest in the next). */
const AUTHORS_PER_RUN = 20;

/**
 * The `trust` schedule: asks GitHub whether authors of unknown standing have write access, one
 * collaborator-permission read per login, off the webhook path; answers are kept a day
 * (claims-store.ts `author_trust`), one cache for both uses:
 * - IDD marker authors (spec 5: only trusted authors' markers count), first: a preemption
 *   check waits for them;
 * - reply authors whose `author_association` shows no write access (`queue.replyAuthors:
 *   write`): their words wake no agent until GitHub says they may write.
 */
export async function checkAuthors(c: RepoContext, fullName: string, nowMs: number): Promise<void> {
  const view = c.views.current(nowMs);
  const unknown = [...new Set([...view.unknownAuthors, ...view.unknownReplyAuthors])];
  if (unknown.length === 0) return;
  const client = c.client(`check authors' access to ${fullName}`);
  for (const login of unknown.slice(0, AUTHORS_PER_RUN)) {
    const permission = await collaboratorPermission(client, fullName, login);
    c.store.transaction(() => {
      c.store.claims.setTrust(login, permissionGrantsWrite(permission), Date.now());
      c.store.noteChange();
    });
  }
  if (unknown.length > AUTHORS_PER_RUN) c.schedules.at("trust", Date.now());
}
