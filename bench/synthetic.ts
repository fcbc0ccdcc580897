import type { SnapshotInput } from "../shared/graph/snapshot.ts";

/** mulberry32: a tiny seeded PRNG, so every run benchmarks the same repository. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NOW = Date.parse("2026-11-29T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

/**
 * A repository of `n` issues with about one edge per issue: 30% have a parent, 70% one blocker
 * (5% of those cross-repo), 35% closed (some inside the kick window), labels on a few.
 */
export function syntheticSnapshot(n: number, seed = 42): SnapshotInput {
  const rnd = prng(seed + n);
  const pick = (max: number) => 1 + Math.floor(rnd() * max);
  const issues = [];
  for (let number = 1; number <= n; number++) {
    const closed = rnd() < 0.35;
    const closedAt = closed ? iso(NOW - Math.floor(rnd() * 48 * 3_600_000)) : null;
    const labels: string[] = [];
    const r = rnd();
    if (r < 0.05) labels.push("agent:ready");
    else if (r < 0.07) labels.push("agent:hold");
    else if (r < 0.08) labels.push("agent:processing");
    else if (r < 0.09) labels.push("epic:core");
    const edge = rnd();
    const parent = edge < 0.3 ? pick(n) : null;
    const blockedBy = edge >= 0.3 ? [rnd() < 0.05 ? `other/repo#${pick(1000)}` : pick(n)] : [];
    issues.push({
      number,
      title: `Synthetic issue ${number}`,
      state: closed ? ("closed" as const) : ("open" as const),
      stateReason: closed ? ("completed" as const) : null,
      createdAt: "2026-01-01T00:00:00Z",
      updatedAt: closedAt ?? "2026-11-01T00:00:00Z",
      closedAt,
      labels,
      parent,
      blockedBy,
    });
  }
  const external = [];
  for (let k = 1; k <= 1000; k += 2) {
    external.push({
      ref: `other/repo#${k}`,
      state: "closed" as const,
      closedAt: iso(NOW - k * 60_000),
    });
  }
  return { repo: "bench/synthetic", now: iso(NOW), issues, external };
}
