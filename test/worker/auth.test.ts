// Authentication of the fleet API (spec 6.4) end to end: the Worker in workerd, GitHub = the
// simulator (user tokens with a role per repository, an Actions OIDC issuer). The auth matrix
// on the graph and keys routes, unknown vs uninstalled repositories, and raw tokens never
// stored or logged.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, type MockInstance, vi } from "vitest";
import { app } from "../../functions/app.ts";
import { directory } from "../../functions/objects/directory/directory-object.ts";
import { idShardKey, nameShardKey, shard } from "../../functions/objects/names/name-object.ts";
import { keysExpire, REPO_MIGRATIONS } from "../../functions/objects/repo/repo-schema.ts";
import { RepoStore } from "../../functions/objects/repo/repo-store.ts";
import { migrate } from "../../functions/objects/sql.ts";
import { sha256Hex } from "../../shared/auth/hash.ts";
import { mintKey } from "../../shared/auth/keys.ts";
import { USER_TOKEN_REFUSALS_PER_MINUTE } from "../../shared/auth/refusal-throttle.ts";
import {
  install,
  installationStub,
  repoStub,
  runInstallation,
  seedIssue,
  settle,
  sim,
} from "./helpers.ts";

const PUBLIC_URL = "https://switchyard.test";
const DAY = 86_400_000;

/** Every raw credential a test sent: none may show up in storage, logs or answers. */
const secrets = new Set<string>();
const logged: string[] = [];
const spies: MockInstance[] = [];

interface Answer {
  status: number;
  body: Record<string, unknown> | null;
  text: string;
  headers: Headers;
}

async function call(
  method: string,
  path: string,
  opts: { token?: string; authorization?: string; body?: unknown; host?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  if (opts.authorization !== undefined) headers.authorization = opts.authorization;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const response = await exports.default.fetch(`${opts.host ?? PUBLIC_URL}${path}`, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await response.text();
  // No answer ever repeats a credential (a key is shown once: by the route that mints it).
  if (!path.endsWith("/keys") || method !== "POST") {
    for (const s of secrets) expect(text.includes(s), `answer of ${method} ${path}`).toBe(false);
  }
  return {
    status: response.status,
    body:
      text && response.headers.get("content-type")?.includes("json")
        ? (JSON.parse(text) as Record<string, unknown>)
        : null,
    text,
    headers: response.headers,
  };
}

const keysIn = (answer: Answer) => (answer.body?.keys ?? []) as Array<Record<string, unknown>>;

const graph = (fullName: string, token?: string) =>
  call("GET", `/v1/repos/${fullName}/graph`, token === undefined ? {} : { token });

async function expectError(answer: Answer | Promise<Answer>, status: number, error: string) {
  const a = await answer;
  expect({ status: a.status, error: a.body?.error }).toEqual({ status, error });
  expect(typeof a.body?.message).toBe("string");
  expect(Object.keys(a.body ?? {}).sort()).toEqual(["error", "message"]);
  return a;
}

/**
 * A simulator user whose token has `repos` roles; the token is remembered as a secret. `prefix`
 * picks the token's kind (default a classic `ghp_`), `scopes` a classic or OAuth token's scopes
 * (the simulator's default: `repo`), `clientId` the App a `ghu_` token was issued to.
 */
async function user(
  login: string,
  repos: Record<string, string>,
  opts: { prefix?: string; scopes?: string[]; clientId?: string } = {},
): Promise<string> {
  const token = `${opts.prefix ?? "ghp_"}${login.replace(/[^A-Za-z0-9]/g, "")}${crypto.randomUUID().replace(/-/g, "")}`;
  secrets.add(token);
  const { prefix: _prefix, ...grant } = opts;
  await sim("/users", { body: { login, token, repos, ...grant } });
  return token;
}

/** How many requests the simulator has answered on `endpoint` (e.g. `GET /repos/{owner}/{repo}`). */
async function asked(endpoint: string): Promise<number> {
  const counters = await sim<{ byEndpoint: Record<string, { total: number }> }>("/counters");
  return counters.byEndpoint[endpoint]?.total ?? 0;
}

async function oidcToken(
  repository: string,
  extra: { aud?: string; expiresInSeconds?: number; signWith?: "issuer" | "foreign" } = {},
): Promise<string> {
  const { token } = await sim<{ token: string }>("/oidc/token", {
    body: { repository, aud: extra.aud ?? PUBLIC_URL, ...extra },
  });
  secrets.add(token);
  return token;
}

async function createKey(fullName: string, token?: string, body: unknown = { name: "ci" }) {
  const answer = await call("POST", `/v1/repos/${fullName}/keys`, { token, body });
  if (answer.status === 201) secrets.add(String(answer.body?.key));
  return answer;
}

async function uninstall(installationId: number) {
  await sim(`/installations/${installationId}`, { method: "DELETE", body: {} });
  await runInstallation(installationId);
}

let A: Awaited<ReturnType<typeof install>>;
let B: Awaited<ReturnType<typeof install>>;
let GONE: Awaited<ReturnType<typeof install>>;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  for (const method of ["log", "info", "warn", "error", "debug"] as const) {
    spies.push(
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        logged.push(
          args
            .map((a) =>
              a instanceof Error ? `${a.message} ${a.stack ?? ""}` : (JSON.stringify(a) ?? ""),
            )
            .join(" "),
        );
      }),
    );
  }
  await sim("/reset", { method: "POST" });
  A = await install({ repo: "auth-a/app", issues: [seedIssue(1), seedIssue(2)] });
  B = await install({ repo: "auth-b/other", issues: [seedIssue(1)] });
  GONE = await install({ repo: "auth-gone/app", issues: [seedIssue(1)] });
  await uninstall(GONE.installationId);
  expect((await directory(env).lookup("auth-gone/app"))?.status).toBe("removed");
  // On GitHub, never installed.
  await sim("/repos", { body: { owner: "auth-bare", name: "app" } });

  const everywhere = (role: string) => ({
    "auth-a/app": role,
    "auth-gone/app": role,
    "auth-bare/app": role,
  });
  tokens.read = await user("reader", everywhere("read"));
  tokens.triage = await user("triager", everywhere("triage"));
  tokens.write = await user("writer", everywhere("write"));
  tokens.maintain = await user("maintainer", everywhere("maintain"));
  tokens.admin = await user("admin", everywhere("admin"));
  tokens.other = await user("other", { "auth-b/other": "admin" });
}, 60_000);

