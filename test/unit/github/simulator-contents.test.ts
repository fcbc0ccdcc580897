// The simulator's files on the default branch: the REST contents endpoint as GitHub shapes it,
// the control routes that push commits (each a signed `push` webhook), and seeded files.
import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createGitHubSimulator, type GitHubSimulator } from "../../../infra/github-sim/app.ts";
import { CONFIG_PATH, parseWebhook, pushTouchesConfig } from "../../../shared/github/webhooks.ts";
import { issue, REPO } from "./sim-harness.ts";

const SECRET = "contents-secret";
const CONFIG_URL = `/repos/acme/app/contents/${CONFIG_PATH}`;

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function call(
  sim: GitHubSimulator,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await sim.fetch(
    new Request(`http://sim.test${path}`, {
      method,
      headers: { authorization: "token t", "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === "" ? null : JSON.parse(text) };
}

const control = (sim: GitHubSimulator, method: string, path: string, body: unknown = {}) =>
  call(sim, method, `/_sim${path}`, body);

interface Drained {
  event: string;
  action: string;
  body: string;
  headers: Record<string, string>;
}

async function drain(sim: GitHubSimulator): Promise<Drained[]> {
  return ((await control(sim, "POST", "/outbox/drain")).body as { deliveries: Drained[] })
    .deliveries;
}

async function seeded(files?: Record<string, string>) {
  // "t" (the token `call` sends) is the unrestricted user octocat.
  const sim = createGitHubSimulator({ webhookSecret: SECRET, userTokens: ["t"] });
  const seed = await control(sim, "POST", "/seed", {
    snapshot: { repo: REPO, issues: [issue(1)] },
    files,
  });
  expect(seed.status, JSON.stringify(seed.body)).toBe(200);
  await drain(sim); // installation.created
  return { sim, installationId: (seed.body as { installationId: number }).installationId };
}

function gitHashObject(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  return createHash("sha1")
    .update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]))
    .digest("hex");
}

const decode = (content: string) => Buffer.from(content, "base64").toString("utf8");

describe("GET /repos/{owner}/{repo}/contents/{path}", () => {
  it("answers a file in GitHub's JSON form: base64 in 60-character lines, git's blob sha", async () => {
    const text = `queue:\n  mode: all\n# ${"long comment ".repeat(10)}\n`;
    const { sim } = await seeded({ [CONFIG_PATH]: text });
    const res = await call(sim, "GET", CONFIG_URL);
    expect(res.status).toBe(200);
    const file = res.body as Record<string, string | number>;
    expect(file).toMatchObject({
      type: "file",
      encoding: "base64",
      name: "switchyard.yml",
      path: CONFIG_PATH,
      size: Buffer.byteLength(text),
      sha: gitHashObject(text),
    });
    const content = String(file.content);
    expect(
      content
        .split("\n")
        .slice(0, -1)
        .every((line) => line.length <= 60),
    ).toBe(true);
    expect(content.endsWith("\n")).toBe(true);
    expect(decode(content)).toBe(text);
    expect(res.headers.get("etag")).toMatch(/^W\/"[0-9a-f]+"$/);
  });

  it("accepts the path with encoded slashes (as Octokit sends it) and plain ones alike", async () => {
    const { sim } = await seeded({ [CONFIG_PATH]: "a: 1\n" });
    const encoded = await call(sim, "GET", "/repos/acme/app/contents/.github%2Fswitchyard.yml");
    const plain = await call(sim, "GET", CONFIG_URL);
    expect(encoded.status).toBe(200);
    expect(encoded.body).toEqual(plain.body);
  });

  it("answers 404 Not Found for a missing file, and for a ref that names no commit", async () => {
    const { sim } = await seeded({ [CONFIG_PATH]: "a: 1\n" });
    const missing = await call(sim, "GET", "/repos/acme/app/contents/nope.yml");
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ message: "Not Found" });
    const badRef = await call(sim, "GET", `${CONFIG_URL}?ref=feature`);
    expect(badRef.status).toBe(404);
    expect(badRef.body).toMatchObject({ message: "No commit found for the ref feature" });
    const head = sim.state.repo("acme", "app")!.head!;
    for (const ref of ["main", "refs/heads/main", head, head.slice(0, 7)]) {
      expect((await call(sim, "GET", `${CONFIG_URL}?ref=${ref}`)).status, ref).toBe(200);
    }
  });

  it("lists a directory as an array of entries", async () => {
    const { sim } = await seeded({
      [CONFIG_PATH]: "a: 1\n",
      ".github/workflows/ci.yml": "on: push\n",
      "README.md": "hi\n",
    });
    const res = await call(sim, "GET", "/repos/acme/app/contents/.github");
    expect(res.status).toBe(200);
    const entries = res.body as { type: string; path: string; size: number }[];
    expect(entries.map((e) => [e.type, e.path])).toEqual([
      ["file", ".github/switchyard.yml"],
      ["dir", ".github/workflows"],
    ]);
    expect(entries.some((e) => "content" in e)).toBe(false);
  });

  it("leaves content empty with encoding none for a file over 1 MB, as GitHub does", async () => {
    const big = "y".repeat(1024 * 1024 + 1);
    const { sim } = await seeded({ "big.txt": big, "edge.txt": "z".repeat(1024 * 1024) });
    const over = (await call(sim, "GET", "/repos/acme/app/contents/big.txt")).body;
    expect(over).toMatchObject({ encoding: "none", content: "", size: big.length });
    const edge = (await call(sim, "GET", "/repos/acme/app/contents/edge.txt")).body as {
      encoding: string;
      content: string;
    };
    expect(edge.encoding).toBe("base64");
    expect(decode(edge.content)).toHaveLength(1024 * 1024);
  });

  it("answers 304 to a matching If-None-Match for free; counts and rate-limits the rest", async () => {
    const { sim } = await seeded({ [CONFIG_PATH]: "a: 1\n" });
    const first = await call(sim, "GET", CONFIG_URL);
    const etag = first.headers.get("etag")!;
    const again = await call(sim, "GET", CONFIG_URL, undefined, { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.body).toBeNull();
    expect(again.headers.get("x-ratelimit-remaining")).toBe(
      first.headers.get("x-ratelimit-remaining"),
    );
    await control(sim, "PUT", `/repos/acme/app/contents/${CONFIG_PATH}`, { text: "a: 2\n" });
    const changed = await call(sim, "GET", CONFIG_URL, undefined, { "if-none-match": etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
    expect(sim.counter.snapshot().byEndpoint["GET /repos/{owner}/{repo}/contents/{path}"]).toEqual({
      total: 3,
      rateLimited: 2,
      free: 1,
      statuses: { "200": 2, "304": 1 },
    });
    sim.limits.setRemaining(0);
    const limited = await call(sim, "GET", CONFIG_URL);
    expect(limited.status).toBe(403);
    expect(limited.body).toMatchObject({ message: expect.stringMatching(/rate limit exceeded/) });
  });

  it("lets an installation token read only repositories of its installation", async () => {
    const { sim, installationId } = await seeded({ [CONFIG_PATH]: "a: 1\n" });
    await control(sim, "POST", "/repos", { owner: "acme", name: "other" });
    await control(sim, "PUT", `/repos/acme/other/contents/${CONFIG_PATH}`, { text: "b: 1\n" });
    const { token } = sim.tokens.mint(installationId, sim.now());
    const auth = { authorization: `token ${token}` };
    expect((await call(sim, "GET", CONFIG_URL, undefined, auth)).status).toBe(200);
    const other = await call(
      sim,
      "GET",
      `/repos/acme/other/contents/${CONFIG_PATH}`,
      undefined,
      auth,
    );
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ message: "Not Found" });
  });

  it("renders repositories with default_branch main", async () => {
    const { sim } = await seeded();
    expect((await call(sim, "GET", "/repos/acme/app")).body).toMatchObject({
      default_branch: "main",
    });
  });
});

