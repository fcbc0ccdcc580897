import type { Config } from "../config/schema.ts";

/**
 * Priority ranks (spec 6.4, config `priority`): from labels (`priority.labels`, label → rank) and
 * from a single-select field of an organization project (`priority.project.options`, option →
 * rank). Lower is more urgent; when both sources rank an issue the lower rank wins; an issue
 * ranked by neither is unranked (null, last in `order=priority`). Names compare
 * case-insensitively, as GitHub compares label names.
 */

export interface RankTable {
  labels: ReadonlyMap<string, number>;
  options: ReadonlyMap<string, number>;
}

/** The config's ranks, keyed by lower-cased name (made once per queue view). */
export function rankTable(priority: Config["priority"]): RankTable {
  const lower = (record: Record<string, number>) =>
    new Map(Object.entries(record).map(([name, rank]) => [name.toLowerCase(), rank] as const));
  return {
    labels: lower(priority.labels),
    options: lower(priority.project?.options ?? {}),
  };
}

/** An issue's rank from its labels and its project option (null when it has none). */
export function priorityRank(
  table: RankTable,
  labels: readonly string[],
  projectOption: string | null,
): number | null {
  let best: number | null = null;
  const take = (rank: number | undefined) => {
    if (rank !== undefined && (best === null || rank < best)) best = rank;
  };
  if (table.labels.size > 0)
    for (const label of labels) take(table.labels.get(label.toLowerCase()));
  if (projectOption !== null) take(table.options.get(projectOption.toLowerCase()));
  return best;
}
