/*
 * A fast path for `parseSnapshot`: a hand-written check of the snapshot shape that builds the
 * same output `SnapshotSchema` (zod) would, for inputs it can vouch for, and gives up otherwise.
 *
 * Why: zod validates a 100k-issue snapshot in hundreds of milliseconds in a fresh process (the
 * CLI's case), several times what the scan itself costs. zod stays the schema and the source of
 * every error message: whenever this check says "not sure" (`undefined`), `parseSnapshot` asks
 * zod, which either accepts (an input shape this check does not cover) or names the first bad
 * path. So the one rule this module must keep is: what it returns is exactly what zod returns
 * for the same input (same values, same keys, same key order), or, without the copy
 * (`fastCheckSnapshot`), the input itself only when zod would accept it and make the same values
 * of it. Property tests compare them with zod on random valid and invalid inputs
 * (test/unit/graph/snapshot-fast-check.test.ts).
 */
import { CROSS_REPO_REF_PATTERN, canonicalRef, refKey } from "./refs.ts";
import type { ExternalIssue, LabelEvent, Snapshot, SnapshotIssue } from "./snapshot.ts";

/** zod's `z.iso.datetime({ offset: true })` pattern (zod/v4/core/regexes.js), verbatim. */
const ISO_DATETIME =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$/;
const REPO_NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}$/;
const MAX_ISSUE = 2 ** 31 - 1;

/** A decimal digit's value at `i`, or -1. */
function digit(s: string, i: number): number {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
}

function two(s: string, i: number): number {
  const a = digit(s, i);
  const b = digit(s, i + 1);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
}

/**
 * `YYYY-MM-DDTHH:MM:SSZ`, the form GitHub writes, or with a fraction of a second
 * (`...:SS.sssZ`, as `Date.prototype.toISOString` writes), checked by character codes; the same
 * calendar rules as the pattern above (its leap years: the last two digits divisible by 4 and
 * not 00, or the first two divisible by 4 when the last two are 00). False leaves it to the
 * pattern.
 */
function isPlainUtcInstant(s: string): boolean {
  const n = s.length;
  if (n < 20 || s.charCodeAt(n - 1) !== 90 /* Z */) return false;
  if (n > 20) {
    // A fraction: "." and one digit or more.
    if (n === 21 || s.charCodeAt(19) !== 46 /* . */) return false;
    for (let i = 20; i < n - 1; i++) if (digit(s, i) < 0) return false;
  }
  if (s[4] !== "-" || s[7] !== "-" || s[10] !== "T" || s[13] !== ":" || s[16] !== ":") return false;
  const century = two(s, 0);
  const yy = two(s, 2);
  const month = two(s, 5);
  const day = two(s, 8);
  if (century < 0 || yy < 0 || day < 1) return false;
  const hour = two(s, 11);
  const minute = two(s, 14);
  const second = two(s, 17);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return false;
  if (month === 2) {
    const leap = yy !== 0 ? yy % 4 === 0 : century % 4 === 0;
    return day <= (leap ? 29 : 28);
  }
  if (month === 4 || month === 6 || month === 9 || month === 11) return day <= 30;
  return month >= 1 && month <= 12 && day <= 31;
}

function isInstant(value: unknown): value is string {
  return typeof value === "string" && (isPlainUtcInstant(value) || ISO_DATETIME.test(value));
}

function isIssueNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= MAX_ISSUE;
}

function isIssueRef(value: unknown): value is number | string {
  return isIssueNumber(value) || (typeof value === "string" && CROSS_REPO_REF_PATTERN.test(value));
}

/** An object zod reads as one: not null, not an array (zod reads properties with `in` and `[]`). */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string array whose entries are all non-empty. */
function isLabelList(value: unknown): value is string[] {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) {
    const label = value[i];
    if (typeof label !== "string" || label.length === 0) return false;
  }
  return true;
}

function isRefList(value: unknown): value is Array<number | string> {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (!isIssueRef(value[i])) return false;
  return true;
}

function isLabelEvent(value: unknown): value is LabelEvent {
  if (!isRecord(value)) return false;
  const { label, action, actor, createdAt } = value;
  if (typeof label !== "string" || label.length === 0) return false;
  if (action !== "labeled" && action !== "unlabeled") return false;
  if (actor !== undefined && actor !== null && typeof actor !== "string") return false;
  return isInstant(createdAt);
}

function isIssue(value: unknown): value is SnapshotIssue {
  if (!isRecord(value)) return false;
  const { number, title, state, stateReason, createdAt, updatedAt, closedAt } = value;
  if (!isIssueNumber(number) || typeof title !== "string") return false;
  if (state !== "open" && state !== "closed") return false;
  if (
    stateReason !== null &&
    stateReason !== "completed" &&
    stateReason !== "not_planned" &&
    stateReason !== "reopened" &&
    stateReason !== "duplicate"
  )
    return false;
  if (!isInstant(createdAt) || !isInstant(updatedAt)) return false;
  if (closedAt !== null && !isInstant(closedAt)) return false;
  if (!isLabelList(value.labels)) return false;
  // Comments and the body's author are rare and read by one rule (replies): zod checks them.
  if ("comments" in value || "author" in value) return false;
  const { parent, blockedBy, body, labelEvents } = value;
  if (parent !== undefined && parent !== null && !isIssueRef(parent)) return false;
  if (blockedBy !== undefined && !isRefList(blockedBy)) return false;
  if (body !== undefined && body !== null && typeof body !== "string") return false;
  if (labelEvents !== undefined) {
    if (!Array.isArray(labelEvents)) return false;
    for (let i = 0; i < labelEvents.length; i++) if (!isLabelEvent(labelEvents[i])) return false;
  }
  return true;
}

