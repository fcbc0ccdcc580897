// The rules by GitHub token kind (spec 6.4, issue 21): each kind is used only with the
// authority it carries, and every refusal names its rule.
import { describe, expect, it } from "vitest";
import type { GitHubAnswer } from "../../../shared/auth/access.ts";
import {
  ADMIN_PROOF_MAX_AGE_MS,
  adminProofFresh,
  appTokenCacheKey,
  appTokenVerdict,
  carriesScopes,
  type GitHubTokenKind,
  githubTokenKind,
  parseScopes,
  scopedTokenAccess,
  TOKEN_KIND_NAMES,
  tokenRule,
} from "../../../shared/auth/github-tokens.ts";

const REPO = "acme/rocket";
const APP = { clientId: "Iv1.ours", clientSecret: "s3cret" };
const repo = (extra: Record<string, unknown> = {}) => ({
  id: 7,
  full_name: REPO,
  private: true,
  permissions: { admin: false, push: true, pull: true },
  ...extra,
});
const ok = (body: unknown): GitHubAnswer => ({ kind: "ok", body });
const err = (errorKind: string, status: number | null, retryAfterMs?: number): GitHubAnswer => ({
  kind: "error",
  errorKind,
  status,
  ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
});

describe("a GitHub token's kind, by its prefix", () => {
  it("names each kind GitHub documents; anything else is a pre-2021 classic token", () => {
    const cases: Array<[string, GitHubTokenKind]> = [
      ["ghp_abc", "classic"],
      ["gho_abc", "oauth"],
      ["ghu_abc", "app-user"],
      ["github_pat_11ABC_def", "fine-grained"],
      ["ghs_abc", "installation"],
      ["ghr_abc", "refresh"],
      ["0123456789abcdef0123456789abcdef01234567", "legacy"],
    ];
    for (const [token, kind] of cases) expect(githubTokenKind(token), token).toBe(kind);
    expect(carriesScopes("classic") && carriesScopes("oauth") && carriesScopes("legacy")).toBe(
      true,
    );
    expect(carriesScopes("app-user") || carriesScopes("fine-grained")).toBe(false);
    // Audit entries and messages name the prefix, never the token.
    expect(TOKEN_KIND_NAMES["app-user"]).toBe("ghu_");
  });
});

describe("the rule of each kind", () => {
  it("classic, OAuth and legacy tokens: their scopes are checked", () => {
    for (const kind of ["classic", "oauth", "legacy"] as const) {
      expect(tokenRule(kind, {})).toEqual({ ok: true, check: "scopes" });
    }
  });

  it("ghu_: checked with the App's client credentials; without them refused naming the settings", () => {
    expect(tokenRule("app-user", APP)).toEqual({ ok: true, check: "app", ...APP });
    for (const app of [{}, { clientId: "Iv1.ours" }, { clientId: " ", clientSecret: "x" }]) {
      const rule = tokenRule("app-user", app);
      expect(rule).toMatchObject({ ok: false, status: 401, error: "unauthorized" });
      if (!rule.ok) {
        expect(rule.message).toContain("GITHUB_APP_CLIENT_ID");
        expect(rule.message).toContain("GITHUB_APP_CLIENT_SECRET");
      }
    }
  });

  it("github_pat_ and ghs_: refused, pointing to fleet keys or OIDC", () => {
    for (const kind of ["fine-grained", "installation"] as const) {
      const rule = tokenRule(kind, APP);
      expect(rule).toMatchObject({ ok: false, status: 401, error: "unauthorized" });
      if (!rule.ok) {
        expect(rule.message).toContain(TOKEN_KIND_NAMES[kind]);
        expect(rule.message).toMatch(/fleet key/);
        expect(rule.message).toMatch(/OIDC/);
      }
    }
    expect(tokenRule("refresh", APP)).toMatchObject({ ok: false, status: 401 });
  });
});