afterAll(() => {
  for (const spy of spies) spy.mockRestore();
});

describe("the Authorization header", () => {
  it("no header, another scheme, a bare or malformed bearer: 401 with WWW-Authenticate", async () => {
    const none = await expectError(graph("auth-a/app"), 401, "unauthorized");
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    for (const authorization of [
      "",
      `Basic ${btoa("user:pass")}`,
      "Bearer",
      "Bearer ",
      `Bearer ${tokens.write} extra`,
      "Bearer tok<en>",
      `Token ${tokens.write}`,
      `Bearer ${"x".repeat(9000)}`,
    ]) {
      const answer = await call("GET", "/v1/repos/auth-a/app/graph", { authorization });
      await expectError(answer, 401, "unauthorized");
    }
  });

  it("the scheme is case-insensitive", async () => {
    for (const scheme of ["bearer", "BEARER", "Bearer"]) {
      const answer = await call("GET", "/v1/repos/auth-a/app/graph", {
        authorization: `${scheme} ${tokens.write}`,
      });
      expect(answer.status).toBe(200);
    }
  });

  it("unauthenticated requests to unknown /v1 repository routes are 401 too", async () => {
    await expectError(call("GET", "/v1/repos/auth-a/app/nothing-here"), 401, "unauthorized");
  });
});

describe("GitHub user tokens", () => {
  it("read and triage: 403; write, maintain and admin: the graph", async () => {
    await expectError(graph("auth-a/app", tokens.read), 403, "forbidden");
    await expectError(graph("auth-a/app", tokens.triage), 403, "forbidden");
    for (const role of ["write", "maintain", "admin"]) {
      const answer = await graph("auth-a/app", tokens[role]);
      expect(answer.status, role).toBe(200);
      expect(answer.body?.ready).toEqual([1, 2]);
    }
  });

  it("a token of another repository: 403; a token GitHub refuses: 401", async () => {
    await expectError(graph("auth-a/app", tokens.other), 403, "forbidden");
    expect((await graph("auth-b/other", tokens.other)).status).toBe(200);
    const bogus = `ghs_${crypto.randomUUID().replace(/-/g, "")}`;
    secrets.add(bogus);
    await expectError(graph("auth-a/app", bogus), 401, "unauthorized");
    // A classic token GitHub does not know is "Bad credentials" there too, so 401 here.
    const garbage = `ghp_${crypto.randomUUID().replace(/-/g, "")}`;
    secrets.add(garbage);
    await expectError(graph("auth-a/app", garbage), 401, "unauthorized");
  });

  it("GitHub's answer is cached by the token's hash: a second request asks GitHub nothing", async () => {
    const token = await user("cached", { "auth-a/app": "write" });
    const permission = () => asked("GET /repos/{owner}/{repo}");
    const before = await permission();
    expect((await graph("auth-a/app", token)).status).toBe(200);
    const afterFirst = await permission();
    expect(afterFirst).toBe(before + 1);
    expect((await graph("auth-a/app", token)).status).toBe(200);
    expect((await graph("AUTH-A/App", token)).status).toBe(200);
    expect(await permission()).toBe(afterFirst);
  });
});

