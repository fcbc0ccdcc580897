import { fetchIssueComments } from "../../../shared/github/comments.ts";
import type { GraphEvent } from "../../../shared/ingest/events.ts";
import { commentEvents } from "../../../shared/ingest/from-comments.ts";
import type { RepoContext } from "./context.ts";
import { pause } from "./pause.ts";

// The `verify` schedule: one holder across protocols (shared/claims/preemption.ts). Once a
// claim's `claimed-by` marker has landed and IDD's settle delay plus a margin has passed, the
// issue's comments are read again from GitHub (a webhook may be late or lost), and a live IDD
// claim that IDD's reading puts before switchyard's marker ends switchyard's claim.

/** While marker authors' write access is still being asked, a verification waits this long. */
const TRUST_WAIT_MS = 30_000;

export async function verifyClaims(c: RepoContext, fullName: string, nowMs: number): Promise<void> {
  const due = c.store.claims.verifyDue(nowMs);
  if (due.length > 0) {
    const client = c.client(`verify the claims of ${fullName}`);
    const generation = c.store.generation();
    const fetched: GraphEvent[] = [];
    for (const number of [...new Set(due.map((d) => d.number))]) {
      fetched.push(...commentEvents(number, await fetchIssueComments(client, fullName, number)));
    }
    const applied = c.store.transaction(() => {
      if (!c.store.stillActive(generation)) return false;
      c.store.apply(fetched);
      return true;
    });
    if (!applied) return;
    await c.views.prepare(Date.now(), pause);
    const now = Date.now();
    const view = c.views.current(now);
    for (const d of due) {
      // An author whose write access GitHub has not confirmed yet preempts nobody: wait for it
      // (a stranger's marker must not end a grant).
      if (view.unknownAuthors.length > 0) {
        c.store.transaction(() => c.store.claims.setVerify(d.claimId, now + TRUST_WAIT_MS));
        c.schedules.at("trust", now);
        continue;
      }
      const holder = view.idd.get(d.number);
      if (holder && holder.staleAtMs > now) c.claims.preempt(d.claimId, holder, now);
      else if (view.own.get(d.number) !== d.claimId) {
        // The IDD agent backed off, but IDD's reading ignored switchyard's marker (it came while
        // that claim was active): nobody holds the issue by IDD's reading. The marker is posted
        // again, now as the only claim, and verified again after it lands.
        c.claims.repostMarker(d.claimId, now);
      } else c.store.transaction(() => c.store.claims.setVerify(d.claimId, null));
    }
  }
  const next = c.store.claims.nextVerifyMs();
  if (next !== null) c.schedules.at("verify", next);
}
