// The demo repositories, moved in time so the bundled snapshot's "now" is the real now: the
// closes it describes as an hour ago are an hour ago when the demo runs.
import { readFile } from "node:fs/promises";
import type { SnapshotInput } from "../../shared/graph/snapshot.ts";

const SNAPSHOT = new URL("./snapshot.json", import.meta.url);

function shift(iso: string, deltaMs: number): string {
  return new Date(Date.parse(iso) + deltaMs).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export async function demoSeeds(nowMs: number): Promise<{
  sdk: SnapshotInput;
  rocket: SnapshotInput;
  /** acme/rocket as the Worker reads it once installed: its issues and acme/sdk's states. */
  graph: SnapshotInput;
}> {
  const snapshot = JSON.parse(await readFile(SNAPSHOT, "utf8")) as SnapshotInput;
  const delta =
    Math.floor((nowMs - Date.parse(snapshot.now ?? new Date(nowMs).toISOString())) / 1000) * 1000;
  const move = (iso: string | null | undefined) => (iso ? shift(iso, delta) : (iso ?? null));
  const rocket: SnapshotInput = {
    repo: snapshot.repo,
    issues: snapshot.issues.map((i) => ({
      ...i,
      createdAt: move(i.createdAt)!,
      updatedAt: move(i.updatedAt)!,
      closedAt: move(i.closedAt),
      labelEvents: i.labelEvents?.map((e) => ({ ...e, createdAt: move(e.createdAt)! })),
    })),
  };
  // The cross-repository blockers live in a second repository of the same account.
  const sdk: SnapshotInput = {
    repo: "acme/sdk",
    issues: (snapshot.external ?? []).map((e) => {
      const number = Number(e.ref.split("#")[1]);
      const closedAt = move(e.closedAt);
      return {
        number,
        title: `SDK issue ${number}`,
        state: e.state,
        stateReason: e.state === "closed" ? "completed" : null,
        createdAt: shift("2026-11-01T00:00:00Z", delta),
        updatedAt: closedAt ?? shift("2026-11-20T00:00:00Z", delta),
        closedAt,
        labels: [],
      };
    }),
  };
  const graph: SnapshotInput = {
    ...rocket,
    now: move(snapshot.now) ?? new Date(nowMs).toISOString(),
    external: snapshot.external?.map((e) => ({ ...e, closedAt: move(e.closedAt) })),
  };
  return { sdk, rocket, graph };
}
