import { describe, expect, it } from "vitest";
import {
  isCacheable,
  type RepoEntry,
  resolveBound,
  resolveForUser,
  USER_ACCESS_TTL_MS,
  USER_REFUSAL_TTL_MS,
  userAccess,
  userAccessCacheKey,
  userAccessTtlMs,
} from "../../../shared/auth/access.ts";

const REPO = "acme/rocket";
const ok = (body: unknown) => userAccess(REPO, { kind: "ok", body });
const err = (errorKind: string, status: number | null, retryAfterMs?: number) =>
  userAccess(REPO, {
    kind: "error",
    errorKind,
    status,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
const repo = (permissions?: Record<string, boolean>) => ({
  id: 7,
  full_name: REPO,
  ...(permissions ? { permissions } : {}),
});

describe("a GitHub user token's access, from GitHub's answer to GET /repos/{o}/{r}", () => {
  it("admin → admin; push (write, maintain) → write", () => {
    expect(ok(repo({ admin: true, maintain: true, push: true, triage: true, pull: true }))).toEqual(
      { ok: true, access: "admin", repoId: 7 },
    );
    expect(ok(repo({ admin: false, maintain: true, push: true, pull: true }))).toEqual({
      ok: true,
      access: "write",
      repoId: 7,
    });
    expect(ok(repo({ admin: false, push: true, pull: true }))).toMatchObject({ access: "write" });
  });

  it("read, triage or no permissions at all → 403", () => {
    for (const body of [
      repo({ admin: false, push: false, triage: true, pull: true }),
      repo({ admin: false, push: false, pull: true }),
      repo({}),
      repo(),
    ]) {
      expect(ok(body)).toMatchObject({ ok: false, status: 403, error: "forbidden" });
    }
  });

  it("GitHub 401 → 401; 403 and 404 → 403", () => {
    expect(err("unauthorized", 401)).toMatchObject({ status: 401, error: "unauthorized" });
    expect(err("forbidden", 403)).toMatchObject({ status: 403, error: "forbidden" });
    expect(err("not-found", 404)).toMatchObject({ status: 403, error: "forbidden" });
  });

  it("a rate limit → 429 with when to retry; an outage or odd answer → 503; neither is cached", () => {
    const limited = err("rate-limited", 403, 30_500);
    expect(limited).toMatchObject({ status: 429, error: "rate-limited", retryAfterSeconds: 31 });
    const down = err("timeout", null);
    expect(down).toMatchObject({ status: 503, error: "unavailable" });
    expect(err("server", 502)).toMatchObject({ status: 503 });
    expect(ok({ message: "not a repository" })).toMatchObject({ status: 503 });
    expect(isCacheable(limited)).toBe(false);
    expect(isCacheable(down)).toBe(false);
    expect(isCacheable(err("unauthorized", 401))).toBe(true);
    expect(isCacheable(err("not-found", 404))).toBe(true);
    expect(isCacheable(ok(repo({ push: true })))).toBe(true);
  });

  it("is remembered at most 5 minutes (a refusal 1 minute), keyed by hash and name", () => {
    expect(userAccessTtlMs(ok(repo({ push: true })))).toBe(USER_ACCESS_TTL_MS);
    expect(USER_ACCESS_TTL_MS).toBeLessThanOrEqual(5 * 60_000);
    expect(userAccessTtlMs(err("forbidden", 403))).toBe(USER_REFUSAL_TTL_MS);
    const hash = "ab".repeat(32);
    expect(userAccessCacheKey(hash, "Acme/Rocket")).toBe(`${hash}:acme/rocket`);
  });
});

const entry = (extra: Partial<RepoEntry> = {}): RepoEntry => ({
  repoId: 7,
  fullName: REPO,
  installationId: 3,
  status: "active",
  ...extra,
});
const target = { repoId: 7, fullName: REPO, installationId: 3 };

describe("resolving the repository after auth", () => {
  it("a user GitHub let in: the installed repository of that id, else 404", () => {
    expect(resolveForUser(REPO, 7, entry())).toEqual({ ok: true, repo: target });
    expect(resolveForUser(REPO, 7, entry({ status: "suspended" }))).toEqual({
      ok: true,
      repo: target,
    });
    for (const e of [null, entry({ status: "removed" }), entry({ repoId: 8 })]) {
      expect(resolveForUser(REPO, 7, e)).toMatchObject({
        status: 404,
        error: "not-found",
        message: `repository ${REPO} is not installed`,
      });
    }
  });

  it("a bound token: its own repository (404 when uninstalled); any other is 403", () => {
    expect(resolveBound(REPO, { repoId: 7 }, entry(), "the key")).toEqual({
      ok: true,
      repo: target,
    });
    expect(
      resolveBound(REPO, { repoId: 7 }, entry({ status: "removed" }), "the key"),
    ).toMatchObject({ status: 404 });
    // Installed or not, known or not: a token of another repository learns nothing.
    for (const e of [entry(), entry({ status: "removed" }), null]) {
      expect(resolveBound(REPO, { repoId: 9 }, e, "the key")).toMatchObject({
        status: 403,
        error: "forbidden",
      });
    }
  });

  it("an OIDC token of a never-installed repository learns 404 for its own repository only", () => {
    expect(resolveBound(REPO, { repoId: 9, fullName: "ACME/rocket" }, null, "t")).toMatchObject({
      status: 404,
    });
    expect(resolveBound(REPO, { repoId: 9, fullName: "acme/other" }, null, "t")).toMatchObject({
      status: 403,
    });
  });
});
