// The status page's read of a RepoObject beyond `graph()`: the graph picture's model (with the
// fleet's claims, queue and dead letters marked), the queue with reasons, live claims (the
// fleet API's and IDD markers'), dead letters with their attempts, the claims that ended in
// the last week (for the figures) and the latest audit entries. Read-only.

import { DAY_MS, formatInstant } from "../../../shared/graph/time.ts";
import { drawPicture } from "../../../shared/status/picture.ts";
import { choosePicture } from "../../../shared/status/picture-compact.ts";
import type { StatusRead } from "../../../shared/status/view.ts";
import type { AuditEntry } from "../journal-store.ts";
import type { Fleet } from "./fleet.ts";
import type { GraphScans } from "./graph-scans.ts";
import type { RepoStore } from "./repo-store.ts";

/** What the page reads (shared/status/view.ts `StatusRead`), with the audit entries as stored. */
export type StatusView = Omit<StatusRead, "audit"> & { audit: AuditEntry[] };
type StatusClaim = StatusRead["claims"][number];

/** Queue items listed on the page (the figure counts them all). */
const QUEUE_SHOWN = 50;
const AUDIT_SHOWN = 25;
const ENDED_READ = 5_000;

export function statusView(
  store: RepoStore,
  fleet: Fleet,
  scans: GraphScans,
  nowMs: number,
): StatusView {
  const queue = fleet.queue({ limit: QUEUE_SHOWN }, nowMs).body as {
    total: number;
    items: Array<StatusRead["queue"]["items"][number] & Record<string, unknown>>;
  };
  const view = fleet.queueView(nowMs);
  const live = fleet.claims.live(nowMs);
  const claims: StatusClaim[] = live.map((c) => ({
    number: c.number,
    agentId: c.agentId,
    machine: c.machine,
    fence: c.fence,
    grantedAt: formatInstant(c.grantedMs),
    expiresAt: formatInstant(c.expiresMs),
    source: "fleet",
  }));
  for (const [number, holder] of [...view.idd].sort((a, b) => a[0] - b[0])) {
    claims.push({
      number,
      agentId: holder.agentId,
      machine: null,
      fence: null,
      grantedAt: null,
      expiresAt: holder.staleAt,
      source: "idd",
    });
  }
  const stuckRows = fleet.claims.fleetRows().filter((f) => f.stuck);
  const titleOf = (n: number) => view.analysis.graph.issue(n)?.title ?? "";
  // The picture from the kept scan: kinds and the choice over its typed arrays, then only the
  // chosen issues (at most MAX_PICTURE_NODES) read from the tables, never every issue.
  const scan = scans.current(nowMs);
  const { kinds, total } = choosePicture(scan.compact, {
    queued: new Set(queue.items.map((i) => i.number)),
    claimed: new Set(claims.map((c) => c.number)),
    stuck: new Set(stuckRows.map((f) => f.number)),
  });
  const picture = drawPicture(
    scan.graph.repo,
    store.reads.snapshotIssues(kinds.keys()),
    kinds,
    total,
  );
  return {
    picture,
    queue: {
      total: queue.total,
      items: queue.items.map((i) => ({
        number: i.number,
        title: i.title,
        reason: i.reason,
        attempts: i.attempts,
      })),
    },
    claims,
    deadLetters: stuckRows.map((f) => ({
      number: f.number,
      title: titleOf(f.number),
      stuckAt: f.stuckMs === null ? null : formatInstant(f.stuckMs),
      attempts: fleet.claims.attempts(f.number, f.resetFence),
    })),
    ended: fleet.claims.endedSince(nowMs - 7 * DAY_MS, ENDED_READ),
    audit: store.auditLog(AUDIT_SHOWN),
  };
}
