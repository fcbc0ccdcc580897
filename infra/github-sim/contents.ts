// Files on a repository's default branch: `GET /repos/{owner}/{repo}/contents/{path}` as GitHub
// answers it, the commits a user pushes (control API: a signed `push` webhook each), and files
// loaded by a seed (no webhook). WebCrypto SHA-1 gives the ids: a file's `sha` is git's blob id
// (what `git hash-object` prints); tree and commit ids are SHA-1s of a canonical description
// (stable and unique, though not git objects).
import type { ApiResult, GitHubSimulator } from "./app.ts";
import { DEFAULT_BRANCH, fullName, type SimCommit, type SimFile, type SimRepo } from "./model.ts";
import { renderContentEntry, renderContentFile } from "./render.ts";
import { SimHttpError, type SimState } from "./state.ts";

/** GitHub leaves `content` empty (`encoding: "none"`) for files over 1 MB in the JSON form. */
export const MAX_CONTENT_BYTES = 1024 * 1024;

const DOCS = "https://docs.github.com/rest/repos/contents#get-repository-content";

/** Path → new text, or null to delete the file. */
export type FileChanges = Record<string, string | null>;

/** A repository file path as git stores it: relative, `/`-separated, no empty, `.` or `..` part. */
export function isFilePath(path: string): boolean {
  return (
    path !== "" &&
    !path.includes("\0") &&
    path.split("/").every((part) => part !== "" && part !== "." && part !== "..")
  );
}

function requireFilePath(path: string): void {
  if (!isFilePath(path))
    throw new SimHttpError(
      400,
      `control API: "${path}" is not a file path (relative, "/"-separated, no empty, "." or ".." segment)`,
    );
}

