// Slowing down before the primary rate limit: the pure spacing rule with exact numbers, and the
// client spacing its requests against the simulator's rate-limit headers on a fake clock.
import { describe, expect, it } from "vitest";
import { simulatorFetch } from "../../../infra/github-sim/app.ts";
import { GitHubApiError } from "../../../shared/github/errors.ts";
import { bucketOf, paceDelayMs, RateLimitPacer } from "../../../shared/github/pacing.ts";
import { getIssue } from "../../../shared/github/writes.ts";
import { harness, issue, REPO, seed } from "./sim-harness.ts";

const NOW = Date.parse("2026-11-01T00:00:00Z");
const RESET = NOW / 1000 + 1000; // 1000 s from now

describe("paceDelayMs", () => {
  const bucket = (remaining: number, limit = 5000, reset = RESET) => ({ limit, remaining, reset });

  it("does not wait while at least the fraction of the limit remains", () => {
    expect(paceDelayMs(bucket(500), 0.1, NOW, NOW)).toBe(0);
    expect(paceDelayMs(bucket(4999), 0.1, NOW, NOW)).toBe(0);
  });

  it("spreads the remaining requests evenly until the reset", () => {
    // 1000 s left, 100 requests: one every 10 s, counted from the previous send.
    expect(paceDelayMs(bucket(100), 0.1, NOW, NOW)).toBe(10_000);
    expect(paceDelayMs(bucket(100), 0.1, NOW - 4_000, NOW)).toBe(6_000);
    expect(paceDelayMs(bucket(100), 0.1, NOW - 10_000, NOW)).toBe(0);
    expect(paceDelayMs(bucket(100), 0.1, NOW - 60_000, NOW)).toBe(0);
    // 499 left of 5000 (just under 10%): ceil(1_000_000 / 499) = 2005 ms.
    expect(paceDelayMs(bucket(499), 0.1, NOW, NOW)).toBe(2_005);
    // A later send already scheduled (a concurrent request) pushes the next one further.
    expect(paceDelayMs(bucket(100), 0.1, NOW + 10_000, NOW)).toBe(20_000);
  });

  it("uses the configured fraction", () => {
    expect(paceDelayMs(bucket(100, 1000), 0.1, NOW, NOW)).toBe(0);
    expect(paceDelayMs(bucket(100, 1000), 0.2, NOW, NOW)).toBe(10_000);
    expect(paceDelayMs(bucket(1, 1000), 0, NOW, NOW)).toBe(0);
  });

  it("waits until a second after the reset with nothing left", () => {
    expect(paceDelayMs(bucket(0), 0.1, NOW - 60_000, NOW)).toBe(1_001_000);
  });

  it("does not wait once the reset has passed, or without usable headers", () => {
    expect(paceDelayMs(bucket(10, 5000, NOW / 1000), 0.1, NOW, NOW)).toBe(0);
    expect(paceDelayMs(bucket(10, 5000, NOW / 1000 - 5), 0.1, NOW, NOW)).toBe(0);
    expect(paceDelayMs(null, 0.1, NOW, NOW)).toBe(0);
    expect(paceDelayMs(bucket(Number.NaN), 0.1, NOW, NOW)).toBe(0);
    expect(paceDelayMs(bucket(10, 0), 0.1, NOW, NOW)).toBe(0);
  });
});

describe("RateLimitPacer", () => {
  const headers = (remaining: number, resource = "core") => ({
    "x-ratelimit-limit": "5000",
    "x-ratelimit-remaining": String(remaining),
    "x-ratelimit-reset": String(RESET),
    "x-ratelimit-resource": resource,
  });

  it("queues concurrent requests one interval apart, per bucket", () => {
    const pacer = new RateLimitPacer();
    pacer.sent("core", NOW - 1_000);
    pacer.observe(headers(100), "core");
    const first = pacer.delayFor("core", 0.1, NOW);
    pacer.sent("core", NOW + first);
    const second = pacer.delayFor("core", 0.1, NOW);
    expect([first, second]).toEqual([9_000, 19_000]);
    // The GraphQL bucket is its own.
    expect(pacer.delayFor("graphql", 0.1, NOW)).toBe(0);
    expect(bucketOf("POST http://sim.test/graphql")).toBe("graphql");
    expect(bucketOf("GET /repos/{owner}/{repo}/issues")).toBe("core");
  });
});

