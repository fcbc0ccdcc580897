// The page's figures (done per day, median claim duration) and the login settings: each missing
// or malformed one named, GitHub's web address derived for github.com, Enterprise and others.
import { describe, expect, it } from "vitest";
import {
  type LoginEnv,
  loginSettings,
  webUrlOf,
} from "../../../functions/routes/status/settings.ts";
import { figuresOf, formatDuration } from "../../../shared/status/figures.ts";

const DAY = 86_400_000;
const NOW = Date.parse("2026-12-01T08:00:00Z");

describe("figures", () => {
  it("counts done releases per UTC day over the last 7 days and the median claim duration", () => {
    const ended = [
      { grantedMs: NOW - 3_600_000, endedMs: NOW - 600_000, outcome: "done" }, // today, 50 min
      { grantedMs: NOW - DAY - 600_000, endedMs: NOW - DAY, outcome: "done" }, // yesterday, 10 min
      { grantedMs: NOW - DAY - 120_000, endedMs: NOW - DAY, outcome: "failed" }, // 2 min
      { grantedMs: NOW - 9 * DAY, endedMs: NOW - 8 * DAY, outcome: "done" }, // outside
    ];
    const f = figuresOf({ queueLength: 4, liveClaims: 1, ended }, NOW);
    expect(f.donePerDay).toHaveLength(7);
    expect(f.donePerDay.at(-1)).toEqual({ day: "2026-12-01", done: 1 });
    expect(f.donePerDay.at(-2)).toEqual({ day: "2026-11-30", done: 1 });
    expect(f.donePerDay[0]!.day).toBe("2026-11-25");
    expect(f.doneDailyMean).toBe(0.3);
    expect(f.medianClaimMs).toBe(600_000);
    expect(figuresOf({ queueLength: 0, liveClaims: 0, ended: [] }, NOW).medianClaimMs).toBeNull();
  });

  it("says durations as a person reads them", () => {
    expect(formatDuration(12_000)).toBe("12 s");
    expect(formatDuration(245_000)).toBe("4 min 5 s");
    expect(formatDuration(3 * 3_600_000 + 12 * 60_000)).toBe("3 h 12 min");
    expect(formatDuration(50 * 3_600_000)).toBe("2 d 2 h");
  });
});

describe("login settings", () => {
  const env = (extra: LoginEnv) => extra;

  it("names every missing or malformed setting, never a value", () => {
    const checked = loginSettings(env({ SESSION_SECRET: "short-secret-value" }));
    expect(checked.ok).toBe(false);
    const problems = checked.ok ? [] : checked.problems.join("; ");
    expect(problems).toContain("GITHUB_APP_CLIENT_ID is not set");
    expect(problems).toContain("GITHUB_APP_CLIENT_SECRET is not set");
    expect(problems).toContain("SESSION_SECRET must be at least 32 characters");
    expect(problems).not.toContain("short-secret-value");
  });

  it("derives GitHub's web address from the API URL unless GITHUB_WEB_URL says", () => {
    expect(webUrlOf(env({}))).toBe("https://github.com");
    expect(webUrlOf(env({ GITHUB_API_URL: "https://api.github.com" }))).toBe("https://github.com");
    expect(webUrlOf(env({ GITHUB_API_URL: "https://ghe.acme.dev/api/v3" }))).toBe(
      "https://ghe.acme.dev",
    );
    expect(webUrlOf(env({ GITHUB_API_URL: "http://127.0.0.1:8790" }))).toBe(
      "http://127.0.0.1:8790",
    );
    expect(
      webUrlOf(env({ GITHUB_API_URL: "https://api.x.dev", GITHUB_WEB_URL: "https://x.dev/" })),
    ).toBe("https://x.dev");
    const ok = loginSettings(
      env({
        GITHUB_APP_CLIENT_ID: "Iv1.abc",
        GITHUB_APP_CLIENT_SECRET: "s3cret",
        SESSION_SECRET: "x".repeat(64),
        PUBLIC_URL: "https://switchyard.example/",
      }),
    );
    expect(ok).toEqual({
      ok: true,
      settings: {
        clientId: "Iv1.abc",
        clientSecret: "s3cret",
        sessionSecret: "x".repeat(64),
        webUrl: "https://github.com",
        publicUrl: "https://switchyard.example",
      },
    });
  });
});
