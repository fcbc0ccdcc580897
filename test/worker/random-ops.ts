// What the convergence and ordering properties share: random user actions on the simulator,
// and the per-issue facts they compare with GitHub's state.
import fc from "fast-check";
import type { Snapshot } from "../../shared/graph/snapshot.ts";
import { sim } from "./helpers.ts";

/** Issues #1..#N of the repository under test. */
export const N = 5;
const num = fc.integer({ min: 1, max: N });

export type Op = { path: string; method?: string; body?: unknown };

/** A user action on GitHub: close, reopen, label, unlabel, (un)link a sub-issue or a blocker. */
export const op: fc.Arbitrary<Op> = fc.oneof<fc.Arbitrary<Op>[]>(
  num.map((n) => ({ path: `issues/${n}/close`, body: {} })),
  num.map((n) => ({ path: `issues/${n}/reopen`, body: {} })),
  fc
    .tuple(num, fc.constantFrom("agent:hold", "bug", "agent:ready"))
    .map(([n, l]) => ({ path: `issues/${n}/labels`, body: { labels: [l] } })),
  fc
    .tuple(num, fc.constantFrom("agent:hold", "bug"))
    .map(([n, l]) => ({ path: `issues/${n}/labels/${encodeURIComponent(l)}`, method: "DELETE" })),
  fc.tuple(num, num).map(([p, c]) => ({ path: `issues/${p}/sub-issues`, body: { child: c } })),
  fc.tuple(num, num).map(([p, c]) => ({ path: `issues/${p}/sub-issues/${c}`, method: "DELETE" })),
  fc.tuple(num, num).map(([x, b]) => ({ path: `issues/${x}/blocked-by`, body: { blocker: b } })),
  fc.tuple(num, num).map(([x, b]) => ({ path: `issues/${x}/blocked-by/${b}`, method: "DELETE" })),
);

/** Performs an action; GitHub refuses some (a cycle, a missing edge), and so may the simulator. */
export async function perform(repo: string, action: Op): Promise<void> {
  try {
    await sim(`/repos/${repo}/${action.path}`, {
      method: action.method ?? "POST",
      ...(action.body !== undefined ? { body: action.body } : {}),
    });
  } catch {
    // refused, as GitHub would
  }
}

/** The facts switchyard promises to get right, per issue. */
export function facts(snapshot: Pick<Snapshot, "issues">) {
  return [...snapshot.issues]
    .sort((a, b) => a.number - b.number)
    .map((i) => ({
      number: i.number,
      state: i.state,
      labels: [...i.labels].sort(),
      parent: i.parent ?? null,
      blockedBy: [...(i.blockedBy ?? [])].map(String).sort(),
    }));
}