describe("the client against the simulator", () => {
  function setup(clientOpts = {}) {
    const h = harness();
    seed(h.sim, [issue(1)]);
    h.sim.setClock({ now: "2026-11-01T00:00:00Z" });
    const sleeps: number[] = [];
    const client = h.newClient({
      now: () => h.sim.now().getTime(),
      // The fake clock: a sleep advances the simulator's time instead of waiting.
      sleep: async (ms) => {
        sleeps.push(ms);
        h.sim.setClock({ advanceSeconds: ms / 1000 });
      },
      ...clientOpts,
    });
    const control = (body: unknown) =>
      simulatorFetch(h.sim)("http://sim.test/_sim/rate-limit", {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    return { ...h, client, sleeps, control };
  }

  it("sends without waiting while plenty remains", async () => {
    const h = setup();
    for (let i = 0; i < 5; i++) await getIssue(h.client, REPO, 1);
    expect(h.sleeps).toEqual([]);
    expect(h.client.stats.paceWaits).toBe(0);
  });

  it("spaces requests so the bucket lasts until the reset once under 10% remain", async () => {
    const h = setup();
    expect((await h.control({ limit: 5000, remaining: 400 })).status).toBe(200);
    const seen: Array<{ remaining: number; at: number }> = [];
    for (let i = 0; i < 4; i++) {
      const res = await h.client.send<unknown>({
        operation: "read issue 1",
        route: "GET /repos/{owner}/{repo}/issues/{issue_number}",
        params: { owner: "acme", repo: "app", issue_number: 1 },
        idempotent: true,
      });
      seen.push({
        remaining: Number(res.headers["x-ratelimit-remaining"]),
        at: h.sim.now().getTime() - NOW,
      });
    }
    // The simulator answered 399 remaining (of 5000, reset 3600 s after the bucket opened):
    // the first request knows nothing yet; each later one waits (reset − now) / remaining
    // after the previous send: ceil(3_600_000 / 399), ceil(3_590_977 / 398), ceil(3_581_954 / 397).
    expect(seen.map((s) => s.remaining)).toEqual([399, 398, 397, 396]);
    expect(h.sleeps).toEqual([9_023, 9_023, 9_023]);
    expect(seen.map((s) => s.at)).toEqual([0, 9_023, 18_046, 27_069]);
    expect(h.client.stats).toMatchObject({ paceWaits: 3, pacedMs: 27_069, rateLimitWaits: 0 });
    // At this pace the 396 requests left last until the reset (3600 s after the start).
    expect(27_069 + 396 * 9_023).toBeGreaterThanOrEqual(3_600_000);
  });

  it("paces by the configured fraction, and not at all when it is 0", async () => {
    const h = setup({ paceBelow: 0.5, retry: { maxRateLimitWaitMs: 600_000 } });
    await h.control({ limit: 100, remaining: 40 });
    await getIssue(h.client, REPO, 1);
    await getIssue(h.client, REPO, 1);
    // 39 left after the first request, 3600 s to go: 92_308 ms.
    expect(h.sleeps).toEqual([92_308]);

    const off = setup({ paceBelow: 0 });
    await off.control({ limit: 5000, remaining: 10 });
    await getIssue(off.client, REPO, 1);
    await getIssue(off.client, REPO, 1);
    expect(off.sleeps).toEqual([]);
  });

  it("refuses with rate-limited, before sending, when the spacing exceeds the wait it accepts", async () => {
    const h = setup({ retry: { maxRateLimitWaitMs: 10_000 } });
    await h.control({ limit: 5000, remaining: 100 });
    await getIssue(h.client, REPO, 1);
    const sent = h.client.stats.requests;
    const error = (await getIssue(h.client, REPO, 1).catch((e: unknown) => e)) as GitHubApiError;
    expect(error).toBeInstanceOf(GitHubApiError);
    // 99 left, 3600 s to go: one request every ceil(3_600_000 / 99) ms.
    expect(error).toMatchObject({ kind: "rate-limited", retryAfterMs: Math.ceil(3_600_000 / 99) });
    expect(h.client.stats.requests).toBe(sent);
    expect(h.sleeps).toEqual([]);
  });

  it("spaces the requests of clients sharing one rate-limit state", async () => {
    const h = setup();
    await h.control({ limit: 5000, remaining: 400 });
    const shared = new RateLimitPacer();
    const sleeps: number[] = [];
    const make = () =>
      h.newClient({
        now: () => h.sim.now().getTime(),
        sleep: async (ms) => {
          sleeps.push(ms);
          h.sim.setClock({ advanceSeconds: ms / 1000 });
        },
        rateLimitState: shared,
      });
    await getIssue(make(), REPO, 1);
    await getIssue(make(), REPO, 1);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(0);
  });
});
