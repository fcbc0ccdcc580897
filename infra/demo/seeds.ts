// The demo repositories, moved in time so the bundled snapshot's "now" is the real now: the
// closes it describes as an hour ago are an hour ago when the demo runs.
import { readFile } from "node:fs/promises";
import type { SnapshotInput } from "../../shared/graph/snapshot.ts";

const SNAPSHOT = new URL("./snapshot.json", import.meta.url);

function shift(iso: string, deltaMs: number): string {
  return new Date(Date.parse(iso) + deltaMs).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** acme/sdk's issues (the bundled snapshot names them only as acme/rocket's blockers). */
const SDK_TITLES: Record<number, string> = {
  40: "Release the new auth client",
  42: "Ship SDK v3",
};

/**
 * The story of issue 22 (`npm start`): before the App is installed, an agent asked a question on
 * a held issue; once it runs, a person with write access answers, and the answer becomes a
 * `reply` item of the queue.
 */
export const demoQuestion = {
  issue: 10,
  agent: "rocket-agent[bot]",
  question:
    "Before I start on the rewrite: should billing target Stripe only, or keep Adyen for EU cards?",
  person: "alice",
  answer: "Stripe only: Adyen goes away in January.",
} as const;

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
  // The cross-repository blockers live in a second repository of the same account, which has
  // ready work of its own: the org queue's story (`npm start`) claims it across repositories.
  const sdk: SnapshotInput = {
    repo: "acme/sdk",
    issues: (snapshot.external ?? []).map((e) => {
      const number = Number(e.ref.split("#")[1]);
      const closedAt = move(e.closedAt);
      const open = e.state === "open";
      return {
        number,
        title: SDK_TITLES[number] ?? `SDK issue ${number}`,
        state: e.state,
        stateReason: e.state === "closed" ? "completed" : null,
        createdAt: shift("2026-11-01T00:00:00Z", delta),
        updatedAt: closedAt ?? shift("2026-11-20T00:00:00Z", delta),
        closedAt,
        labels: open ? ["agent:ready"] : [],
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
