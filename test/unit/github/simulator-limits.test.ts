// GitHub's limits in the simulator: at most 100 requests in flight per identity (the excess
// refused as a secondary rate limit, with `retry-after`), an installation's hourly primary limit
// grown by its repositories and members, the counters that report both, and the knobs tests and
// benchmarks turn (concurrency, scale, window, the clock).
import { describe, expect, it } from "vitest";
import { createGitHubSimulator, type GitHubSimulator } from "../../../infra/github-sim/app.ts";
import { call, control } from "./sim-call.ts";

function installed(repositories = 1) {
  const sim = createGitHubSimulator({ userTokens: ["octo"] });
  const names = Array.from({ length: repositories }, (_, i) => `r${i}`);
  for (const name of names) sim.state.createRepo("acme", name);
  const inst = sim.state.install("acme", names, "octocat");
  return { sim, inst, token: sim.tokens.mint(inst.id, sim.now()).token };
}

/** Holds every matching request for `ms` (GitHub is slow), so requests overlap. */
async function slow(sim: GitHubSimulator, times: number, ms = 50) {
  await control(sim, "PUT", "/faults", {
    requests: [{ method: "GET", path: "/repos/acme/r0", delayMs: ms, times }],
  });
}

describe("the secondary limit on concurrent requests", () => {
  it("admits 100 requests of one identity at once and refuses the rest with 403 and retry-after", async () => {
    const { sim, inst, token } = installed();
    await slow(sim, 200);
    const answers = await Promise.all(
      Array.from({ length: 103 }, () => call(sim, "GET", "/repos/acme/r0", { token })),
    );
    const refused = answers.filter((a) => a.status === 403);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(100);
    expect(refused).toHaveLength(3);
    expect(refused[0]!.body.message).toMatch(/^You have exceeded a secondary rate limit/);
    expect(refused[0]!.headers.get("retry-after")).toBe("60");
    const counters = (await control(sim, "GET", "/counters")).body;
    expect(counters.identities[`installation:${inst.id}`]).toEqual({
      requests: 103,
      inFlight: 0,
      maxConcurrent: 100,
      secondaryRefusals: 3,
      rateLimitRefusals: 0,
    });
    expect(counters.secondaryRateLimited).toBe(3);
    // A refusal costs nothing of the hourly budget, and once the burst is over requests pass.
    const after = await call(sim, "GET", "/repos/acme/r0", { token });
    expect(after.status).toBe(200);
    expect(after.headers.get("x-ratelimit-used")).toBe("101");
  });

  it("counts each identity on its own and follows a configured limit", async () => {
    const { sim, token } = installed();
    const configured = await control(sim, "PUT", "/rate-limit", {
      concurrency: 2,
      retryAfterSeconds: 5,
    });
    expect(configured.body).toMatchObject({ concurrency: 2, retryAfterSeconds: 5 });
    await slow(sim, 10);
    const answers = await Promise.all([
      call(sim, "GET", "/repos/acme/r0", { token }),
      call(sim, "GET", "/repos/acme/r0", { token }),
      call(sim, "GET", "/repos/acme/r0", { token }),
      call(sim, "GET", "/repos/acme/r0", { token: "octo" }),
      call(sim, "GET", "/repos/acme/r0", { token: "octo" }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 403, 200, 200]);
    expect(answers[2]!.headers.get("retry-after")).toBe("5");
    const { identities } = (await control(sim, "GET", "/counters")).body;
    expect(identities["user:octocat"]).toMatchObject({ maxConcurrent: 2, secondaryRefusals: 0 });
    await control(sim, "POST", "/counters/reset");
    expect((await control(sim, "GET", "/counters")).body.identities).toEqual({});
  });

  it("does not count requests whose token GitHub refuses", async () => {
    const { sim } = installed();
    expect((await call(sim, "GET", "/repos/acme/r0", { token: "nobody" })).status).toBe(401);
    expect((await control(sim, "GET", "/counters")).body.identities).toEqual({});
  });
});

describe("the hourly primary limit", () => {
  const limitOf = async (sim: GitHubSimulator, token: string) =>
    Number((await call(sim, "GET", "/repos/acme/r0", { token })).headers.get("x-ratelimit-limit"));

  it("is 5,000 for an installation of up to 20 repositories, plus 50 for each one more, at most 12,500", async () => {
    const small = installed(20);
    expect(await limitOf(small.sim, small.token)).toBe(5000);
    const mid = installed(25);
    expect(await limitOf(mid.sim, mid.token)).toBe(5250);
    const big = installed(200);
    expect(await limitOf(big.sim, big.token)).toBe(12_500);
    // A user's limit does not grow.
    expect(await limitOf(mid.sim, "octo")).toBe(5000);
    expect((await control(mid.sim, "GET", "/rate-limit")).body.installations).toEqual({
      [String(mid.inst.id)]: 5250,
    });
  });

  it("grows with the organization's active members over 20, and with repositories added", async () => {
    const { sim, inst, token } = installed(1);
    for (let i = 0; i < 24; i++)
      await control(sim, "POST", "/orgs/acme/members", {
        login: `m${i}`,
        state: i < 22 ? "active" : "pending",
      });
    expect(await limitOf(sim, token)).toBe(5100);
    sim.state.changeInstallationRepos(
      inst,
      Array.from({ length: 21 }, (_, i) => `more${i}`),
      [],
      "octocat",
    );
    expect(await limitOf(sim, token)).toBe(5200);
  });

  it("scales down for benchmarks, keeps its window on the simulator's clock, and refuses when spent", async () => {
    const { sim, inst, token } = installed(25);
    await control(sim, "PUT", "/rate-limit", { scale: 0.001, windowSeconds: 60 });
    const first = await call(sim, "GET", "/repos/acme/r0", { token });
    expect(first.headers.get("x-ratelimit-limit")).toBe("5"); // 5,250 × 0.001, rounded
    const reset = Number(first.headers.get("x-ratelimit-reset"));
    expect(reset - Math.floor(sim.now().getTime() / 1000)).toBeLessThanOrEqual(60);
    for (let i = 0; i < 4; i++) await call(sim, "GET", "/repos/acme/r0", { token });
    const spent = await call(sim, "GET", "/repos/acme/r0", { token });
    expect(spent.status).toBe(403);
    expect(spent.body.message).toContain("API rate limit exceeded");
    // Counted against whose hour it was (a test tells its own installation's from another's).
    const { identities } = (await control(sim, "GET", "/counters")).body;
    expect(identities[`installation:${inst.id}`]).toMatchObject({
      requests: 6,
      rateLimitRefusals: 1,
      secondaryRefusals: 0,
    });
    await control(sim, "POST", "/clock", { advanceSeconds: 61 });
    const fresh = await call(sim, "GET", "/repos/acme/r0", { token });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("x-ratelimit-remaining")).toBe("4");
  });

  it("takes the growth rule from the control API", async () => {
    const { sim, token } = installed(25);
    await control(sim, "PUT", "/rate-limit", { installation: { perRepository: 100, max: 6000 } });
    expect(await limitOf(sim, token)).toBe(5500);
    await control(sim, "PUT", "/rate-limit", { installation: { included: 0 } });
    expect(await limitOf(sim, token)).toBe(6000);
    expect((await control(sim, "PUT", "/rate-limit", { scale: 0 })).status).toBe(400);
  });
});