async function sha1Hex(bytes: Uint8Array | string): Promise<string> {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const digest = await crypto.subtle.digest("SHA-1", data as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A file with git's blob id: SHA-1 of `blob <size>\0<bytes>`. */
export async function blobFile(path: string, text: string): Promise<SimFile> {
  const content = new TextEncoder().encode(text);
  const header = new TextEncoder().encode(`blob ${content.length}\0`);
  const blob = new Uint8Array(header.length + content.length);
  blob.set(header);
  blob.set(content, header.length);
  return { path, text, sha: await sha1Hex(blob), size: content.length };
}

function treeListing(files: Iterable<SimFile>): string {
  return [...files]
    .map((f) => `${f.sha} ${f.path}`)
    .sort()
    .join("\n");
}

/** A path that is both a file and a directory (`a` and `a/b`) cannot exist in git. */
export function conflict(paths: string[]): string | null {
  const set = new Set(paths);
  for (const path of paths) {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join("/");
      if (set.has(prefix)) return `${prefix} is a file, so ${path} cannot exist`;
    }
  }
  return null;
}

function defaultMessage(added: string[], modified: string[], removed: string[]): string {
  if (added.length + modified.length + removed.length === 1)
    return added.length === 1
      ? `Create ${added[0]}`
      : modified.length === 1
        ? `Update ${modified[0]}`
        : `Delete ${removed[0]}`;
  return `Change ${added.length + modified.length + removed.length} files`;
}

/**
 * Commits `changes` to the default branch as `actor` did on github.com and announces the push.
 * Returns null (no commit, no webhook) when nothing changes, as git refuses an empty commit.
 */
export async function pushFiles(
  state: SimState,
  repo: SimRepo,
  changes: FileChanges,
  opts: {
    actor: string;
    message?: string;
    /** Commit even when no file changes (`git commit --allow-empty`): a new head for CI. */
    allowEmpty?: boolean;
    /** Announce the push as a force-push (`forced: true`). */
    force?: boolean;
  },
): Promise<SimCommit | null> {
  const paths = Object.keys(changes).sort();
  for (const path of paths) requireFilePath(path);
  // Hashing is asynchronous: compute against the head seen at the start and try again if
  // another push moved it in the meantime.
  for (;;) {
    const head = repo.head;
    const before = head ?? (await sha1Hex(`initial commit of ${fullName(repo)}`));
    const written: SimFile[] = [];
    const added: string[] = [];
    const modified: string[] = [];
    const removed: string[] = [];
    for (const path of paths) {
      const text = changes[path]!;
      const existing = repo.files.get(path);
      if (text === null) {
        if (!existing) throw new SimHttpError(404, `${path} does not exist on ${DEFAULT_BRANCH}`);
        removed.push(path);
        continue;
      }
      const file = await blobFile(path, text);
      if (existing?.sha === file.sha) continue;
      (existing ? modified : added).push(path);
      written.push(file);
    }
    if (written.length + removed.length === 0 && !opts.allowEmpty) {
      if (repo.head === head) return null;
      continue;
    }
    const tree = new Map(repo.files);
    for (const f of written) tree.set(f.path, f);
    for (const p of removed) tree.delete(p);
    const clash = conflict([...tree.keys()]);
    if (clash) throw new SimHttpError(422, clash);
    const timestamp = state.now();
    const message =
      opts.message ??
      (written.length + removed.length === 0
        ? "Empty commit"
        : defaultMessage(added, modified, removed));
    const treeId = await sha1Hex(`tree\n${treeListing(tree.values())}`);
    const id = await sha1Hex(
      `commit\ntree ${treeId}\nparent ${before}\nauthor ${opts.actor} ${timestamp}\n\n${message}`,
    );
    if (repo.head !== head) continue;
    const commit: SimCommit = {
      id,
      treeId,
      message,
      timestamp,
      author: opts.actor,
      added,
      modified,
      removed,
      parents: head === null ? [] : [head],
    };
    state.pushCommit(repo, before, commit, written, opts.actor, opts.force ?? false);
    return commit;
  }
}

/** Loads files onto the default branch without a commit of its own or a webhook (seeding). */
export async function seedFiles(
  state: SimState,
  repo: SimRepo,
  files: Record<string, string>,
): Promise<void> {
  const paths = Object.keys(files);
  for (const path of paths) requireFilePath(path);
  const loaded = await Promise.all(paths.map((p) => blobFile(p, files[p]!)));
  const tree = new Map(repo.files);
  for (const f of loaded) tree.set(f.path, f);
  const clash = conflict([...tree.keys()]);
  if (clash) throw new SimHttpError(400, `control API: ${clash}`);
  const listing = treeListing(tree.values());
  const head = await sha1Hex(`seeded ${fullName(repo)}\n${listing}`);
  repo.files = tree;
  repo.head = head;
  repo.pushedAt = state.now();
  // The seed is the branch's first commit, as if the repository had been created with it.
  repo.commits.set(head, {
    id: head,
    treeId: await sha1Hex(`tree\n${listing}`),
    message: "Initial commit",
    timestamp: state.now(),
    author: repo.owner,
    added: [...tree.keys()].sort(),
    modified: [],
    removed: [],
    parents: [],
  });
}

/**
 * The default branch's head commit, made first (silently, as `seedFiles` does) when the
 * repository has none yet: checks and statuses need a commit to sit on.
 */
export async function ensureHead(state: SimState, repo: SimRepo): Promise<SimCommit> {
  if (repo.head === null) await seedFiles(state, repo, {});
  return repo.commits.get(repo.head!)!;
}

/**
 * The commit `ref` names: the default branch (`main`, `heads/main`, `refs/heads/main`) or a
 * commit id of at least 7 hex digits (a unique prefix). Undefined when nothing matches.
 */
export function commitFor(repo: SimRepo, ref: string): SimCommit | undefined {
  if (
    ref === DEFAULT_BRANCH ||
    ref === `heads/${DEFAULT_BRANCH}` ||
    ref === `refs/heads/${DEFAULT_BRANCH}`
  )
    return repo.head === null ? undefined : repo.commits.get(repo.head);
  if (!/^[0-9a-f]{7,40}$/.test(ref)) return undefined;
  const exact = repo.commits.get(ref);
  if (exact) return exact;
  const matches = [...repo.commits.keys()].filter((id) => id.startsWith(ref));
  return matches.length === 1 ? repo.commits.get(matches[0]!) : undefined;
}

interface DirEntry {
  type: "file" | "dir";
  path: string;
  sha: string;
  size: number;
}

/** The entries directly inside directory `dir` (empty when there is no such directory). */
async function listDirectory(repo: SimRepo, dir: string): Promise<DirEntry[]> {
  const prefix = `${dir}/`;
  const children = new Map<string, SimFile[]>();
  const entries: DirEntry[] = [];
  for (const file of repo.files.values()) {
    if (!file.path.startsWith(prefix)) continue;
    const rest = file.path.slice(prefix.length);
    const slash = rest.indexOf("/");
    if (slash < 0) {
      entries.push({ type: "file", path: file.path, sha: file.sha, size: file.size });
      continue;
    }
    const sub = `${prefix}${rest.slice(0, slash)}`;
    children.set(sub, [...(children.get(sub) ?? []), file]);
  }
  for (const [path, files] of children) {
    entries.push({ type: "dir", path, sha: await sha1Hex(`tree\n${treeListing(files)}`), size: 0 });
  }
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Whether `ref` names the default branch's head: its name, full ref name or commit id. */
function refIsHead(repo: SimRepo, ref: string): boolean {
  return (
    ref === DEFAULT_BRANCH ||
    ref === `refs/heads/${DEFAULT_BRANCH}` ||
    (repo.head !== null && ref.length >= 7 && repo.head.startsWith(ref))
  );
}

function notFound(message = "Not Found"): ApiResult {
  return { status: 404, body: { message, documentation_url: DOCS, status: "404" } };
}

export function registerContentRoutes(sim: GitHubSimulator): void {
  const { state } = sim;
  sim.api("GET", "/repos/{owner}/{repo}/contents/{path}", "token", "core", async (req) => {
    const repo = state.requireRepoOrMoved(req.params.owner!, req.params.repo!);
    if (!sim.canRead(req.identity, repo)) throw new SimHttpError(404, "Not Found");
    const ref = req.query.get("ref");
    if (ref !== null && ref !== "" && !refIsHead(repo, ref))
      return notFound(`No commit found for the ref ${ref}`);
    const shownRef = ref || DEFAULT_BRANCH;
    const path = req.params.path!.replace(/\/+$/, "");
    if (!isFilePath(path)) return notFound();
    const file = repo.files.get(path);
    if (file)
      return {
        status: 200,
        body: renderContentFile(req.base, repo, shownRef, file, MAX_CONTENT_BYTES),
      };
    const entries = await listDirectory(repo, path);
    if (entries.length === 0) return notFound();
    return {
      status: 200,
      body: entries.map((e) => renderContentEntry(req.base, repo, shownRef, e)),
    };
  });
}
