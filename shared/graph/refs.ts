/**
 * Issue references: a number (same repository) or `owner/repo#n` (any repository).
 * Everything in the graph compares references through `canonicalRef`, so a reference to
 * the snapshot's own repository written in long form is the same issue as its number.
 */
export type IssueRef = number | string;

const CROSS_REPO = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38})?)\/([A-Za-z0-9._-]{1,100})#([1-9]\d{0,9})$/;

export const CROSS_REPO_REF_PATTERN = CROSS_REPO;

export interface ParsedRef {
  owner: string;
  repo: string;
  number: number;
}

export function parseCrossRepoRef(ref: string): ParsedRef | null {
  const m = CROSS_REPO.exec(ref);
  if (!m) return null;
  return { owner: m[1]!, repo: m[2]!, number: Number(m[3]) };
}

/** GitHub repository names are case-insensitive; this is the key they are compared by. */
export function repoKey(fullName: string): string {
  return fullName.toLowerCase();
}

/**
 * The canonical form of a reference as seen from `ownRepo`: own-repository references become
 * numbers; other references keep their spelling (the caller compares them by `refKey`).
 */
export function canonicalRef(ref: IssueRef, ownRepo: string): IssueRef {
  if (typeof ref === "number") return ref;
  const parsed = parseCrossRepoRef(ref);
  if (parsed && repoKey(`${parsed.owner}/${parsed.repo}`) === repoKey(ownRepo))
    return parsed.number;
  return ref;
}

/** A lookup key that identifies the same issue regardless of owner/repo letter case. */
export function refKey(ref: IssueRef): string {
  return typeof ref === "number" ? `#${ref}` : ref.toLowerCase();
}

/** Numbers ascending, then cross-repository references by string: the order of every list. */
export function compareRefs(a: IssueRef, b: IssueRef): number {
  if (typeof a === "number") return typeof b === "number" ? a - b : -1;
  if (typeof b === "number") return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Canonical, deduplicated, sorted blockers. Two spellings of one cross-repo issue keep the one
 * that sorts first, so the result does not depend on input order.
 */
export function canonicalBlockers(raw: readonly IssueRef[], repo: string): readonly IssueRef[] {
  if (raw.length === 1 && typeof raw[0] === "number") return raw;
  const seen = new Map<string | number, IssueRef>();
  for (const r of raw) {
    const ref = canonicalRef(r, repo);
    const key = typeof ref === "number" ? ref : refKey(ref);
    const prior = seen.get(key);
    if (prior === undefined || compareRefs(ref, prior) < 0) seen.set(key, ref);
  }
  return [...seen.values()].sort(compareRefs);
}