describe("each kind of GitHub token is used only with the authority it carries", () => {
  const APP_CHECK = "POST /applications/{client_id}/token";
  const PERMISSION = "GET /repos/{owner}/{repo}";

  it("ghp_ without the repo scope: 403 naming the rule, whatever its person's role", async () => {
    const token = await user("noscope", { "auth-a/app": "admin" }, { scopes: ["read:org"] });
    const refused = await expectError(graph("auth-a/app", token), 403, "forbidden");
    expect(refused.body?.message).toMatch(/repo scope/);
    await expectError(createKey("auth-a/app", token), 403, "forbidden");
    const none = await user("noscope2", { "auth-a/app": "admin" }, { scopes: [] });
    await expectError(graph("auth-a/app", none), 403, "forbidden");
  });

  it("public_repo is enough on a public repository only", async () => {
    const pub = await install({ repo: "auth-pub/app", issues: [seedIssue(1)] });
    await sim("/repos/auth-pub/app/visibility", { body: { private: false } });
    await settle(pub.stub);
    const token = await user(
      "pubscope",
      { "auth-pub/app": "write", "auth-a/app": "write" },
      { scopes: ["public_repo"] },
    );
    expect((await graph("auth-pub/app", token)).status).toBe(200);
    const refused = await expectError(graph("auth-a/app", token), 403, "forbidden");
    expect(refused.body?.message).toMatch(/repo scope/);
  });

  it("gho_ with the repo scope: accepted as its person's role", async () => {
    const token = await user("oauthy", { "auth-a/app": "write" }, { prefix: "gho_" });
    expect((await graph("auth-a/app", token)).status).toBe(200);
    await expectError(createKey("auth-a/app", token), 403, "forbidden");
  });

  it("our App's ghu_: accepted, its App check remembered by the token's hash", async () => {
    const token = await user("appuser", { "auth-a/app": "admin" }, { prefix: "ghu_" });
    const before = await asked(APP_CHECK);
    expect((await graph("auth-a/app", token)).status).toBe(200);
    expect(await asked(APP_CHECK)).toBe(before + 1);
    expect((await graph("auth-a/app", token)).status).toBe(200);
    expect(await asked(APP_CHECK)).toBe(before + 1);
    // An admin's ghu_ mints keys; the audit names who and which kind of token.
    const created = await createKey("auth-a/app", token, { name: "from ghu" });
    expect(created.status).toBe(201);
    const audit = (await A.stub.auditLog(50)).find(
      (e) => e.kind === "key-created" && e.detail.id === created.body?.id,
    );
    expect(audit?.detail).toMatchObject({ name: "from ghu", by: "appuser", tokenKind: "ghu_" });
  });

  it("another App's ghu_: 401 naming the rule, never its person's role", async () => {
    const token = await user(
      "otherapp",
      { "auth-a/app": "admin" },
      { prefix: "ghu_", clientId: "Iv1.someoneelse" },
    );
    const before = await asked(PERMISSION);
    const refused = await expectError(graph("auth-a/app", token), 401, "unauthorized");
    expect(refused.body?.message).toMatch(/switchyard's own App/);
    expect(await asked(PERMISSION)).toBe(before);
  });

  it("ghu_ without the App's client credentials: 401 naming the settings", async () => {
    const token = await user("nocreds", { "auth-a/app": "admin" }, { prefix: "ghu_" });
    const response = await app.request(
      `${PUBLIC_URL}/v1/repos/auth-a/app/graph`,
      { headers: { authorization: `Bearer ${token}` } },
      { ...env, GITHUB_APP_CLIENT_ID: undefined, GITHUB_APP_CLIENT_SECRET: undefined },
    );
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: string; message: string };
    expect(body.message).toMatch(/GITHUB_APP_CLIENT_ID/);
    expect(body.message).toMatch(/GITHUB_APP_CLIENT_SECRET/);
  });

  it("github_pat_ and ghs_: 401 pointing to fleet keys or OIDC, without asking GitHub", async () => {
    const pat = await user("finegrained", { "auth-a/app": "admin" }, { prefix: "github_pat_" });
    // An installation token (the Actions GITHUB_TOKEN) is refused by its kind alone.
    const ghs = `ghs_${crypto.randomUUID().replace(/-/g, "")}`;
    secrets.add(ghs);
    const before = await asked(PERMISSION);
    for (const token of [pat, ghs]) {
      const refused = await expectError(graph("auth-a/app", token), 401, "unauthorized");
      expect(refused.body?.message).toMatch(/fleet key/);
      expect(refused.body?.message).toMatch(/OIDC/);
    }
    expect(await asked(PERMISSION)).toBe(before);
  });

  it("minting a key needs admin proven within the last minute: a remembered admin answer is asked again", async () => {
    const token = await user("fading", { "auth-a/app": "admin" });
    expect((await graph("auth-a/app", token)).status).toBe(200); // admin, remembered
    // GitHub takes admin away (the same token, now write).
    await sim("/users", { body: { login: "fading", token, repos: { "auth-a/app": "write" } } });
    // A minute and a second later (the isolate's permission cache keeps its own clock).
    const later = Date.now() + 61_000;
    const clock = vi.spyOn(Date, "now").mockImplementation(() => later);
    try {
      // The remembered answer still serves reads; the mint asks GitHub again and is refused.
      const before = await asked(PERMISSION);
      expect((await graph("auth-a/app", token)).status).toBe(200);
      expect(await asked(PERMISSION)).toBe(before);
      await expectError(createKey("auth-a/app", token), 403, "forbidden");
      expect(await asked(PERMISSION)).toBe(before + 1);
    } finally {
      clock.mockRestore();
    }
    // A person who is still admin mints after the minute: GitHub is asked again, then yes.
    const still = await user("still-admin", { "auth-a/app": "admin" });
    expect((await graph("auth-a/app", still)).status).toBe(200);
    const afterMinute = Date.now() + 61_000;
    const again = vi.spyOn(Date, "now").mockImplementation(() => afterMinute);
    try {
      const before = await asked(PERMISSION);
      expect((await createKey("auth-a/app", still, { name: "late" })).status).toBe(201);
      expect(await asked(PERMISSION)).toBe(before + 1);
    } finally {
      again.mockRestore();
    }
  });
});

describe("unknown and uninstalled repositories", () => {
  it("answer the same 404 to a caller with access, after auth", async () => {
    const bare = await expectError(graph("auth-bare/app", tokens.write), 404, "not-found");
    const gone = await expectError(graph("auth-gone/app", tokens.admin), 404, "not-found");
    expect(bare.body?.message).toBe("repository auth-bare/app is not installed");
    expect(gone.body?.message).toBe("repository auth-gone/app is not installed");
    await expectError(graph("auth-bare/app"), 401, "unauthorized");
    await expectError(graph("auth-gone/app"), 401, "unauthorized");
  });

  it("a caller without access gets 403 whether the repository is installed or not", async () => {
    for (const name of ["auth-a/app", "auth-gone/app", "auth-bare/app"]) {
      await expectError(graph(name, tokens.read), 403, "forbidden");
      await expectError(graph(name, tokens.other), 403, "forbidden");
    }
    // A repository that does not exist on GitHub at all: GitHub says 404, we say 403.
    await expectError(graph("auth-nowhere/none", tokens.other), 403, "forbidden");
    await expectError(graph("auth-b/other", tokens.read), 403, "forbidden");
  });
});

