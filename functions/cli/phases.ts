/**
 * Marks on the performance timeline where a graph command's phases end: the command started
 * (startup and imports behind it), the input was read, parsed and validated, the graph scanned,
 * the output written. `npm run bench -- cli` (bench/cli.ts) reads them to time the phases of a
 * whole process apart; a mark costs microseconds, and nothing else reads them.
 */
export type Phase = "start" | "read" | "parsed" | "scanned" | "written";

export function phase(name: Phase): void {
  performance.mark(`switchyard:${name}`);
}