function isExternalIssue(value: unknown): value is ExternalIssue {
  if (!isRecord(value)) return false;
  const { ref, state, closedAt } = value;
  if (typeof ref !== "string" || !CROSS_REPO_REF_PATTERN.test(ref)) return false;
  if (state !== "open" && state !== "closed") return false;
  return closedAt === undefined || closedAt === null || isInstant(closedAt);
}

// Copies of checked values as zod makes them: the schema's keys in the schema's order, an
// optional key exactly when the input has it (even as undefined), unknown keys dropped.

function copyLabelEvent(value: LabelEvent): LabelEvent {
  const { label, action, actor, createdAt } = value;
  return actor !== undefined || "actor" in value
    ? { label, action, actor, createdAt }
    : { label, action, createdAt };
}

function copyIssue(value: SnapshotIssue): SnapshotIssue {
  const out: SnapshotIssue = {
    number: value.number,
    title: value.title,
    state: value.state,
    stateReason: value.stateReason,
    createdAt: value.createdAt,
    updatedAt: value.updatedAt,
    closedAt: value.closedAt,
    labels: [...value.labels],
  };
  if ("parent" in value) out.parent = value.parent;
  if ("blockedBy" in value) out.blockedBy = value.blockedBy && [...value.blockedBy];
  if ("body" in value) out.body = value.body;
  if ("labelEvents" in value) out.labelEvents = value.labelEvents?.map(copyLabelEvent);
  return out;
}

function copyExternalIssue(value: ExternalIssue): ExternalIssue {
  const out: ExternalIssue = { ref: value.ref, state: value.state };
  if ("closedAt" in value) out.closedAt = value.closedAt;
  return out;
}

/**
 * The snapshot zod would make of `input`, or `undefined` when this check cannot vouch for the
 * input (invalid, or a shape it does not cover): then ask `SnapshotSchema`.
 */
export function fastParseSnapshot(input: unknown): Snapshot | undefined {
  return checkSnapshot(input, true);
}

/**
 * `input` itself when this check vouches for it, else `undefined` (then ask `SnapshotSchema`):
 * no copy is made, so unknown fields stay on it; read on every key of the schema, it is what
 * zod would make of it. For a caller that reads it once (the CLI's scan of a large file).
 */
export function fastCheckSnapshot(input: unknown): Snapshot | undefined {
  return checkSnapshot(input, false);
}

function checkSnapshot(input: unknown, copy: boolean): Snapshot | undefined {
  if (!isRecord(input)) return undefined;
  const { repo, now, issues, external } = input;
  if (typeof repo !== "string" || !REPO_NAME.test(repo)) return undefined;
  if (now !== undefined && !isInstant(now)) return undefined;
  if (!Array.isArray(issues)) return undefined;
  const outIssues = copy ? new Array<SnapshotIssue>(issues.length) : undefined;
  // The refinement's duplicate check, in the same pass: numbers are usually dense (1..N), so a
  // bitmap holds them, and a Set the few beyond it.
  const seen = new Uint8Array(issues.length * 4 + 1024);
  let seenBeyond: Set<number> | undefined;
  for (let i = 0; i < issues.length; i++) {
    const issue: unknown = issues[i];
    if (!isIssue(issue)) return undefined;
    const n = issue.number;
    if (n < seen.length) {
      if (seen[n] === 1) return undefined;
      seen[n] = 1;
    } else {
      seenBeyond ??= new Set();
      if (seenBeyond.has(n)) return undefined;
      seenBeyond.add(n);
    }
    if (outIssues !== undefined) outIssues[i] = copyIssue(issue);
  }
  if (external !== undefined) {
    if (!Array.isArray(external)) return undefined;
    for (let i = 0; i < external.length; i++) if (!isExternalIssue(external[i])) return undefined;
    if (hasDuplicateRefs(repo, external as ExternalIssue[])) return undefined;
  }
  if (!copy) return input as Snapshot;
  // Built key by key to keep the schema's key order with optional keys in between.
  const out: Record<string, unknown> = { repo };
  if (now !== undefined || "now" in input) out.now = now;
  out.issues = outIssues;
  if (external !== undefined || "external" in input)
    out.external = (external as ExternalIssue[] | undefined)?.map(copyExternalIssue);
  return out as Snapshot;
}

/** The schema's refinement for `external`: no reference twice (compared as the scan does). */
function hasDuplicateRefs(repo: string, external: readonly ExternalIssue[]): boolean {
  const refs = new Set<string>();
  for (const entry of external) {
    const key = refKey(canonicalRef(entry.ref, repo));
    if (refs.has(key)) return true;
    refs.add(key);
  }
  return false;
}