describe("fleet keys", () => {
  let key = "";

  it("an admin with a user token mints a key, shown once, bound to the repository", async () => {
    const created = await createKey("auth-a/app", tokens.admin, { name: "ci runner" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "ci runner" });
    // Every key expires: 90 days unless asked otherwise.
    const made = created.body as { createdAt: string; expiresAt: string };
    expect(Date.parse(made.expiresAt) - Date.parse(made.createdAt)).toBe(90 * DAY);
    expect(Object.keys(created.body ?? {}).sort()).toEqual([
      "createdAt",
      "expiresAt",
      "id",
      "key",
      "name",
    ]);
    key = String(created.body?.key);
    expect(key).toMatch(new RegExp(`^syk_${A.repoId}_[A-Za-z0-9_-]{43}$`));
    const expiring = await createKey("auth-a/app", tokens.admin, {
      name: "nightly",
      expiresInDays: 30,
    });
    expect(expiring.status).toBe(201);
    const { createdAt, expiresAt } = expiring.body as { createdAt: string; expiresAt: string };
    expect(Date.parse(expiresAt) - Date.parse(createdAt)).toBe(30 * DAY);
  });

  it("only a user token with admin may mint or revoke keys", async () => {
    await expectError(createKey("auth-a/app", tokens.write), 403, "forbidden");
    await expectError(createKey("auth-a/app", tokens.maintain), 403, "forbidden");
    await expectError(createKey("auth-a/app", key), 403, "forbidden");
    await expectError(createKey("auth-a/app", await oidcToken("auth-a/app")), 403, "forbidden");
    await expectError(createKey("auth-a/app", tokens.read), 403, "forbidden");
    await expectError(createKey("auth-a/app"), 401, "unauthorized");
    await expectError(createKey("auth-gone/app", tokens.admin), 404, "not-found");
    const listed = await call("GET", "/v1/repos/auth-a/app/keys", { token: tokens.admin });
    const id = keysIn(listed)[0]!.id;
    await expectError(
      call("DELETE", `/v1/repos/auth-a/app/keys/${id}`, { token: tokens.write }),
      403,
      "forbidden",
    );
    await expectError(
      call("DELETE", `/v1/repos/auth-a/app/keys/${id}`, { token: key }),
      403,
      "forbidden",
    );
  });

  it("the request body is checked: 400 naming the field", async () => {
    for (const body of [
      {},
      { name: "" },
      { name: "x".repeat(101) },
      { name: "   " },
      { name: "ok", expiresInDays: 0 },
      { name: "ok", expiresInDays: 366 },
      { name: "ok", expiresInDays: 3650 },
      { name: "ok", expiresInDays: 1.5 },
      { name: "ok", extra: true },
    ]) {
      const answer = await expectError(
        createKey("auth-a/app", tokens.admin, body),
        400,
        "bad-request",
      );
      expect(answer.body?.message, JSON.stringify(body)).toMatch(/name|expiresInDays|extra|key/);
    }
    expect((await createKey("auth-a/app", tokens.admin, { name: "x".repeat(100) })).status).toBe(
      201,
    );
    expect(
      (await createKey("auth-a/app", tokens.admin, { name: "y", expiresInDays: 365 })).status,
    ).toBe(201);
  });

  it("a valid key reads its own repository; a key of another repository is 403", async () => {
    expect((await graph("auth-a/app", key)).status).toBe(200);
    expect((await call("GET", "/v1/repos/auth-a/app/keys", { token: key })).status).toBe(200);
    await expectError(graph("auth-b/other", key), 403, "forbidden");
    await expectError(graph("auth-nowhere/none", key), 403, "forbidden");
    await expectError(graph("auth-bare/app", key), 403, "forbidden");
    const ofB = await createKey("auth-b/other", tokens.other);
    expect(ofB.status).toBe(201);
    await expectError(graph("auth-a/app", String(ofB.body?.key)), 403, "forbidden");
  });

  it("an unknown or malformed key is 401", async () => {
    const { key: forged } = await mintKey(A.repoId);
    secrets.add(forged);
    await expectError(graph("auth-a/app", forged), 401, "unauthorized");
    await expectError(graph("auth-a/app", `syk_${A.repoId}_short`), 401, "unauthorized");
    await expectError(graph("auth-a/app", "syk_"), 401, "unauthorized");
  });

  it("a forged key learns nothing about other repositories: 401 whatever it names", async () => {
    // Forged for an installed repository's id, used on other names (installed, bare, unknown):
    // it is refused as a key before anything is said about the repository it names.
    const { key: forged } = await mintKey(A.repoId);
    secrets.add(forged);
    for (const name of ["auth-b/other", "auth-bare/app", "auth-nowhere/none", "auth-a/app"]) {
      await expectError(graph(name, forged), 401, "unauthorized");
    }
    // Forged for a repository id switchyard does not serve.
    const { key: stray } = await mintKey(987_654_321);
    secrets.add(stray);
    await expectError(graph("auth-a/app", stray), 401, "unauthorized");
  });

  it("a revoked key is 401; revoking is idempotent; an unknown id is 404", async () => {
    const created = await createKey("auth-a/app", tokens.admin, { name: "to revoke" });
    const revokedKey = String(created.body?.key);
    const id = String(created.body?.id);
    expect((await graph("auth-a/app", revokedKey)).status).toBe(200);
    const del = await call("DELETE", `/v1/repos/auth-a/app/keys/${id}`, { token: tokens.admin });
    expect(del.status).toBe(204);
    const revoked = await expectError(graph("auth-a/app", revokedKey), 401, "unauthorized");
    expect(revoked.body?.message).toMatch(/revoked/);
    expect(
      (await call("DELETE", `/v1/repos/auth-a/app/keys/${id}`, { token: tokens.admin })).status,
    ).toBe(204);
    await expectError(
      call("DELETE", `/v1/repos/auth-a/app/keys/${crypto.randomUUID()}`, { token: tokens.admin }),
      404,
      "not-found",
    );
    // A key id of another repository is unknown here.
    const ofB = await call("GET", "/v1/repos/auth-b/other/keys", { token: tokens.other });
    const idOfB = keysIn(ofB)[0]!.id;
    await expectError(
      call("DELETE", `/v1/repos/auth-a/app/keys/${idOfB}`, { token: tokens.admin }),
      404,
      "not-found",
    );
  });

  it("an expired key is 401", async () => {
    const { key: expired, hash } = await mintKey(A.repoId);
    secrets.add(expired);
    const now = Date.now();
    await A.stub.createKey({
      id: crypto.randomUUID(),
      name: "expired",
      hash,
      createdBy: "admin",
      createdMs: now - 3 * DAY,
      expiresMs: now - DAY,
    });
    const answer = await expectError(graph("auth-a/app", expired), 401, "unauthorized");
    expect(answer.body?.message).toMatch(/expired/);
  });

  it("a key minted before keys expired gets now + 90 days at the migration, audited", async () => {
    const mig = await install({ repo: "auth-mig/app", issues: [seedIssue(1)] });
    const { key: old, hash } = await mintKey(mig.repoId);
    secrets.add(old);
    const id = crypto.randomUUID();
    const minted = Date.now() - 400 * DAY;
    await runInDurableObject(mig.stub, (_instance: unknown, state: DurableObjectState) => {
      // A key as the version before left it: without an expiry.
      const sql = state.storage.sql;
      sql.exec(
        "INSERT INTO fleet_keys (id, name, hash, created_by, created_ms) VALUES (?, 'old', ?, 'admin', ?)",
        id,
        hash,
        minted,
      );
      // The version that introduced key expiry runs over it, through the version gate (the
      // steps after it were applied to this storage already, so the version then goes back).
      const step = REPO_MIGRATIONS.indexOf(keysExpire);
      sql.exec("UPDATE _schema SET version = ?", step);
      expect(migrate(state.storage, REPO_MIGRATIONS.slice(0, step + 1))).toBe(step + 1);
      sql.exec("UPDATE _schema SET version = ?", REPO_MIGRATIONS.length);
      new RepoStore(state.storage);
    });
    const before = Date.now();
    const listed = keysIn(await call("GET", "/v1/repos/auth-mig/app/keys", { token: old }));
    const expiresAt = Date.parse(String(listed.find((k) => k.id === id)?.expiresAt));
    // From the migration, not from its creation (which would have ended it at once).
    expect(expiresAt).toBeGreaterThan(before + 89 * DAY);
    expect(expiresAt).toBeLessThanOrEqual(before + 90 * DAY);
    const audit = (await mig.stub.auditLog(20)).filter((e) => e.kind === "key-expiry-set");
    expect(audit.map((e) => e.detail)).toEqual([
      expect.objectContaining({ id, name: "old", expiresAt: listed[0]!.expiresAt }),
    ]);
    expect(JSON.stringify(audit)).not.toContain(hash);
  });

  it("creating and revoking keys is audited with who and which kind of token", async () => {
    const created = await createKey("auth-a/app", tokens.admin, { name: "audited" });
    const id = String(created.body?.id);
    await call("DELETE", `/v1/repos/auth-a/app/keys/${id}`, { token: tokens.admin });
    const audit = (await A.stub.auditLog(50)).filter((e) => e.detail.id === id);
    expect(audit.map((e) => [e.kind, e.detail.by, e.detail.tokenKind])).toEqual([
      ["key-revoked", "admin", "ghp_"],
      ["key-created", "admin", "ghp_"],
    ]);
    expect(audit[1]!.detail.expiresAt).toBe(created.body?.expiresAt);
  });

  it("the listing shows every key without secrets, and when each was last used (coalesced)", async () => {
    const listed = await call("GET", "/v1/repos/auth-a/app/keys", { token: tokens.write });
    expect(listed.status).toBe(200);
    const keys = keysIn(listed);
    for (const k of keys) {
      expect(Object.keys(k).sort()).toEqual([
        "createdAt",
        "expiresAt",
        "id",
        "lastUsedAt",
        "name",
        "revokedAt",
      ]);
    }
    expect(listed.text).not.toMatch(/syk_/);
    expect(listed.text).not.toContain(await sha256Hex(key));
    const used = keys.find((k) => k.name === "ci runner")!;
    expect(used.lastUsedAt).not.toBeNull();
    expect(keys.find((k) => k.name === "to revoke")!.revokedAt).not.toBeNull();
    expect(keys.find((k) => k.name === "nightly")!.lastUsedAt).toBeNull();
    // Used again within the minute: last_used is not written again.
    expect((await graph("auth-a/app", key)).status).toBe(200);
    const again = await call("GET", "/v1/repos/auth-a/app/keys", { token: key });
    const after = keysIn(again).find((k) => k.name === "ci runner")!;
    expect(after.lastUsedAt).toBe(used.lastUsedAt);
    await expectError(
      call("GET", "/v1/repos/auth-a/app/keys", { token: tokens.read }),
      403,
      "forbidden",
    );
  });

  it("uninstalling forgets the repository's keys", async () => {
    const late = await install({ repo: "auth-late/app", issues: [seedIssue(1)] });
    const admin = await user("late-admin", { "auth-late/app": "admin" });
    const created = await createKey("auth-late/app", admin);
    const lateKey = String(created.body?.key);
    expect((await graph("auth-late/app", lateKey)).status).toBe(200);
    await uninstall(late.installationId);
    await settle(late.stub);
    await expectError(graph("auth-late/app", lateKey), 401, "unauthorized");
    await expectError(graph("auth-late/app", admin), 404, "not-found");
  });
});

