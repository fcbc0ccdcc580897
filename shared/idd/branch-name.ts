import { DEFAULT_CONFIG } from "../config/schema.ts";

/**
 * IDD branch names. The canonical name is `issue/<n>-<slug>` (spec section 5), computed
 * identically by every agent so two sessions working one issue collide on the branch instead
 * of opening two pull requests. `claims.branchPattern` may name another scheme
 * (`claude/issue-{number}`, `claude/issue-{number}-p{phase}`).
 */

export const STOP_WORDS: readonly string[] = [
  "a",
  "an",
  "the",
  "and",
  "or",
  "in",
  "for",
  "to",
  "with",
  "from",
];
export const MAX_SLUG_LENGTH = 40;
export const FALLBACK_SLUG = "task";

/**
 * The slug of an issue title: lower-case; every character outside `a-z0-9` becomes `-`; split
 * on `-`; drop empty tokens and stop words; rejoin with `-`; over 40 characters, cut to 40 and,
 * when the cut falls inside a token and the cut part has a `-`, back off to its last `-`; strip
 * trailing `-`; empty gives `task`.
 */
export function slugify(title: string): string {
  const tokens = title
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "-")
    .split("-")
    .filter((token) => token !== "" && !STOP_WORDS.includes(token));
  let slug = tokens.join("-");
  if (slug.length > MAX_SLUG_LENGTH) {
    const cut = slug.slice(0, MAX_SLUG_LENGTH);
    const insideToken = slug[MAX_SLUG_LENGTH] !== "-" && !cut.endsWith("-");
    const lastHyphen = cut.lastIndexOf("-");
    slug = insideToken && lastHyphen >= 0 ? cut.slice(0, lastHyphen) : cut;
  }
  slug = slug.replace(/-+$/, "");
  return slug === "" ? FALLBACK_SLUG : slug;
}

function assertIssueNumber(number: number): void {
  if (!Number.isSafeInteger(number) || number < 1) {
    throw new RangeError(`the issue number must be a positive integer, got ${number}`);
  }
}

/** The canonical IDD branch: `issue/<number>-<slug>`. */
export function branchName(number: number, title: string): string {
  assertIssueNumber(number);
  return `issue/${number}-${slugify(title)}`;
}

const PLACEHOLDER = /\{([^{}]*)\}/g;
const KNOWN = new Set(["number", "slug", "phase"]);

/**
 * Checks a `claims.branchPattern`: only `{number}`, `{slug}` and `{phase}` placeholders,
 * `{number}` required (a pattern without it gives every issue the same branch), and a result
 * that is a valid git branch name. Returns the problem, or null when the pattern is usable.
 */
export function branchPatternProblem(pattern: string): string | null {
  for (const match of pattern.matchAll(PLACEHOLDER)) {
    if (!KNOWN.has(match[1]!))
      return `unknown placeholder {${match[1]}} (use {number}, {slug}, {phase})`;
  }
  if (!pattern.includes("{number}")) return "the pattern must contain {number}";
  const sample = pattern.replace(PLACEHOLDER, "x");
  if (/[{}]/.test(sample)) return "unbalanced braces";
  return gitRefProblem(sample);
}

/** The subset of `git check-ref-format --branch` rules a pattern's fixed text can break. */
function gitRefProblem(name: string): string | null {
  const control = [...name].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);
  if (control || /[\s~^:?*[\\]/.test(name)) {
    return "a branch name cannot contain whitespace, control characters or any of ~ ^ : ? * [ \\";
  }
  if (name.includes("..")) return "a branch name cannot contain `..`";
  if (name.includes("@{")) return "a branch name cannot contain `@{`";
  if (name.includes("//")) return "a branch name cannot contain `//`";
  if (name.startsWith("/") || name.endsWith("/"))
    return "a branch name cannot start or end with `/`";
  if (name.startsWith("-")) return "a branch name cannot start with `-`";
  if (name.endsWith(".") || name.endsWith(".lock"))
    return "a branch name cannot end with `.` or `.lock`";
  if (name.split("/").some((part) => part.startsWith("."))) {
    return "a branch name component cannot start with `.`";
  }
  if (name === "@") return "a branch name cannot be `@`";
  return null;
}

export interface BranchPatternInput {
  number: number;
  title: string;
  /** Default `claims.branchPattern`: `issue/{number}-{slug}`. */
  pattern?: string;
  /** Required exactly when the pattern contains `{phase}`: a positive integer. */
  phase?: number | null;
}

/** Fills a branch pattern; throws RangeError naming the problem on bad input. */
export function renderBranchPattern(input: BranchPatternInput): string {
  const pattern = input.pattern ?? DEFAULT_CONFIG.claims.branchPattern;
  const problem = branchPatternProblem(pattern);
  if (problem) throw new RangeError(`invalid branch pattern "${pattern}": ${problem}`);
  assertIssueNumber(input.number);
  const phase = input.phase ?? null;
  const wantsPhase = pattern.includes("{phase}");
  if (wantsPhase && phase === null) {
    throw new RangeError(`the branch pattern "${pattern}" needs a phase`);
  }
  if (!wantsPhase && phase !== null) {
    throw new RangeError(`the branch pattern "${pattern}" has no {phase} placeholder`);
  }
  if (phase !== null && (!Number.isSafeInteger(phase) || phase < 1)) {
    throw new RangeError(`the phase must be a positive integer, got ${phase}`);
  }
  return pattern.replace(PLACEHOLDER, (_, name: string) =>
    name === "number"
      ? String(input.number)
      : name === "slug"
        ? slugify(input.title)
        : String(phase),
  );
}
