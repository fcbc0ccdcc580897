// fetchFileText / fetchFileIfChanged against the in-process simulator: present, absent,
// conditional reads, what is refused, and failures retried or surfaced.
import { describe, expect, it } from "vitest";
import { pushFiles, seedFiles } from "../../../infra/github-sim/contents.ts";
import { fetchFileIfChanged, fetchFileText } from "../../../shared/github/contents.ts";
import { GitHubApiError, GitHubContentError } from "../../../shared/github/errors.ts";
import { CONFIG_PATH } from "../../../shared/github/webhooks.ts";
import { count, harness, issue, REPO, seed } from "./sim-harness.ts";

const ENDPOINT = "GET /repos/{owner}/{repo}/contents/{path}";
const CONTENTS = "/repos/acme/app/contents/**";

async function setup(files: Record<string, string> = {}, clientOpts = {}) {
  const h = harness({}, clientOpts);
  seed(h.sim, [issue(1)]);
  const repo = h.sim.state.repo("acme", "app")!;
  await seedFiles(h.sim.state, repo, files);
  return { ...h, repo };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

describe("fetchFileText", () => {
  it("returns the text of a file, multi-byte UTF-8 intact", async () => {
    const text = "queue:\n  mode: all # naïve — ✓ 日本\n";
    const h = await setup({ [CONFIG_PATH]: text });
    expect(await fetchFileText(h.client, REPO, CONFIG_PATH)).toBe(text);
    expect(await fetchFileText(h.client, REPO, CONFIG_PATH, "main")).toBe(text);
    expect(count(h.sim, ENDPOINT)).toBe(2);
  });

  it("drops a UTF-8 byte order mark, as YAML readers expect", async () => {
    const h = await setup({ [CONFIG_PATH]: "\uFEFFa: 1\n" });
    expect(await fetchFileText(h.client, REPO, CONFIG_PATH)).toBe("a: 1\n");
  });

  it("returns null for a file that does not exist", async () => {
    const h = await setup({ "README.md": "hi\n" });
    expect(await fetchFileText(h.client, REPO, CONFIG_PATH)).toBeNull();
    expect(h.sim.counter.snapshot().byEndpoint[ENDPOINT]!.statuses).toEqual({ "404": 1 });
  });

  it("sees a file pushed after an earlier read", async () => {
    const h = await setup();
    expect(await fetchFileText(h.client, REPO, CONFIG_PATH)).toBeNull();
    await pushFiles(h.sim.state, h.repo, { [CONFIG_PATH]: "a: 1\n" }, { actor: "alice" });
    expect(await fetchFileText(h.client, REPO, CONFIG_PATH)).toBe("a: 1\n");
    await pushFiles(h.sim.state, h.repo, { [CONFIG_PATH]: null }, { actor: "alice" });
    expect(await fetchFileText(h.client, REPO, CONFIG_PATH)).toBeNull();
  });

  it("refuses a directory with a typed error naming the path", async () => {
    const h = await setup({ ".github/workflows/ci.yml": "on: push\n" });
    const error = await failure(fetchFileText(h.client, REPO, ".github"));
    expect(error).toBeInstanceOf(GitHubContentError);
    expect(error).toMatchObject({ kind: "directory", repo: REPO, path: ".github" });
    expect(String((error as Error).message)).toBe("acme/app: .github is a directory, not a file");
  });

  it("refuses a file too large for the contents API (GitHub sends no content over 1 MB)", async () => {
    const big = `# ${"x".repeat(1024 * 1024)}\n`;
    const h = await setup({ [CONFIG_PATH]: big });
    const error = await failure(fetchFileText(h.client, REPO, CONFIG_PATH));
    expect(error).toBeInstanceOf(GitHubContentError);
    expect(error).toMatchObject({ kind: "too-large" });
    expect(String((error as Error).message)).toContain(
      `is ${big.length} bytes; the contents API returns the text of files up to 1 MB only`,
    );
  });

  it("refuses a symlink, and bytes that are not UTF-8", async () => {
    const h = await setup({ [CONFIG_PATH]: "a: 1\n" });
    const file = (content: string, size: number) => ({
      type: "file",
      encoding: "base64",
      size,
      name: "switchyard.yml",
      path: CONFIG_PATH,
      content,
      sha: "0".repeat(40),
    });
    h.sim.faults.set({
      requests: [
        {
          path: CONTENTS,
          status: 200,
          body: { type: "symlink", target: "elsewhere.yml", size: 12, sha: "1".repeat(40) },
        },
        { path: CONTENTS, status: 200, body: file(btoa("\xff\xfe\xfd"), 3) },
      ],
    });
    expect(await failure(fetchFileText(h.client, REPO, CONFIG_PATH))).toMatchObject({
      name: "GitHubContentError",
      kind: "not-a-file",
      message: `acme/app: ${CONFIG_PATH} is a symlink, not a regular file`,
    });
    expect(await failure(fetchFileText(h.client, REPO, CONFIG_PATH))).toMatchObject({
      kind: "not-text",
    });
  });

  it("calls an answer it cannot read a bad response (truncated content, unknown encoding)", async () => {
    const h = await setup({ [CONFIG_PATH]: "a: 1\n" });
    const base = { type: "file", name: "x", path: CONFIG_PATH, sha: "0".repeat(40) };
    h.sim.faults.set({
      requests: [
        {
          path: CONTENTS,
          status: 200,
          body: { ...base, encoding: "base64", size: 10, content: btoa("a: 1\n") },
        },
        {
          path: CONTENTS,
          status: 200,
          body: { ...base, encoding: "utf-8", size: 5, content: "a" },
        },
      ],
    });
    const truncated = await failure(fetchFileText(h.client, REPO, CONFIG_PATH));
    expect(truncated).toBeInstanceOf(GitHubApiError);
    expect(truncated).toMatchObject({
      kind: "bad-response",
      reason: "the content is 5 bytes but the file is 10",
    });
    expect(await failure(fetchFileText(h.client, REPO, CONFIG_PATH))).toMatchObject({
      kind: "bad-response",
      reason: 'unexpected content encoding "utf-8"',
    });
  });

  it("retries a 5xx and then succeeds", async () => {
    const h = await setup({ [CONFIG_PATH]: "a: 1\n" });
    h.sim.faults.set({ requests: [{ path: CONTENTS, status: 502, times: 2 }] });
    expect(await fetchFileText(h.client, REPO, CONFIG_PATH)).toBe("a: 1\n");
    expect(count(h.sim, ENDPOINT)).toBe(3);
    expect(h.sleeps).toEqual([375, 750]);
  });

  it("throws a typed GitHubApiError for a lasting 5xx, a refused token and an unknown ref", async () => {
    const h = await setup({ [CONFIG_PATH]: "a: 1\n" }, { retry: { maxRetries: 1 } });
    h.sim.faults.set({ requests: [{ path: CONTENTS, status: 503, times: 5 }] });
    const server = await failure(fetchFileText(h.client, REPO, CONFIG_PATH));
    expect(server).toBeInstanceOf(GitHubApiError);
    expect(server).toMatchObject({
      kind: "server",
      status: 503,
      attempts: 2,
      operation: `read ${CONFIG_PATH} of acme/app`,
    });
    h.sim.faults.clear();

    const badRef = await failure(fetchFileText(h.client, REPO, CONFIG_PATH, "feature"));
    expect(badRef).toMatchObject({ kind: "not-found", status: 404 });
    expect(String((badRef as Error).message)).toContain("No commit found for the ref feature");

    h.sim.userTokens = ["another-token"];
    expect(await failure(fetchFileText(h.client, REPO, CONFIG_PATH))).toMatchObject({
      name: "GitHubApiError",
      kind: "unauthorized",
      status: 401,
    });
  });

  it("rejects a path that is not a repository file path before any request", async () => {
    const h = await setup();
    for (const path of ["", "/etc/passwd", "a//b", "../x", ".github/"]) {
      await expect(fetchFileText(h.client, REPO, path)).rejects.toThrow(/expected a file path/);
    }
    await expect(fetchFileText(h.client, "no-slash", CONFIG_PATH)).rejects.toThrow(/owner\/name/);
    expect(h.sim.counter.snapshot().total).toBe(0);
  });
});

describe("fetchFileIfChanged", () => {
  it("round-trips the ETag: an unchanged file is a free 304, a pushed change is seen", async () => {
    const h = await setup({ [CONFIG_PATH]: "a: 1\n" });
    const first = await fetchFileIfChanged(h.client, REPO, CONFIG_PATH);
    if (first.status !== "found") throw new Error(`expected found, got ${first.status}`);
    expect(first.text).toBe("a: 1\n");
    expect(first.sha).toBe(h.repo.files.get(CONFIG_PATH)!.sha);
    expect(first.etag).toMatch(/^W\//);

    const billed = h.sim.counter.snapshot().rateLimited;
    const same = await fetchFileIfChanged(h.client, REPO, CONFIG_PATH, { etag: first.etag });
    expect(same).toEqual({ status: "not-modified", etag: first.etag });
    expect(h.sim.counter.snapshot().rateLimited).toBe(billed);
    expect(h.client.stats.notModified).toBe(1);

    await pushFiles(h.sim.state, h.repo, { [CONFIG_PATH]: "a: 2\n" }, { actor: "alice" });
    const changed = await fetchFileIfChanged(h.client, REPO, CONFIG_PATH, { etag: first.etag });
    expect(changed).toMatchObject({ status: "found", text: "a: 2\n" });
    expect(changed.status === "found" && changed.etag).not.toBe(first.etag);
  });

  it("reports a deleted file as missing even with an ETag", async () => {
    const h = await setup({ [CONFIG_PATH]: "a: 1\n" });
    const first = await fetchFileIfChanged(h.client, REPO, CONFIG_PATH);
    await pushFiles(h.sim.state, h.repo, { [CONFIG_PATH]: null }, { actor: "alice" });
    const etag = first.status === "found" ? first.etag : null;
    expect(await fetchFileIfChanged(h.client, REPO, CONFIG_PATH, { etag })).toEqual({
      status: "missing",
    });
  });
});
