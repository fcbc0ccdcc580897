/** One benchmark of `npm run bench`: prints its figures and says whether its targets hold. */
export interface Benchmark {
  name: string;
  run(): Promise<BenchmarkResult>;
}

export interface BenchmarkResult {
  /** Human-readable lines (a table, ratios). */
  report: string[];
  /** Each target with whether it held. */
  targets: { name: string; ok: boolean }[];
  /** Machine-readable figures for bench/README.md. */
  figures: Record<string, unknown>;
}