describe("a fleet key's request costs one Durable Object call", () => {
  /** `env` whose Durable Object namespaces count the method calls made on their stubs. */
  function countingEnv() {
    const calls: Record<string, number> = {};
    const counted = (binding: "REPO" | "NAMES" | "DIRECTORY" | "INSTALLATION") => {
      const ns = env[binding] as unknown as {
        idFromName(name: string): DurableObjectId;
        get(id: DurableObjectId): object;
      };
      return {
        idFromName: (name: string) => ns.idFromName(name),
        get: (id: DurableObjectId) =>
          new Proxy(ns.get(id), {
            get(target, property) {
              const value = Reflect.get(target, property);
              if (typeof value !== "function" || typeof property !== "string") return value;
              return (...args: unknown[]) => {
                calls[`${binding}.${property}`] = (calls[`${binding}.${property}`] ?? 0) + 1;
                // An RPC stub's method is itself a stub: `.apply` would be a remote call.
                return Reflect.apply(value, target, args);
              };
            },
          }),
      };
    };
    const bindings = {
      ...env,
      REPO: counted("REPO"),
      NAMES: counted("NAMES"),
      DIRECTORY: counted("DIRECTORY"),
      INSTALLATION: counted("INSTALLATION"),
    } as unknown as typeof env;
    return { bindings, calls };
  }

  async function keyed(
    bindings: typeof env,
    key: string,
    method: string,
    path: string,
    body?: unknown,
  ) {
    const response = await app.request(
      `${PUBLIC_URL}${path}`,
      {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      },
      bindings,
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it("once its name is known: the operation's own call verifies the key (claim, heartbeat, release, reads)", async () => {
    const one = await install({ repo: "auth-one/app", issues: [seedIssue(1), seedIssue(2)] });
    const admin = await user("one-admin", { "auth-one/app": "admin" });
    const key = String((await createKey("auth-one/app", admin)).body?.key);
    const { bindings, calls } = countingEnv();
    // The first request finds the name (and proves the key) the slow way.
    expect((await keyed(bindings, key, "GET", "/v1/repos/auth-one/app/claims")).status).toBe(200);
    for (const k of Object.keys(calls)) delete calls[k];
    const claimed = await keyed(bindings, key, "POST", "/v1/repos/auth-one/app/issues/1/claim", {
      agentId: "one",
    });
    expect(claimed.status).toBe(201);
    const fence = { claimId: claimed.body.claimId, fence: claimed.body.fence };
    const path = "/v1/repos/auth-one/app/issues/1/claim";
    expect((await keyed(bindings, key, "POST", `${path}/heartbeat`, fence)).status).toBe(200);
    expect((await keyed(bindings, key, "GET", "/v1/repos/AUTH-ONE/app/graph")).status).toBe(200);
    expect((await keyed(bindings, key, "GET", "/v1/repos/auth-one/app/keys")).status).toBe(200);
    const released = await keyed(bindings, key, "POST", `${path}/release`, {
      ...fence,
      outcome: "abandoned",
    });
    expect(released.status).toBe(200);
    expect(calls).toEqual({ "REPO.callWithKey": 5 });
    // lastUsedAt is still written at most once a minute.
    const listed = await one.stub.listKeys();
    expect(listed[0]!.lastUsedAt).not.toBeNull();
  });

  it("the object refuses what is no longer its own: a revoked key, a name renamed away, another installation", async () => {
    const mv = await install({ repo: "auth-move/app", issues: [seedIssue(1)] });
    const admin = await user("move-admin", { "auth-move/app": "admin" });
    const created = await createKey("auth-move/app", admin);
    const key = String(created.body?.key);
    const { bindings } = countingEnv();
    const claims = "/v1/repos/auth-move/app/claims";
    expect((await keyed(bindings, key, "GET", claims)).status).toBe(200);
    // Moved to another installation since this isolate remembered the name: 503 to try again,
    // and the next request looks the name up anew (the directory still names the first one).
    const identity = (await mv.stub.identity())!;
    await runInDurableObject(mv.stub, (o: { store: RepoStore }) =>
      o.store.transaction(() =>
        o.store.setIdentity({ ...identity, installationId: identity.installationId + 1 }),
      ),
    );
    const moved = await keyed(bindings, key, "GET", claims);
    expect(moved.status).toBe(503);
    expect(moved.body.message).toMatch(/another installation/);
    await runInDurableObject(mv.stub, (o: { store: RepoStore }) =>
      o.store.transaction(() => o.store.setIdentity(identity)),
    );
    expect((await keyed(bindings, key, "GET", claims)).status).toBe(200);
    // Renamed away (as the object learns it by id): the old name is another repository's now.
    await runInDurableObject(mv.stub, (o: { store: RepoStore }) =>
      o.store.transaction(() =>
        o.store.setIdentity({ ...identity, fullName: "auth-move/renamed" }),
      ),
    );
    const renamed = await keyed(bindings, key, "GET", claims);
    expect({ status: renamed.status, error: renamed.body.error }).toEqual({
      status: 403,
      error: "forbidden",
    });
    await runInDurableObject(mv.stub, (o: { store: RepoStore }) =>
      o.store.transaction(() => o.store.setIdentity(identity)),
    );
    expect((await keyed(bindings, key, "GET", claims)).status).toBe(200);
    // A forged key of a remembered name: 401 (a key is proven before anything else is said),
    // on a key route too. Each refusal forgets the name; a good request remembers it again.
    const { key: forged } = await mintKey(mv.repoId);
    secrets.add(forged);
    expect((await keyed(bindings, forged, "GET", claims)).status).toBe(401);
    expect((await keyed(bindings, key, "GET", claims)).status).toBe(200);
    const keysPath = "/v1/repos/auth-move/app/keys";
    expect((await keyed(bindings, forged, "POST", keysPath, { name: "x" })).status).toBe(401);
    expect((await keyed(bindings, key, "GET", claims)).status).toBe(200);
    // A body failing its schema asks no operation: the key is still proven before the 400, so
    // a forged key cannot learn which id a remembered name has.
    const claimPath = "/v1/repos/auth-move/app/issues/1/claim";
    expect((await keyed(bindings, forged, "POST", claimPath, { agentId: "" })).status).toBe(401);
    expect((await keyed(bindings, key, "GET", claims)).status).toBe(200);
    expect((await keyed(bindings, key, "POST", claimPath, { agentId: "" })).status).toBe(400);
    // Nor from a route that does not exist.
    expect((await keyed(bindings, forged, "GET", "/v1/repos/auth-move/app/nothing")).status).toBe(
      401,
    );
    expect((await keyed(bindings, key, "GET", claims)).status).toBe(200);
    expect((await keyed(bindings, key, "GET", "/v1/repos/auth-move/app/nothing")).status).toBe(404);
    expect((await keyed(bindings, key, "GET", claims)).status).toBe(200);
    expect((await keyed(bindings, key, "POST", keysPath, { name: "x" })).status).toBe(403);
    // Revoked: refused from the next request on, remembered name or not.
    await call("DELETE", `/v1/repos/auth-move/app/keys/${created.body?.id}`, { token: admin });
    const revoked = await keyed(bindings, key, "GET", claims);
    expect({ status: revoked.status, message: revoked.body.message }).toEqual({
      status: 401,
      message: "revoked fleet key",
    });
  });
});

describe("GitHub Actions OIDC tokens", () => {
  it("a token of the repository's workflow for PUBLIC_URL reads the graph and lists keys", async () => {
    const token = await oidcToken("auth-a/app");
    expect((await graph("auth-a/app", token)).status).toBe(200);
    expect((await call("GET", "/v1/repos/auth-a/app/keys", { token })).status).toBe(200);
    // The audience may carry a trailing slash.
    expect(
      (await graph("auth-a/app", await oidcToken("auth-a/app", { aud: `${PUBLIC_URL}/` }))).status,
    ).toBe(200);
  });

  it("wrong audience, expired, signed by another key: 401", async () => {
    const wrongAud = await expectError(
      graph("auth-a/app", await oidcToken("auth-a/app", { aud: "https://elsewhere.test" })),
      401,
      "unauthorized",
    );
    expect(wrongAud.body?.message).toMatch(/audience/);
    const expired = await expectError(
      graph("auth-a/app", await oidcToken("auth-a/app", { expiresInSeconds: -60 })),
      401,
      "unauthorized",
    );
    expect(expired.body?.message).toMatch(/expired/);
    const foreign = await expectError(
      graph("auth-a/app", await oidcToken("auth-a/app", { signWith: "foreign" })),
      401,
      "unauthorized",
    );
    expect(foreign.body?.message).toMatch(/signed/);
    // A tampered payload breaks the signature.
    const [h, p, s] = (await oidcToken("auth-a/app")).split(".");
    const claims = JSON.parse(atob(p!.replace(/-/g, "+").replace(/_/g, "/")));
    claims.repository_id = String(B.repoId);
    const forged = `${h}.${btoa(JSON.stringify(claims)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}.${s}`;
    secrets.add(forged);
    await expectError(graph("auth-b/other", forged), 401, "unauthorized");
  });

  it("the audience is PUBLIC_URL, never the request's Host", async () => {
    const token = await oidcToken("auth-a/app", { aud: "https://evil.test" });
    await expectError(
      call("GET", "/v1/repos/auth-a/app/graph", { token, host: "https://evil.test" }),
      401,
      "unauthorized",
    );
  });

  it("a token of another repository: 403; of the repository itself when not installed: 404", async () => {
    await expectError(graph("auth-a/app", await oidcToken("auth-b/other")), 403, "forbidden");
    await expectError(graph("auth-a/app", await oidcToken("auth-bare/app")), 403, "forbidden");
    await expectError(graph("auth-nowhere/none", await oidcToken("auth-a/app")), 403, "forbidden");
    await expectError(graph("auth-bare/app", await oidcToken("auth-bare/app")), 404, "not-found");
    await expectError(graph("auth-gone/app", await oidcToken("auth-gone/app")), 404, "not-found");
    await expectError(graph("auth-gone/app", await oidcToken("auth-a/app")), 403, "forbidden");
  });

  it("without PUBLIC_URL, OIDC tokens are refused naming the setting", async () => {
    const token = await oidcToken("auth-a/app");
    const response = await app.request(
      `${PUBLIC_URL}/v1/repos/auth-a/app/graph`,
      { headers: { authorization: `Bearer ${token}` } },
      { ...env, PUBLIC_URL: undefined },
    );
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: string; message: string };
    expect(body.error).toBe("unauthorized");
    expect(body.message).toMatch(/PUBLIC_URL/);
    // Keys and user tokens do not need it.
    const viaUser = await app.request(
      `${PUBLIC_URL}/v1/repos/auth-a/app/graph`,
      { headers: { authorization: `Bearer ${tokens.write}` } },
      { ...env, PUBLIC_URL: undefined },
    );
    expect(viaUser.status).toBe(200);
  });
});

describe("the OpenAPI description and the reference page", () => {
  it("are public; every /v1 route declares bearer security", async () => {
    const spec = await call("GET", "/openapi.json");
    expect(spec.status).toBe(200);
    const doc = spec.body as {
      openapi: string;
      components: { securitySchemes: Record<string, unknown> };
      paths: Record<
        string,
        Record<
          string,
          {
            security?: unknown;
            requestBody?: unknown;
            responses?: Record<string, { description: string; content?: unknown }>;
          }
        >
      >;
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    for (const path of ["/v1/repos/{owner}/{repo}/graph", "/v1/repos/{owner}/{repo}/keys"]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    let withBody = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith("/v1/")) continue;
      for (const [method, op] of Object.entries(ops)) {
        expect(op.security, `${method} ${path}`).toEqual([{ bearer: [] }]);
        // The body limit is middleware in front of every route; the description says so.
        if (op.requestBody) {
          withBody++;
          expect(op.responses?.["413"]?.description, `${method} ${path}`).toMatch(/^too-large/);
          expect(op.responses?.["413"]?.content, `${method} ${path}`).toEqual(
            op.responses?.["400"]?.content,
          );
        }
      }
    }
    expect(withBody).toBeGreaterThan(5);
    const docs = await call("GET", "/docs");
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toMatch(/text\/html/);
  });

  it("names its server (PUBLIC_URL, else the request's origin), its license, and each operation by a stable operationId", async () => {
    type Doc = {
      servers: Array<{ url: string }>;
      info: { license?: unknown };
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    // PUBLIC_URL (set in this pool) wins over the host the document is asked from.
    const served = (await call("GET", "/openapi.json", { host: "http://elsewhere.test:8787" }))
      .body as Doc;
    expect(served.servers).toEqual([{ url: PUBLIC_URL }]);
    expect(served.info.license).toEqual({ name: "MIT", identifier: "MIT" });
    // SDK generators name their methods by these: renaming one breaks every generated client.
    const ids = Object.entries(served.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(
        ([method, op]) => `${op.operationId} ${method.toUpperCase()} ${path}`,
      ),
    );
    expect(ids.sort()).toEqual([
      "changeLabels POST /v1/repos/{owner}/{repo}/issues/{n}/labels",
      "claimIssue POST /v1/repos/{owner}/{repo}/issues/{n}/claim",
      "claimNext POST /v1/repos/{owner}/{repo}/claims",
      "claimNextInOrg POST /v1/orgs/{owner}/claims",
      "closeIssue POST /v1/repos/{owner}/{repo}/issues/{n}/close",
      "createKey POST /v1/repos/{owner}/{repo}/keys",
      "createOwnerKey POST /v1/orgs/{owner}/keys",
      "createSubIssue POST /v1/repos/{owner}/{repo}/issues/{n}/sub-issues",
      "getGraph GET /v1/repos/{owner}/{repo}/graph",
      "getOrgQueue GET /v1/orgs/{owner}/queue",
      "getQueue GET /v1/repos/{owner}/{repo}/queue",
      "heartbeatClaim POST /v1/repos/{owner}/{repo}/issues/{n}/claim/heartbeat",
      "listClaims GET /v1/repos/{owner}/{repo}/claims",
      "listKeys GET /v1/repos/{owner}/{repo}/keys",
      "listOrgClaims GET /v1/orgs/{owner}/claims",
      "listOwnerKeys GET /v1/orgs/{owner}/keys",
      "postComment POST /v1/repos/{owner}/{repo}/issues/{n}/comments",
      "releaseClaim POST /v1/repos/{owner}/{repo}/issues/{n}/claim/release",
      "requestScan POST /v1/repos/{owner}/{repo}/scan",
      "revokeKey DELETE /v1/repos/{owner}/{repo}/keys/{id}",
      "revokeOwnerKey DELETE /v1/orgs/{owner}/keys/{id}",
    ]);
    const serversWith = async (publicUrl: string | undefined) => {
      const response = await app.request(
        "http://127.0.0.1:8787/openapi.json",
        {},
        { ...env, PUBLIC_URL: publicUrl },
      );
      return ((await response.json()) as Doc).servers;
    };
    // Unset or blank: the origin it was asked from. Set: without its trailing slash.
    expect(await serversWith(undefined)).toEqual([{ url: "http://127.0.0.1:8787" }]);
    expect(await serversWith(" ")).toEqual([{ url: "http://127.0.0.1:8787" }]);
    expect(await serversWith("https://queue.acme.dev/ ")).toEqual([
      { url: "https://queue.acme.dev" },
    ]);
  });
});

describe("garbage user tokens", () => {
  it("are throttled per client address: past the limit no GitHub call, 429; proven tokens still pass", async () => {
    const good = await user("throttle-good", { "auth-a/app": "write" });
    const from = (address: string, token: string) =>
      exports.default.fetch(`${PUBLIC_URL}/v1/repos/auth-a/app/graph`, {
        headers: { authorization: `Bearer ${token}`, "cf-connecting-ip": address },
      });
    const asked = async () =>
      (await sim<{ byEndpoint: Record<string, { total: number }> }>("/counters")).byEndpoint[
        "GET /repos/{owner}/{repo}"
      ]?.total ?? 0;
    const garbage = () => {
      const token = `ghp_${crypto.randomUUID().replace(/-/g, "")}`;
      secrets.add(token);
      return token;
    };
    expect((await from("198.51.100.7", good)).status).toBe(200);
    const before = await asked();
    for (let i = 0; i < USER_TOKEN_REFUSALS_PER_MINUTE; i++) {
      expect((await from("198.51.100.7", garbage())).status).toBe(401);
    }
    expect(await asked()).toBe(before + USER_TOKEN_REFUSALS_PER_MINUTE);
    const held = await from("198.51.100.7", garbage());
    expect(held.status).toBe(429);
    expect(Number(held.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await held.json()).toMatchObject({ error: "rate-limited" });
    expect(await asked()).toBe(before + USER_TOKEN_REFUSALS_PER_MINUTE);
    // A token proven before (cached) still passes from that address; other addresses are asked.
    expect((await from("198.51.100.7", good)).status).toBe(200);
    expect((await from("203.0.113.9", garbage())).status).toBe(401);
    expect(await asked()).toBe(before + USER_TOKEN_REFUSALS_PER_MINUTE + 1);
  });
});

describe("raw tokens are never stored or logged", () => {
  async function dump(stub: DurableObjectStub): Promise<string> {
    return runInDurableObject(stub, async (_instance: unknown, state: DurableObjectState) => {
      const sql = state.storage.sql;
      const tables = sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
        .toArray()
        .map((t) => t.name)
        .filter((name) => !name.startsWith("_cf_") && name !== "sqlite_sequence");
      const rows: Record<string, unknown[]> = {};
      for (const table of tables) rows[table] = sql.exec(`SELECT * FROM "${table}"`).toArray();
      const kv = Object.fromEntries(await state.storage.list());
      return JSON.stringify({ tables, rows, kv });
    });
  }

  it("not in any table of the RepoObjects, the InstallationObjects, the directory or its shards, nor in the log", async () => {
    // One more of each kind, so the scan sees every path (the previous tests added most).
    await graph("auth-a/app", tokens.admin);
    await graph("auth-a/app", await oidcToken("auth-a/app"));
    expect(secrets.size).toBeGreaterThan(20);
    const late = await directory(env).lookup("auth-late/app");
    const stubs: Array<[string, DurableObjectStub]> = [
      ["directory", directory(env)],
      ["the name shard bucket of auth-a/app", shard(env, nameShardKey("auth-a/app"))],
      [`the id shard bucket of ${A.repoId}`, shard(env, idShardKey(A.repoId))],
      ...[A, B, GONE].map((r): [string, DurableObjectStub] => [r.repo, repoStub(r.repoId)]),
      ["auth-late/app", repoStub(late!.repoId)],
      ...[A, B, GONE].map((r): [string, DurableObjectStub] => [
        `installation of ${r.repo}`,
        installationStub(r.installationId),
      ]),
    ];
    const hashes = await Promise.all(
      [...secrets].filter((s) => s.startsWith("syk_")).map((s) => sha256Hex(s)),
    );
    let sawTables = 0;
    let allDumps = "";
    for (const [name, stub] of stubs) {
      const dumped = await dump(stub);
      allDumps += dumped;
      sawTables += (JSON.parse(dumped) as { tables: string[] }).tables.length;
      for (const secret of secrets) {
        expect(dumped.includes(secret), `a raw token in ${name}`).toBe(false);
        // Nor the secret part of a key on its own.
        // (`syk_<repoId>_<secret>`: the secret is base64url, which may itself contain `_`.)
        const tail = secret.startsWith("syk_") ? secret.slice(secret.indexOf("_", 4) + 1) : null;
        if (tail !== null && tail.length < 20) continue; // the deliberately malformed ones
        if (tail) expect(dumped.includes(tail), `a key secret in ${name}`).toBe(false);
      }
    }
    expect(sawTables).toBeGreaterThan(10);
    // The console spy sees what code inside a Durable Object logs, too.
    await runInDurableObject(repoStub(A.repoId), () => console.warn("probe from the object"));
    expect(logged.some((line) => line.includes("probe from the object"))).toBe(true);
    // The scan does see the keys: as their hashes.
    expect(hashes.some((h) => allDumps.includes(h))).toBe(true);
    for (const line of logged) {
      for (const secret of secrets)
        expect(line.includes(secret), "a raw token in the log").toBe(false);
    }
  });
});
