// What a RepoObject tells about itself: `status()` (identity, schedules, queued writes, whether
// an alarm run is in progress) and the status page's read beyond the graph API: the graph
// picture's model (with the fleet's claims, queue and dead letters marked), the queue with
// reasons, live claims (the fleet API's and IDD markers'), dead letters with their attempts,
// the claims that ended in the last week (for the figures) and the latest audit entries.
// Read-only.

import { DAY_MS, formatInstant } from "../../../shared/graph/time.ts";
import { drawPicture } from "../../../shared/status/picture.ts";
import { choosePicture } from "../../../shared/status/picture-compact.ts";
import { shownWithoutLogin } from "../../../shared/status/public-page.ts";
import type { StatusRead } from "../../../shared/status/view.ts";
import type { RepoStatus } from "../directory/directory-object.ts";
import type { AuditEntry } from "../journal-store.ts";
import type { RepoContext } from "./context.ts";
import { pause } from "./pause.ts";
import type { ReconcileProgress } from "./reconcile-progress-store.ts";
import type { RepoIdentity } from "./repo-store.ts";
import type { Schedules } from "./schedules-store.ts";

/** What the page reads (shared/status/view.ts `StatusRead`), with the audit entries as stored. */
export type StatusView = Omit<StatusRead, "audit"> & { audit: AuditEntry[] };
type StatusClaim = StatusRead["claims"][number];

/** Queue items listed on the page (the figure counts them all). */
const QUEUE_SHOWN = 50;
const AUDIT_SHOWN = 25;
const ENDED_READ = 5_000;

export interface ObjectStatus {
  identity: RepoIdentity | null;
  status: RepoStatus | null;
  schedules: ReturnType<Schedules["list"]>;
  pendingWrites: number;
  running: boolean;
  /** The full reconcile in progress (pages done, issues seen, run id); null when none is. */
  reconcile: ReconcileProgress | null;
}

/** Identity, schedules, queued writes, and whether an alarm run is in progress right now. */
export function objectStatus(c: RepoContext): ObjectStatus {
  const identity = c.store.identity() ?? null;
  return {
    identity,
    status: identity?.status ?? null,
    schedules: c.schedules.list(),
    pendingWrites: c.producer.pending().length,
    running: c.alarmRun !== null,
    reconcile: c.store.reconcileProgress(),
  };
}

/** Whether the page is shown without login (shared/status/public-page.ts); builds nothing. */
export function publicPage(c: RepoContext): boolean {
  return shownWithoutLogin({
    private: c.store.meta.get("repository")?.private ?? null,
    optedIn: c.store.config().status.public,
  });
}

/** The status page's read beyond the graph API. */
export async function statusView(c: RepoContext, nowMs: number): Promise<StatusView> {
  // What it reads is made ahead in steps (webhooks between), as for the graph API and grants.
  await c.store.prepareGraph(pause);
  await c.scans.prepare(nowMs, pause);
  await c.views.prepare(nowMs, pause);
  const view = readStatus(c, nowMs);
  // Reading the queue may notice a stuck label taken off by hand and owe writes for it.
  await c.schedules.rearm();
  return view;
}

function readStatus(c: RepoContext, nowMs: number): StatusView {
  const { store, scans } = c;
  const queue = c.views.answer({ limit: QUEUE_SHOWN }, nowMs).body as {
    total: number;
    items: Array<StatusRead["queue"]["items"][number] & Record<string, unknown>>;
  };
  const view = c.views.current(nowMs);
  const live = store.claims.live(nowMs);
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
  const stuckRows = store.claims.fleetRows().filter((f) => f.stuck);
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
        priority: i.priority ?? null,
        ...(i.paused !== undefined ? { paused: i.paused } : {}),
      })),
    },
    claims,
    deadLetters: stuckRows.map((f) => ({
      number: f.number,
      title: titleOf(f.number),
      stuckAt: f.stuckMs === null ? null : formatInstant(f.stuckMs),
      attempts: store.claims.attempts(f.number, f.resetFence),
    })),
    writes: store.writes.openAt(nowMs).map((w) => ({
      number: w.number,
      agentId: store.claims.get(w.claimId)?.agentId ?? null,
      fence: w.fence,
      kind: w.kind,
      deadline: formatInstant(w.deadlineMs),
      closesAt: formatInstant(w.closeAtMs),
      outcome: w.outcome,
    })),
    ended: store.claims.endedSince(nowMs - 7 * DAY_MS, ENDED_READ),
    audit: store.auditLog(AUDIT_SHOWN),
  };
}