describe("control routes for files: pushes announced as GitHub does", () => {
  it("PUT writes a file as a user's commit and emits a signed push to main", async () => {
    const { sim, installationId } = await seeded({ "README.md": "hi\n" });
    const headBefore = sim.state.repo("acme", "app")!.head;
    const put = await control(sim, "PUT", `/repos/acme/app/contents/${CONFIG_PATH}`, {
      text: "queue:\n  mode: all\n",
      actor: "alice",
    });
    expect(put.status).toBe(200);
    const commit = (put.body as { commit: { id: string; added: string[] } }).commit;
    expect(commit.added).toEqual([CONFIG_PATH]);
    const file = (await call(sim, "GET", CONFIG_URL)).body as { content: string };
    expect(decode(file.content)).toBe("queue:\n  mode: all\n");

    const [push, ...rest] = await drain(sim);
    expect(rest).toEqual([]);
    expect(push!.event).toBe("push");
    expect(push!.headers["x-github-event"]).toBe("push");
    expect(push!.headers["x-hub-signature-256"]).toBe(
      `sha256=${createHmac("sha256", SECRET).update(push!.body).digest("hex")}`,
    );
    const payload = JSON.parse(push!.body);
    expect(payload.action).toBeUndefined();
    expect(payload).toMatchObject({
      ref: "refs/heads/main",
      before: headBefore,
      after: commit.id,
      created: false,
      deleted: false,
      forced: false,
      commits: [{ id: commit.id, added: [CONFIG_PATH], modified: [], removed: [] }],
      head_commit: { id: commit.id, message: `Create ${CONFIG_PATH}` },
      repository: { full_name: "acme/app", default_branch: "main", master_branch: "main" },
      pusher: { name: "alice" },
      sender: { login: "alice" },
      installation: { id: installationId },
    });
    expect(typeof payload.repository.pushed_at).toBe("number");
    expect(parseWebhook("push", payload)).toMatchObject({ kind: "handled", event: "push" });
  });

  it("chains commits, reports modified and removed paths, and skips a push that changes nothing", async () => {
    const { sim } = await seeded({ [CONFIG_PATH]: "a: 1\n", "README.md": "hi\n" });
    const one = await control(sim, "PUT", `/repos/acme/app/contents/${CONFIG_PATH}`, {
      text: "a: 2\n",
      message: "Tune the queue",
    });
    const same = await control(sim, "PUT", `/repos/acme/app/contents/${CONFIG_PATH}`, {
      text: "a: 2\n",
    });
    expect(same.body).toEqual({ commit: null });
    const many = await control(sim, "POST", "/repos/acme/app/push", {
      files: { "README.md": null, "docs/new.md": "new\n" },
    });
    const gone = await control(sim, "DELETE", `/repos/acme/app/contents/${CONFIG_PATH}`);
    expect(gone.status).toBe(200);
    expect((await call(sim, "GET", CONFIG_URL)).status).toBe(404);
    const again = await control(sim, "DELETE", `/repos/acme/app/contents/${CONFIG_PATH}`);
    expect(again.status).toBe(404);

    const pushes = (await drain(sim)).map((d) => JSON.parse(d.body));
    expect(pushes).toHaveLength(3);
    const ids = [one, many, gone].map((r) => (r.body as { commit: { id: string } }).commit.id);
    expect(pushes.map((p) => p.after)).toEqual(ids);
    expect(pushes[1].before).toBe(ids[0]);
    expect(pushes[2].before).toBe(ids[1]);
    expect(pushes[0].head_commit).toMatchObject({
      message: "Tune the queue",
      modified: [CONFIG_PATH],
    });
    expect(pushes[1].head_commit).toMatchObject({ added: ["docs/new.md"], removed: ["README.md"] });
    expect(pushes[2].head_commit).toMatchObject({ removed: [CONFIG_PATH] });
    // Every push to the default branch matters (the breaker follows its head); only those
    // touching the config file change the config.
    expect(pushes.map((p) => parseWebhook("push", p).kind)).toEqual([
      "handled",
      "handled",
      "handled",
    ]);
    expect(pushes.map((p) => pushTouchesConfig(p))).toEqual([true, false, true]);
  });

  it("refuses a path that is not a file path, or one a file already occupies as a directory", async () => {
    const { sim } = await seeded({ [CONFIG_PATH]: "a: 1\n" });
    const bad = await control(sim, "POST", "/repos/acme/app/push", { files: { "a//b": "x" } });
    expect(bad.status).toBe(400);
    expect(String((bad.body as { message: string }).message)).toContain("files.a//b");
    const clash = await control(sim, "PUT", `/repos/acme/app/contents/${CONFIG_PATH}/x`, {
      text: "x",
    });
    expect(clash.status).toBe(422);
    expect(await drain(sim)).toEqual([]);
  });

  it("seeds files without announcing anything, and refuses bad seed files before seeding", async () => {
    const sim = createGitHubSimulator({ webhookSecret: SECRET, userTokens: ["t"] });
    const bad = await control(sim, "POST", "/seed", {
      snapshot: { repo: REPO, issues: [issue(1)] },
      files: { "a/../b": "x" },
    });
    expect(bad.status).toBe(400);
    expect(sim.state.repo("acme", "app")).toBeUndefined();
    const ok = await control(sim, "POST", "/seed", {
      snapshot: { repo: REPO, issues: [issue(1)] },
      files: { [CONFIG_PATH]: "a: 1\n" },
    });
    expect(ok.status).toBe(200);
    expect((await drain(sim)).map((d) => d.event)).toEqual(["installation"]);
    expect((await call(sim, "GET", CONFIG_URL)).status).toBe(200);
  });
});