describe("classic and OAuth tokens: X-OAuth-Scopes", () => {
  it("parses the header", () => {
    expect(parseScopes("repo, read:org")).toEqual(["repo", "read:org"]);
    expect(parseScopes("")).toEqual([]);
    expect(parseScopes(undefined)).toEqual([]);
  });

  it("repo lets the person's role decide", () => {
    expect(scopedTokenAccess(REPO, "classic", ok(repo()), "repo, gist")).toEqual({
      ok: true,
      access: "write",
      repoId: 7,
    });
    // The scope is necessary, not sufficient: a read-only person stays refused.
    const reader = repo({ permissions: { admin: false, push: false, pull: true } });
    expect(scopedTokenAccess(REPO, "oauth", ok(reader), "repo")).toMatchObject({ status: 403 });
  });

  it("without repo: refused naming the rule and the scopes it has", () => {
    for (const header of [undefined, "", "read:org, gist", "public_repo"]) {
      const access = scopedTokenAccess(REPO, "classic", ok(repo()), header);
      expect(access, String(header)).toMatchObject({ ok: false, status: 403, error: "forbidden" });
      if (!access.ok) expect(access.message).toMatch(/needs the repo scope/);
    }
    const none = scopedTokenAccess(REPO, "oauth", ok(repo()), undefined);
    expect(!none.ok && none.message).toMatch(/gho_ token .* has no scopes/);
  });

  it("public_repo is enough on a public repository only", () => {
    for (const pub of [{ private: false }, { private: false, visibility: "public" }]) {
      expect(scopedTokenAccess(REPO, "classic", ok(repo(pub)), "public_repo")).toMatchObject({
        ok: true,
        access: "write",
      });
    }
    for (const priv of [
      { private: true },
      { private: true, visibility: "internal" },
      { private: undefined },
    ]) {
      expect(scopedTokenAccess(REPO, "classic", ok(repo(priv)), "public_repo")).toMatchObject({
        ok: false,
        status: 403,
      });
    }
  });

  it("GitHub's refusals keep their meaning; a 404 names the scope a private repository needs", () => {
    expect(scopedTokenAccess(REPO, "classic", err("unauthorized", 401), undefined)).toMatchObject({
      status: 401,
    });
    const hidden = scopedTokenAccess(REPO, "classic", err("not-found", 404), "read:org");
    expect(hidden).toMatchObject({ status: 403, error: "forbidden" });
    expect(!hidden.ok && hidden.message).toMatch(/repo scope/);
    expect(scopedTokenAccess(REPO, "classic", err("server", 502), undefined)).toMatchObject({
      status: 503,
    });
  });
});

describe("ghu_ tokens: issued to switchyard's App", () => {
  const answer = (clientId: string, login: string | null = "alice") =>
    ok({
      id: 1,
      token: "ghu_x",
      scopes: [],
      app: { client_id: clientId, name: "switchyard" },
      user: login === null ? null : { login },
    });

  it("our client id: accepted, naming the user", () => {
    expect(appTokenVerdict(APP.clientId, answer(APP.clientId))).toEqual({
      ok: true,
      login: "alice",
    });
    expect(appTokenVerdict(APP.clientId, answer(APP.clientId, null))).toEqual({
      ok: true,
      login: null,
    });
  });

  it("another App's token (GitHub 404, or another client id): 401 naming the rule", () => {
    for (const a of [answer("Iv1.theirs"), err("not-found", 404), err("invalid", 422)]) {
      const verdict = appTokenVerdict(APP.clientId, a);
      expect(verdict).toMatchObject({ ok: false, status: 401, error: "unauthorized" });
      if (!verdict.ok) expect(verdict.message).toMatch(/switchyard's own App/);
    }
  });

  it("GitHub refusing the App's credentials is the Worker's fault: 503 naming the settings", () => {
    const verdict = appTokenVerdict(APP.clientId, err("unauthorized", 401));
    expect(verdict).toMatchObject({ ok: false, status: 503, error: "unavailable" });
    if (!verdict.ok) expect(verdict.message).toContain("GITHUB_APP_CLIENT_SECRET");
  });

  it("a rate limit: 429 with when to retry; an outage or odd answer: 503", () => {
    expect(appTokenVerdict(APP.clientId, err("rate-limited", 403, 2_500))).toMatchObject({
      status: 429,
      retryAfterSeconds: 3,
    });
    expect(appTokenVerdict(APP.clientId, err("timeout", null))).toMatchObject({ status: 503 });
    expect(appTokenVerdict(APP.clientId, ok({ message: "?" }))).toMatchObject({ status: 503 });
  });

  it("is remembered by the token's hash alone", () => {
    expect(appTokenCacheKey("ab".repeat(32))).toBe(`app:${"ab".repeat(32)}`);
  });
});

describe("minting a key: admin proven within the last minute", () => {
  it("an answer up to a minute old is fresh; older is not", () => {
    const now = 1_000_000;
    expect(ADMIN_PROOF_MAX_AGE_MS).toBe(60_000);
    expect(adminProofFresh(now, now)).toBe(true);
    expect(adminProofFresh(now - 60_000, now)).toBe(true);
    expect(adminProofFresh(now - 60_001, now)).toBe(false);
  });
});
