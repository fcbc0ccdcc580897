import type { z } from "zod";

/** `issues[3].labels[0]`: the path notation every validation message in switchyard uses. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? "(root)" : out;
}

/** The first problem of a failed parse, as `path: message`, so users learn what to fix first. */
export function firstIssue(error: z.ZodError): { path: string; message: string } {
  const issue = error.issues[0];
  if (!issue) return { path: "(root)", message: "invalid input" };
  return { path: formatPath(issue.path), message: issue.message };
}

export function describeZodError(error: z.ZodError): string {
  const { path, message } = firstIssue(error);
  return `${path}: ${message}`;
}

/** Thrown by the `parseX` helpers of shared/ on invalid input; `path` names the first bad field. */
export class ValidationError extends Error {
  override name = "ValidationError";
  readonly path: string;
  constructor(what: string, error: z.ZodError) {
    const first = firstIssue(error);
    super(`invalid ${what} at ${first.path}: ${first.message}`);
    this.path = first.path;
  }
}
