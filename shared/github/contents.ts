// Reading one text file of a repository (`.github/switchyard.yml`, spec 6.5) through the REST
// contents API in its JSON form. The Worker may read the file on every reconcile, so the read
// can be conditional: with the ETag of the last answer, an unchanged file costs a 304, which
// GitHub does not count against the rate limit.
import { z } from "zod";
import type { GitHubClient, GitHubResponse } from "./client.ts";
import { GitHubApiError, GitHubContentError } from "./errors.ts";
import { splitRepo } from "./fetch-snapshot.ts";

export type FileFetch =
  /** The file's text (UTF-8, BOM removed), git blob `sha`, and the ETag for the next read. */
  | { status: "found"; text: string; sha: string; etag: string | null }
  /** The ETag given still matches: the file is as it was when that ETag was returned. */
  | { status: "not-modified"; etag: string }
  /** GitHub answered 404: no such file (or no such repository, or no access to it). */
  | { status: "missing" };

export interface FileFetchOptions {
  /** Branch, tag or commit id; default: the repository's default branch. */
  ref?: string;
  /** ETag of an earlier `found` answer for the same repository, path and ref. */
  etag?: string | null;
}

const FileSchema = z.object({
  type: z.literal("file"),
  encoding: z.string(),
  size: z.number().int().nonnegative(),
  content: z.string(),
  sha: z.string().min(1),
});

const KindSchema = z.object({ type: z.string() });

/** A path as git stores it: relative, `/`-separated, no empty, `.` or `..` segment. */
function checkPath(path: string): void {
  if (path === "" || path.split("/").some((part) => part === "" || part === "." || part === "..")) {
    throw new Error(
      `expected a file path relative to the repository root (like .github/switchyard.yml), got "${path}"`,
    );
  }
}

/** Decodes GitHub's base64 (wrapped in lines) as UTF-8; null when the bytes are not UTF-8. */
function decodeUtf8Base64(content: string): { bytes: number; text: string | null } | null {
  let binary: string;
  try {
    binary = atob(content.replace(/\s+/g, ""));
  } catch {
    return null;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  try {
    return {
      bytes: bytes.length,
      text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes),
    };
  } catch {
    return { bytes: bytes.length, text: null };
  }
}

/**
 * Reads a text file with `GET /repos/{owner}/{repo}/contents/{path}`. With `etag`, an
 * unchanged file answers `not-modified` (a free 304). A 404 is `missing`; other failures throw
 * GitHubApiError (transient ones are retried first); a directory, a symlink or submodule, a
 * file over 1 MB or one that is not UTF-8 throws GitHubContentError.
 */
export async function fetchFileIfChanged(
  client: GitHubClient,
  repo: string,
  path: string,
  opts: FileFetchOptions = {},
): Promise<FileFetch> {
  const { owner, name } = splitRepo(repo);
  checkPath(path);
  const ref = opts.ref ?? null;
  const operation = `read ${path} of ${repo}${ref ? ` at ${ref}` : ""}`;
  let res: GitHubResponse<unknown>;
  try {
    res = await client.send<unknown>({
      operation,
      route: "GET /repos/{owner}/{repo}/contents/{path}",
      params: { owner, repo: name, path, ...(ref ? { ref } : {}) },
      headers: opts.etag ? { "if-none-match": opts.etag } : undefined,
      idempotent: true,
    });
  } catch (error) {
    // A ref that names nothing is the caller's mistake, not a missing file.
    if (
      error instanceof GitHubApiError &&
      error.status === 404 &&
      !/no commit found for the ref/i.test(error.reason)
    )
      return { status: "missing" };
    throw error;
  }
  if (res.status === 304) return { status: "not-modified", etag: res.headers.etag ?? opts.etag! };
  const refuse = (kind: GitHubContentError["kind"], reason: string) =>
    new GitHubContentError({ kind, repo, path, ref, reason });
  const badResponse = (reason: string) =>
    new GitHubApiError({
      kind: "bad-response",
      operation,
      request: `GET /repos/${owner}/${name}/contents/${path}`,
      status: res.status,
      attempts: 1,
      reason,
    });
  if (Array.isArray(res.data)) throw refuse("directory", "is a directory, not a file");
  const kind = KindSchema.safeParse(res.data);
  if (!kind.success) throw badResponse("the answer has no content type");
  if (kind.data.type === "dir") throw refuse("directory", "is a directory, not a file");
  if (kind.data.type !== "file")
    throw refuse("not-a-file", `is a ${kind.data.type}, not a regular file`);
  const file = FileSchema.safeParse(res.data);
  if (!file.success) throw badResponse("the file has no content, encoding, size or sha");
  const { encoding, size, content, sha } = file.data;
  if (encoding === "none" || (content === "" && size > 0)) {
    throw refuse(
      "too-large",
      `is ${size} bytes; the contents API returns the text of files up to 1 MB only`,
    );
  }
  if (encoding !== "base64") throw badResponse(`unexpected content encoding "${encoding}"`);
  const decoded = decodeUtf8Base64(content);
  if (!decoded) throw badResponse("the content is not valid base64");
  if (decoded.bytes !== size)
    throw badResponse(`the content is ${decoded.bytes} bytes but the file is ${size}`);
  if (decoded.text === null) throw refuse("not-text", "is not UTF-8 text");
  return { status: "found", text: decoded.text, sha, etag: res.headers.etag ?? null };
}

/**
 * The text of a file, or null when it does not exist (404). Throws like fetchFileIfChanged.
 */
export async function fetchFileText(
  client: GitHubClient,
  repo: string,
  path: string,
  ref?: string,
): Promise<string | null> {
  const result = await fetchFileIfChanged(client, repo, path, { ref });
  return result.status === "found" ? result.text : null;
}
